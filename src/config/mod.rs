//! Graph configuration: which tables hold which labels and relationship types (`graph.toml`).

pub mod options;
pub(crate) mod reach;
pub mod rules;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One node label's table.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeTable {
    /// Lance dataset path, relative to the config file's folder.
    pub source: String,
    /// The node key column (integer or string).
    pub id: String,
    /// The key is a row identifier, not a property: it is left out of node values and
    /// `keys()`, and reading it as a property gives null.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub id_hidden: bool,
    /// Properties the dataset holds under another column name (property -> column).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, String>,
    /// Every label its nodes carry (`["Post", "Message"]`); by default the table's name alone
    /// (none for the table named `""`). A label several tables carry is their union:
    /// `(m:Message)` matches nodes of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
}

impl NodeTable {
    /// The labels of the table named `name`.
    pub fn labels_of(&self, name: &str) -> Vec<String> {
        match &self.labels {
            Some(ls) => ls.clone(),
            None if name.is_empty() => vec![],
            None => vec![name.to_string()],
        }
    }
}

/// The value a node's label column holds for a table with `labels`: the labels joined by
/// `:` (no label may contain one), which `split_labels` turns back.
pub fn label_tag<S: AsRef<str>>(labels: &[S]) -> String {
    let parts: Vec<&str> = labels.iter().map(|l| l.as_ref()).collect();
    parts.join(":")
}

/// The labels of a label column's value ([`label_tag`]).
pub fn split_labels(tag: &str) -> Vec<&str> {
    if tag.is_empty() {
        vec![]
    } else {
        tag.split(':').collect()
    }
}

/// One relationship table: a type between two labels.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelTable {
    #[serde(rename = "type")]
    pub rel_type: String,
    pub from: String,
    pub to: String,
    pub source: String,
    pub src: String,
    pub dst: String,
    /// Properties the dataset holds under another column name (property -> column).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, String>,
}

/// A validated graph configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphConfig {
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeTable>,
    #[serde(default)]
    pub relationships: Vec<RelTable>,
    /// Folder that relative sources resolve against (the config file's folder).
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// Where the config came from, for error messages.
    #[serde(skip)]
    pub origin: String,
    /// The state of the datasets to open (`GraphOptions::as_of`; `None`: the latest).
    #[serde(skip)]
    pub as_of: Option<options::AsOf>,
    /// Lance's own indexes over node properties (vector and full-text search), by the names
    /// queries give them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexDecl>,
}

/// What a declared index searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IndexKind {
    /// Nearest neighbours of a vector (`db.index.vector.queryNodes`).
    Vector,
    /// Words in a text (`db.index.fulltext.queryNodes`).
    Fulltext,
}

/// How a vector index compares vectors: Neo4j's two similarity functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum VectorMetric {
    #[default]
    Cosine,
    Euclidean,
}

/// The structure of a vector index Lance builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum VectorMethod {
    /// Partitions, each a graph of scalar-quantised vectors: high recall at low latency.
    #[default]
    IvfHnswSq,
    /// Partitions of product-quantised vectors: smallest.
    IvfPq,
    /// Partitions of the vectors as stored: exact within the partitions probed.
    IvfFlat,
}

/// `[[indexes]]`: a Lance index over one property of a node table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct IndexDecl {
    /// The name queries use (`'person_embedding'`).
    pub name: String,
    pub kind: IndexKind,
    /// The node table (its name under `[nodes]`); or, for an index over relationships,
    /// empty and [`Self::relationship`] set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table: String,
    /// The relationship type whose table it indexes (`from` / `to` name the table where
    /// several carry the type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relationship: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The property searched: a vector of floats (`vector`) or a string (`fulltext`).
    pub column: String,
    /// Vector indexes only (default cosine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<VectorMetric>,
    /// Vector indexes only (default `ivf_hnsw_sq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<VectorMethod>,
}

impl IndexDecl {
    /// An index of `kind` named `name` over property `column` of node table `table`.
    pub fn new(name: &str, kind: IndexKind, table: &str, column: &str) -> Self {
        Self {
            name: name.to_string(),
            kind,
            table: table.to_string(),
            column: column.to_string(),
            metric: None,
            method: None,
            relationship: None,
            from: None,
            to: None,
        }
    }

    /// The same index over the relationship table of `rel_type` from `from` to `to` instead.
    pub fn over_relationships(mut self, rel_type: &str, from: &str, to: &str) -> Self {
        self.table.clear();
        self.relationship = Some(rel_type.to_string());
        self.from = Some(from.to_string());
        self.to = Some(to.to_string());
        self
    }

    pub fn with_metric(mut self, metric: VectorMetric) -> Self {
        self.metric = Some(metric);
        self
    }

    pub fn with_method(mut self, method: VectorMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// An index from its `[[indexes]]` keys and their values, as front ends without TOML
    /// give them (Python's dicts).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let table: toml::Table = (pairs.into_iter())
            .map(|(k, v)| (k.to_string(), toml::Value::String(v.to_string())))
            .collect();
        table
            .try_into()
            .map_err(|e: toml::de::Error| Error::config("<indexes>", "-", e.message().to_string()))
    }

    /// The relationship tables (indexes into `relationships`) an index over relationships
    /// may name: those of its type, from and to its tables where given.
    pub fn relationship_tables(&self, relationships: &[RelTable]) -> Vec<usize> {
        let Some(t) = &self.relationship else {
            return vec![];
        };
        let fits = |given: &Option<String>, end: &str| given.as_deref().is_none_or(|g| g == end);
        (relationships.iter().enumerate())
            .filter(|(_, r)| &r.rel_type == t && fits(&self.from, &r.from) && fits(&self.to, &r.to))
            .map(|(i, _)| i)
            .collect()
    }

    /// The relationship table an index over relationships names (validation made it one).
    pub fn relationship_table(&self, relationships: &[RelTable]) -> Option<usize> {
        match self.relationship_tables(relationships).as_slice() {
            [i] => Some(*i),
            _ => None,
        }
    }

    /// What it indexes, for messages: `Person` or `:LIKES(Person->Post)`.
    pub fn target(&self) -> String {
        match &self.relationship {
            None => self.table.clone(),
            Some(t) => format!(
                ":{t}({}->{})",
                self.from.as_deref().unwrap_or("*"),
                self.to.as_deref().unwrap_or("*")
            ),
        }
    }

    pub fn metric(&self) -> VectorMetric {
        self.metric.unwrap_or_default()
    }

    pub fn method(&self) -> VectorMethod {
        self.method.unwrap_or_default()
    }
}

impl GraphConfig {
    /// Reads and validates a `graph.toml`, given as the file or as the folder holding it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let given = path.as_ref();
        let folder = given.is_dir().then(|| given.join("graph.toml"));
        let path = folder.as_deref().unwrap_or(given);
        let text = std::fs::read_to_string(path).map_err(|e| {
            let what = match (&folder, e.kind()) {
                (Some(_), std::io::ErrorKind::NotFound) => {
                    "the folder has no graph.toml (write one, or make the graph with `lance-csr import` or `generate`)".to_string()
                }
                _ => format!("cannot read: {e}"),
            };
            Error::config(path.display().to_string(), "-", what)
        })?;
        let base = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Self::from_toml(&text, &path.display().to_string(), base)
    }

    /// Parses and validates config text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str, base_dir: PathBuf) -> Result<Self> {
        let mut cfg: GraphConfig = toml::from_str(text).map_err(|e| {
            let key = e
                .span()
                .map(|s| {
                    let line = text[..s.start].matches('\n').count() + 1;
                    format!("line {line}: {}", text[s.clone()].trim())
                })
                .unwrap_or_else(|| "-".into());
            Error::config(origin, key, e.message().to_string())
        })?;
        cfg.base_dir = base_dir;
        cfg.origin = origin.to_string();
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn builder() -> GraphConfigBuilder {
        GraphConfigBuilder::default()
    }

    /// Checks what can be checked without opening the tables.
    pub fn validate(&self) -> Result<()> {
        let origin = if self.origin.is_empty() {
            "<builder>"
        } else {
            &self.origin
        };
        // The empty label (`[nodes.""]`) holds nodes without a label: `labels(n)` is `[]`.
        let mut sets: BTreeMap<Vec<String>, &str> = BTreeMap::new();
        for (label, n) in &self.nodes {
            let mut set = n.labels_of(label);
            for l in &set {
                if l.is_empty() || l.contains(':') {
                    return Err(Error::config(
                        origin,
                        format!("nodes.{label}.labels"),
                        format!("`{l}` can't be a label (empty, or holding ':')"),
                    ));
                }
            }
            set.sort();
            if set.windows(2).any(|w| w[0] == w[1]) {
                return Err(Error::config(
                    origin,
                    format!("nodes.{label}.labels"),
                    "a label is listed twice",
                ));
            }
            if let Some(other) = sets.insert(set, label) {
                return Err(Error::config(
                    origin,
                    format!("nodes.{label}.labels"),
                    format!("tables `{other}` and `{label}` carry the same labels; a node's labels must say which table holds it"),
                ));
            }
            if n.id.is_empty() {
                return Err(Error::config(
                    origin,
                    format!("nodes.{label}.id"),
                    "empty id column",
                ));
            }
            if n.source.is_empty() {
                return Err(Error::config(
                    origin,
                    format!("nodes.{label}.source"),
                    "empty source",
                ));
            }
        }
        for (i, r) in self.relationships.iter().enumerate() {
            let key = |k: &str| format!("relationships[{i}].{k}");
            if r.rel_type.is_empty() {
                return Err(Error::config(
                    origin,
                    key("type"),
                    "empty relationship type",
                ));
            }
            for (k, label) in [("from", &r.from), ("to", &r.to)] {
                if !self.nodes.contains_key(label) {
                    return Err(Error::config(
                        origin,
                        key(k),
                        format!(
                            "unknown label `{label}` in relationship {} (configured labels: {})",
                            r.rel_type,
                            self.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
            }
            if r.src.is_empty() || r.dst.is_empty() {
                return Err(Error::config(origin, key("src"), "empty endpoint column"));
            }
            if self.relationships[..i]
                .iter()
                .any(|o| o.rel_type == r.rel_type && o.from == r.from && o.to == r.to)
            {
                return Err(Error::config(
                    origin,
                    key("type"),
                    format!(
                        "duplicate relationship {}: {} -> {} is configured twice",
                        r.rel_type, r.from, r.to
                    ),
                ));
            }
        }
        self.validate_indexes(origin)
    }

    fn validate_indexes(&self, origin: &str) -> Result<()> {
        for (i, x) in self.indexes.iter().enumerate() {
            let key = |k: &str| format!("indexes[{i}].{k}");
            if x.name.is_empty() {
                return Err(Error::config(origin, key("name"), "empty index name"));
            }
            if self.indexes[..i].iter().any(|o| o.name == x.name) {
                return Err(Error::config(
                    origin,
                    key("name"),
                    format!("two indexes are named `{}`", x.name),
                ));
            }
            if x.relationship.is_some() {
                if !x.table.is_empty() {
                    return Err(Error::config(
                        origin,
                        key("table"),
                        "an index names a node table or a relationship type, not both",
                    ));
                }
                let tables = x.relationship_tables(&self.relationships);
                if tables.len() != 1 {
                    let why = match tables.len() {
                        0 => "no relationship table has that type (and those ends)",
                        _ => "several relationship tables have that type: give `from` and `to`",
                    };
                    return Err(Error::config(origin, key("relationship"), why));
                }
            } else if !self.nodes.contains_key(&x.table) {
                return Err(Error::config(
                    origin,
                    key("table"),
                    format!(
                        "unknown node table `{}` (configured: {})",
                        x.table,
                        self.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            if x.kind == IndexKind::Fulltext && (x.metric.is_some() || x.method.is_some()) {
                return Err(Error::config(
                    origin,
                    key("metric"),
                    "a full-text index has no metric or method (they are a vector index's)",
                ));
            }
        }
        Ok(())
    }

    /// Resolves a source path against the config's folder.
    pub fn resolve(&self, source: &str) -> PathBuf {
        let p = Path::new(source);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// Relationship tables of a type.
    pub fn rels_of_type<'a>(&'a self, t: &'a str) -> impl Iterator<Item = (usize, &'a RelTable)> {
        self.relationships
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.rel_type == t)
    }

    pub fn has_type(&self, t: &str) -> bool {
        self.relationships.iter().any(|r| r.rel_type == t)
    }

    /// The same graph with each node table named by its [`label_tag`] (relationships' ends
    /// renamed alike): what the label column of a node then holds names its table. The
    /// names a user gave stay in the error messages of `validate`, which runs first.
    pub fn named_by_labels(&self) -> GraphConfig {
        let tag = |name: &str| label_tag(&self.nodes[name].labels_of(name));
        let mut out = self.clone();
        out.nodes = self
            .nodes
            .iter()
            .map(|(name, n)| {
                let labels = n.labels_of(name);
                let table = NodeTable {
                    labels: Some(labels.clone()),
                    ..n.clone()
                };
                (label_tag(&labels), table)
            })
            .collect();
        for r in &mut out.relationships {
            if self.nodes.contains_key(&r.from) {
                r.from = tag(&r.from);
            }
            if self.nodes.contains_key(&r.to) {
                r.to = tag(&r.to);
            }
        }
        out
    }

    /// The TOML text of this configuration.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

/// Builds a [`GraphConfig`] in code.
#[derive(Debug, Default)]
pub struct GraphConfigBuilder {
    cfg: GraphConfig,
    duplicate: Option<String>,
}

impl GraphConfigBuilder {
    /// Marks `label`'s key as a row identifier (`NodeTable::id_hidden`).
    pub fn hidden_key(mut self, label: &str) -> Self {
        if let Some(n) = self.cfg.nodes.get_mut(label) {
            n.id_hidden = true;
        }
        self
    }

    pub fn node(mut self, label: &str, source: &str, id: &str) -> Self {
        if self.cfg.nodes.contains_key(label) {
            self.duplicate = Some(label.to_string());
        }
        self.cfg.nodes.insert(
            label.to_string(),
            NodeTable {
                source: source.into(),
                id: id.into(),
                id_hidden: false,
                ..Default::default()
            },
        );
        self
    }

    /// Gives `table` the labels `labels` (by default, its name).
    pub fn labels(mut self, table: &str, labels: &[&str]) -> Self {
        if let Some(n) = self.cfg.nodes.get_mut(table) {
            n.labels = Some(labels.iter().map(|l| l.to_string()).collect());
        }
        self
    }

    pub fn relationship(
        mut self,
        rel_type: &str,
        from: &str,
        to: &str,
        source: &str,
        src: &str,
        dst: &str,
    ) -> Self {
        self.cfg.relationships.push(RelTable {
            rel_type: rel_type.into(),
            from: from.into(),
            to: to.into(),
            source: source.into(),
            src: src.into(),
            dst: dst.into(),
            ..Default::default()
        });
        self
    }

    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cfg.base_dir = dir.into();
        self
    }

    /// Declares a vector or full-text index (`[[indexes]]`).
    pub fn index(mut self, index: IndexDecl) -> Self {
        self.cfg.indexes.push(index);
        self
    }

    pub fn build(self) -> Result<GraphConfig> {
        if let Some(l) = self.duplicate {
            return Err(Error::config(
                "<builder>",
                format!("nodes.{l}"),
                format!("duplicate label `{l}`"),
            ));
        }
        self.cfg.validate()?;
        Ok(self.cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[nodes.Person]
source = "person.lance"
id = "id"

[nodes.Forum]
source = "forum.lance"
id = "id"

[[relationships]]
type = "HAS_MEMBER"
from = "Forum"
to = "Person"
source = "forum_member.lance"
src = "src"
dst = "dst"
"#;

    #[test]
    fn parses_and_resolves() {
        let c = GraphConfig::from_toml(GOOD, "g.toml", PathBuf::from("/data")).unwrap();
        assert_eq!(c.nodes.len(), 2);
        assert_eq!(c.relationships[0].rel_type, "HAS_MEMBER");
        assert_eq!(
            c.resolve("person.lance"),
            PathBuf::from("/data/person.lance")
        );
        let again =
            GraphConfig::from_toml(&c.to_toml(), "g2.toml", PathBuf::from("/data")).unwrap();
        assert_eq!(again.nodes, c.nodes);
        assert_eq!(again.relationships, c.relationships);
    }

    #[test]
    fn unknown_label_names_file_key_and_label() {
        let bad = GOOD.replace("from = \"Forum\"", "from = \"Forun\"");
        let e = GraphConfig::from_toml(&bad, "g.toml", PathBuf::new()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("g.toml"), "{msg}");
        assert!(msg.contains("relationships[0].from"), "{msg}");
        assert!(msg.contains("unknown label `Forun`"), "{msg}");
    }

    #[test]
    fn duplicate_label_is_rejected() {
        let bad = format!("{GOOD}\n[nodes.Person]\nsource = \"x\"\nid = \"id\"\n");
        let msg = GraphConfig::from_toml(&bad, "g.toml", PathBuf::new())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("g.toml") && msg.contains("Person"), "{msg}");
        let msg = GraphConfig::builder()
            .node("A", "a", "id")
            .node("A", "b", "id")
            .build()
            .unwrap_err()
            .to_string();
        assert!(msg.contains("duplicate label `A`"), "{msg}");
    }

    #[test]
    fn labels_of_a_table_are_checked_and_name_it() {
        let cfg = GraphConfig::builder()
            .node("Post", "p", "id")
            .node("Comment", "c", "id")
            .labels("Post", &["Post", "Message"])
            .labels("Comment", &["Comment", "Message"])
            .relationship("REPLY_OF", "Comment", "Post", "r", "src", "dst")
            .build()
            .unwrap();
        let named = cfg.named_by_labels();
        let keys: Vec<&String> = named.nodes.keys().collect();
        assert_eq!(keys, ["Comment:Message", "Post:Message"]);
        let r = &named.relationships[0];
        assert_eq!(
            (r.from.as_str(), r.to.as_str()),
            ("Comment:Message", "Post:Message")
        );
        assert_eq!(
            named.named_by_labels(),
            named,
            "naming twice changes nothing"
        );
        assert_eq!(split_labels("Post:Message"), ["Post", "Message"]);
        assert!(split_labels("").is_empty());
        let bad = |labels: &[&str]| {
            GraphConfig::builder()
                .node("A", "a", "id")
                .node("B", "b", "id")
                .labels("B", labels)
                .build()
                .unwrap_err()
                .to_string()
        };
        assert!(
            bad(&["A"]).contains("carry the same labels"),
            "{}",
            bad(&["A"])
        );
        assert!(
            bad(&["B", "B"]).contains("listed twice"),
            "{}",
            bad(&["B", "B"])
        );
        assert!(
            bad(&["x:y"]).contains("can't be a label"),
            "{}",
            bad(&["x:y"])
        );
    }

    #[test]
    fn a_folder_stands_for_its_graph_toml() {
        let dir = tempfile::tempdir().unwrap();
        let msg = GraphConfig::from_file(dir.path()).unwrap_err().to_string();
        assert!(
            msg.contains("graph.toml") && msg.contains("no graph.toml"),
            "{msg}"
        );
        std::fs::write(dir.path().join("graph.toml"), GOOD).unwrap();
        let c = GraphConfig::from_file(dir.path()).unwrap();
        assert_eq!(c.base_dir, dir.path());
        assert_eq!(c.nodes.len(), 2);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let bad = GOOD.replace(
            "id = \"id\"\n\n[nodes.Forum]",
            "idd = \"id\"\n\n[nodes.Forum]",
        );
        let msg = GraphConfig::from_toml(&bad, "g.toml", PathBuf::new())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("idd"), "{msg}");
    }
}
