//! Graph rewrites on MATCH patterns, before DataFusion sees the plan.

pub mod branching;
pub mod pattern_order;
