//! The memory one evaluation of a function may build values with (half of `--memory-limit`,
//! else a quarter of the memory the process may have): read
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

/// The limit in `config`; without one, a quarter of the memory the process may have (a value
/// past it would fail to allocate and abort the process).
pub fn limit(config: &ConfigOptions) -> Option<usize> {
    config
        .extensions
        .get::<CypherOptions>()
        .map(|o| o.value_bytes_limit)
        .filter(|&l| l > 0)
        .or_else(|| *DEFAULT_BUDGET)
}

/// A quarter of the memory the process may have: half of it for the query, and half of that
/// for one value (what reads a value may copy it whole).
static DEFAULT_BUDGET: std::sync::LazyLock<Option<usize>> =
    std::sync::LazyLock::new(|| available_memory().map(|b| b / 4));

/// The memory the process may have: the machine's (Linux: /proc/meminfo), or less where its
/// control group (v2 `memory.max` of its group and the groups above, v1
/// `memory.limit_in_bytes`) or its resource limits (`RLIMIT_AS`, `RLIMIT_DATA`) allow less.
pub fn available_memory() -> Option<usize> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let kb: usize = info
                .lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some(kb * 1024)
        });
    [total, cgroup_limit(), rlimit()]
        .into_iter()
        .flatten()
        .min()
}

/// The tightest memory limit of the process's control group and those above it.
fn cgroup_limit() -> Option<usize> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read =
        |path: String| -> Option<usize> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    let mut limits = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let mut dir = std::path::PathBuf::from(path.trim_start_matches('/'));
        if controllers.is_empty() {
            // v2: every group up to the root.
            loop {
                let file = std::path::Path::new("/sys/fs/cgroup")
                    .join(&dir)
                    .join("memory.max");
                limits.extend(read(file.display().to_string()));
                if !dir.pop() {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            let file = std::path::Path::new("/sys/fs/cgroup/memory")
                .join(&dir)
                .join("memory.limit_in_bytes");
            limits.extend(read(file.display().to_string()));
        }
    }
    // v1 says "no limit" with a number near 2^63.
    limits.into_iter().filter(|&l| l < 1 << 60).min()
}

/// The process's address space and data segment limits, where set.
fn rlimit() -> Option<usize> {
    use rustix::process::{getrlimit, Resource};
    [Resource::As, Resource::Data]
        .into_iter()
        .filter_map(|r| getrlimit(r).current)
        .map(|b| b as usize)
        .min()
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
