//! Graph rewrites on MATCH patterns, before DataFusion sees the plan. In the order a MATCH
//! meets them:
//!
//! 1. `key_lookup`: key equalities of WHERE into property maps (a lookup, not a scan);
//! 2. `rematch`: relationships bound earlier matched again through fresh variables;
//! 3. `path_names`: every element of a named path named;
//! 4. (binding the MATCH into a `QueryGraph`)
//! 5. `branching`: one branch per consistent label / table combination;
//! 6. `pattern_order`: each branch re-rooted at its most selective node (when switched on).
//!
//! 1-3 take and return the MATCH's AST, 5-6 query graphs.

pub mod branching;
pub mod key_lookup;
pub mod path_names;
pub mod pattern_order;
pub mod rematch;

#[cfg(test)]
pub(crate) mod test_util {
    use cypher::ast;

    /// The sample graph (for its catalog).
    pub fn sample() -> crate::session::Graph {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(crate::session::Graph::sample()).unwrap()
    }

    /// The `n`th clause of `q`, a MATCH.
    pub fn nth_match(q: &str, n: usize) -> ast::Match {
        let q = cypher::parse_query(q).unwrap();
        match &q.first.clauses[n] {
            ast::Clause::Match(m) => m.clone(),
            other => panic!("not a MATCH: {other}"),
        }
    }

    /// `m` as Cypher text.
    pub fn text(m: &ast::Match) -> String {
        ast::Clause::Match(m.clone()).to_string()
    }

    /// The first clause of `q` bound against `catalog` (no variables bound before).
    pub fn bound_match(catalog: &crate::catalog::Catalog, q: &str) -> crate::binder::QueryGraph {
        let none = |_: &str| None;
        let binder = crate::binder::Binder {
            catalog,
            lenient: false,
            bound: &none,
        };
        binder.bind_match(&nth_match(q, 0)).unwrap()
    }
}
