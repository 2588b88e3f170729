//! The memory one evaluation of a function may build values with (`--memory-limit`, else
//! half the machine's memory): read
//! by the functions whose output grows with their arguments' values rather than their sizes
//! (`range`), and by list comprehensions, through the session's config.

use datafusion::common::config::{ConfigExtension, ConfigOptions};
use datafusion::error::{DataFusionError, Result};

datafusion::common::extensions_options! {
    /// Cypher's settings the functions read at run time.
    pub struct CypherOptions {
        /// Most bytes one function evaluation (one batch) may build; 0: no limit.
        pub value_bytes_limit: usize, default = 0
    }
}

impl ConfigExtension for CypherOptions {
    const PREFIX: &'static str = "cypher";
}

/// The limit in `config`; without one, half the machine's memory (a value past it would fail
/// to allocate and abort the process).
pub fn limit(config: &ConfigOptions) -> Option<usize> {
    config
        .extensions
        .get::<CypherOptions>()
        .map(|o| o.value_bytes_limit)
        .filter(|&l| l > 0)
        .or_else(|| *MACHINE_HALF)
}

/// Half the physical memory, where the system says (Linux: /proc/meminfo).
static MACHINE_HALF: std::sync::LazyLock<Option<usize>> = std::sync::LazyLock::new(|| {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: usize = info
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024 / 2)
});

/// An error when `bytes` (what `what` would build) is over the limit in `config`: a
/// resources-exhausted error, which the session reports as the memory limit.
pub fn check(config: &ConfigOptions, bytes: usize, what: impl FnOnce() -> String) -> Result<()> {
    match limit(config) {
        Some(l) if bytes > l => Err(DataFusionError::ResourcesExhausted(format!(
            "{} would build {bytes} bytes of values",
            what()
        ))),
        _ => Ok(()),
    }
}
