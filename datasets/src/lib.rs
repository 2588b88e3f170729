//! Graph datasets for lance-csr as Arrow tables: a deterministic LDBC-SNB-like social network
//! generator ([`social`]) and the small hand-written sample graph of the demo ([`sample`]).
//!
//! Every relationship table has `src` and `dst` columns holding the endpoint node ids.

pub mod sample;
pub mod social;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

/// LDBC's label hierarchy: posts and comments are messages, cities and countries places.
pub fn label_hierarchy(tables: &mut [Table]) {
    for t in tables {
        if let TableKind::Node {
            label,
            extra_labels,
            ..
        } = &mut t.kind
        {
            match label.as_str() {
                "Post" | "Comment" => extra_labels.push("Message".into()),
                "City" | "Country" => extra_labels.push("Place".into()),
                _ => {}
            }
        }
    }
}

/// What a table holds.
#[derive(Debug, Clone, PartialEq)]
pub enum TableKind {
    Node {
        /// The table's label, which relationship tables name as their ends.
        label: String,
        id: String,
        /// Labels its nodes carry besides `label` (`Message` on posts and comments).
        extra_labels: Vec<String>,
    },
    Rel {
        rel_type: String,
        from: String,
        to: String,
    },
}

/// One generated table: a node label or one (type, from, to) relationship table.
#[derive(Debug, Clone)]
pub struct Table {
    /// File stem for the dataset (`person`, `person_knows_person`).
    pub name: String,
    pub kind: TableKind,
    pub batch: RecordBatch,
}

impl Table {
    pub fn schema(&self) -> SchemaRef {
        self.batch.schema()
    }

    pub fn node(label: &str, batch: RecordBatch) -> Self {
        Self {
            name: label.to_lowercase(),
            kind: TableKind::Node {
                label: label.into(),
                id: "id".into(),
                extra_labels: vec![],
            },
            batch,
        }
    }

    pub fn rel(rel_type: &str, from: &str, to: &str, batch: RecordBatch) -> Self {
        Self {
            name: format!(
                "{}_{}_{}",
                from.to_lowercase(),
                rel_type.to_lowercase(),
                to.to_lowercase()
            ),
            kind: TableKind::Rel {
                rel_type: rel_type.into(),
                from: from.into(),
                to: to.into(),
            },
            batch,
        }
    }
}
