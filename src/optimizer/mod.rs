//! lance-csr's own optimizer rules, run after DataFusion's (each can be switched off).

pub mod prune_csr_target_columns;
pub mod push_csr_target_filters;

pub use prune_csr_target_columns::PruneCsrTargetColumns;
pub use push_csr_target_filters::PushCsrTargetFilters;
