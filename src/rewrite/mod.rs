//! Graph rewrites on MATCH patterns, before DataFusion sees the plan.

pub mod pattern_order;
