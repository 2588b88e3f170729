//! The integration tests, as one binary (DataFusion and Lance are linked once, not once per
//! file). Each module is one suite; `cargo test --test integration <module>::` runs one.

mod common;

mod bad_input;
mod cases;
mod cli;
#[cfg(feature = "distributed")]
mod distributed;
mod equivalence;
mod follow;
mod generated;
mod import;
mod index;
mod ldbc;
mod limit;
mod limits;
mod lsqb;
mod optimizer;
mod probes;
mod shortest;
mod tck;
mod time_travel;
mod vectors;
mod verify;
