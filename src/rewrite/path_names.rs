//! Named paths' elements named: every anonymous node and relationship of a named path gets
//! an internal name, so the MATCH binds and lowers as usual and the path is the bindings of
//! its elements; the paths come out beside the MATCH, which no longer names them.
//!
//! ```text
//! before:  MATCH p = (a)-[:KNOWS]->()
//! after:   MATCH (a)-[__pr1:KNOWS]->(__pn2)     p: [a, __pr1, __pn2]
//! ```

use cypher::ast;

/// A named path: its name and its elements' variables (node, relationship, node, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct PathElements {
    pub name: String,
    pub elems: Vec<String>,
}

/// `m` with every element of its named paths named, and the paths without their names
/// (the elements as written, in order).
pub fn name_path_elements(
    m: &ast::Match,
    fresh: &mut dyn FnMut(&str) -> String,
) -> (ast::Match, Vec<PathElements>) {
    let mut m = m.clone();
    let mut named = Vec::new();
    for p in &mut m.patterns {
        let Some(name) = p.name.take() else { continue };
        let mut elems = Vec::new();
        let name_node = |n: &mut ast::NodePattern, fresh: &mut dyn FnMut(&str) -> String| {
            let v = n
                .var
                .get_or_insert_with(|| ast::Ident::new(fresh("pn"), n.span));
            v.name.clone()
        };
        elems.push(name_node(&mut p.start, fresh));
        for (r, n) in &mut p.steps {
            let v = r
                .var
                .get_or_insert_with(|| ast::Ident::new(fresh("pr"), r.span));
            elems.push(v.name.clone());
            elems.push(name_node(n, fresh));
        }
        named.push(PathElements {
            name: name.name,
            elems,
        });
    }
    (m, named)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, text};

    #[test]
    fn every_element_of_a_named_path_is_named() {
        let m = nth_match(
            "MATCH p = (a)-[:KNOWS]->()<-[r]-(:Person), (x)-->(y) RETURN p",
            0,
        );
        let mut names = crate::rewrite::Names::default();
        let (m, paths) = name_path_elements(&m, &mut |what| names.fresh(what));
        assert_eq!(
            text(&m),
            "MATCH (a)-[__pr1:KNOWS]->(__pn2)<-[r]-(__pn3:Person), (x)-[]->(y)"
        );
        assert_eq!(
            paths,
            vec![PathElements {
                name: "p".into(),
                elems: ["a", "__pr1", "__pn2", "r", "__pn3"]
                    .map(String::from)
                    .to_vec(),
            }]
        );
    }
}
