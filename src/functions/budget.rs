//! The memory one evaluation of a function may build values with (`--memory-limit`): read
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

/// The limit in `config`, if one is set.
pub fn limit(config: &ConfigOptions) -> Option<usize> {
    config
        .extensions
        .get::<CypherOptions>()
        .map(|o| o.value_bytes_limit)
        .filter(|&l| l > 0)
}

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
