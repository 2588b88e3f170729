//! Graph operators: logical nodes (`CsrExpand`, `NodeLookup`), their physical operators, and the
//! `ExtensionPlanner` that turns one into the other.

pub mod count_paths;
pub mod count_paths_exec;
pub mod csr_expand;
pub mod csr_expand_exec;
pub mod node_lookup;
pub mod node_lookup_exec;
pub mod planner;
pub mod var_length;
pub mod var_length_exec;

use csr_expand::TakeSpec;

/// `b[b__id*, b__name]`: the output columns of a take, `*` marking the key.
pub fn display_cols(spec: &TakeSpec, mark_key: bool) -> String {
    let cols: Vec<String> = spec
        .take
        .iter()
        .map(|&i| {
            let star = if mark_key && spec.key == Some(i) {
                "*"
            } else {
                ""
            };
            format!("{}{star}", spec.all[i].1)
        })
        .collect();
    format!("{}[{}]", spec.var, cols.join(", "))
}
