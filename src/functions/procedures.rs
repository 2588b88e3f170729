//! The procedures a query can CALL: Lance's vector and full-text indexes searched under
//! Neo4j's names, so that queries written for Neo4j run unchanged.

use crate::config::IndexKind;

/// A procedure the engine answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Procedure {
    /// `db.index.vector.queryNodes(indexName, k, vector) :: (node, score)`: the `k` nodes
    /// whose vectors are nearest, most similar first.
    VectorQueryNodes,
    /// `db.index.fulltext.queryNodes(indexName, queryString [, options]) :: (node, score)`:
    /// the nodes whose text matches, best first.
    FulltextQueryNodes,
    /// `db.index.vector.queryRelationships(indexName, k, vector) :: (relationship, score)`.
    VectorQueryRelationships,
    /// `db.index.fulltext.queryRelationships(indexName, queryString [, options])
    /// :: (relationship, score)`.
    FulltextQueryRelationships,
}

/// Every procedure, by name (names are case-sensitive, as in Neo4j).
const ALL: &[(&str, Procedure)] = &[
    ("db.index.vector.queryNodes", Procedure::VectorQueryNodes),
    (
        "db.index.fulltext.queryNodes",
        Procedure::FulltextQueryNodes,
    ),
    (
        "db.index.vector.queryRelationships",
        Procedure::VectorQueryRelationships,
    ),
    (
        "db.index.fulltext.queryRelationships",
        Procedure::FulltextQueryRelationships,
    ),
];

impl Procedure {
    pub fn lookup(name: &str) -> Option<Self> {
        ALL.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// The names of every procedure, for messages.
    pub fn names() -> Vec<&'static str> {
        ALL.iter().map(|(n, _)| *n).collect()
    }

    pub fn name(self) -> &'static str {
        ALL.iter()
            .find(|(_, p)| *p == self)
            .map(|(n, _)| *n)
            .expect("every procedure is listed")
    }

    /// The arguments' names, then how many of them may be left out at the end.
    pub fn parameters(self) -> (&'static [&'static str], usize) {
        match self.index_kind() {
            IndexKind::Vector => (&["indexName", "numberOfNearestNeighbours", "query"], 0),
            IndexKind::Fulltext => (&["indexName", "queryString", "options"], 1),
        }
    }

    /// The outputs, in order: a node or relationship, then a float.
    pub fn outputs(self) -> &'static [&'static str] {
        match self.on_relationships() {
            false => &["node", "score"],
            true => &["relationship", "score"],
        }
    }

    /// Whether it searches relationships (else nodes).
    pub fn on_relationships(self) -> bool {
        matches!(
            self,
            Procedure::VectorQueryRelationships | Procedure::FulltextQueryRelationships
        )
    }

    /// The kind of index the procedure searches.
    pub fn index_kind(self) -> IndexKind {
        match self {
            Procedure::VectorQueryNodes | Procedure::VectorQueryRelationships => IndexKind::Vector,
            Procedure::FulltextQueryNodes | Procedure::FulltextQueryRelationships => {
                IndexKind::Fulltext
            }
        }
    }

    /// `CALL name(a, b)` in the signature's words, for errors.
    pub fn signature(self) -> String {
        let (params, optional) = self.parameters();
        let required = params.len() - optional;
        let args: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, p)| match i < required {
                true => p.to_string(),
                false => format!("[{p}]"),
            })
            .collect();
        format!(
            "{}({}) :: ({})",
            self.name(),
            args.join(", "),
            self.outputs().join(", ")
        )
    }
}
