//! The graphs this process has opened for distributed plans, by path: the client registers the
//! graph it plans over; the scheduler and the executors open a graph the first time a plan
//! names it (its tables and its persisted `_csr/` indexes) and keep it for later plans.
//! A plan names the state of every table it was planned over; a graph opened at another state
//! is opened again once, and a plan still not matching is refused.

use crate::catalog::Catalog;
use crate::csr::registry::open_indexes;
use crate::csr::{CsrIndex, GraphIndexes, NodeKeys, TableColumns};
use crate::error::{Error, Result};
use crate::GraphConfig;
use datafusion::catalog::Session;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

/// A graph as opened by this process.
#[derive(Debug)]
pub struct Opened {
    /// The `graph.toml` path plans name it by.
    pub path: String,
    pub catalog: Arc<Catalog>,
    pub indexes: Arc<GraphIndexes>,
}

static GRAPHS: LazyLock<Mutex<HashMap<String, Arc<Opened>>>> = LazyLock::new(Default::default);

fn graphs() -> std::sync::MutexGuard<'static, HashMap<String, Arc<Opened>>> {
    GRAPHS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes an opened graph known (the client's, whose plans name it by `path`).
pub fn register(path: &str, catalog: Arc<Catalog>, indexes: Arc<GraphIndexes>) {
    let opened = Arc::new(Opened {
        path: path.to_string(),
        catalog,
        indexes,
    });
    graphs().insert(path.to_string(), opened);
}

/// Forgets a graph (the next plan naming it opens it again).
#[cfg(test)]
pub fn forget(path: &str) {
    graphs().remove(path);
}

/// The graph at `path` with its tables in the state `versions` (`Catalog::versions`): the one
/// opened before, or opened now.
pub async fn resolve(
    path: &str,
    versions: &[Option<u64>],
    state: &dyn Session,
) -> Result<Arc<Opened>> {
    let known = graphs().get(path).cloned();
    if let Some(g) = known.filter(|g| g.catalog.versions() == versions) {
        return Ok(g);
    }
    let config = GraphConfig::from_file(path)?;
    let catalog = Arc::new(Catalog::open(config, &mut BTreeMap::new()).await?);
    check_versions(path, &catalog, versions)?;
    let (indexes, _) = open_indexes(&catalog, state, None, true, &mut |_| {}).await?;
    let opened = Arc::new(Opened {
        path: path.to_string(),
        catalog,
        indexes: Arc::new(indexes),
    });
    graphs().insert(path.to_string(), opened.clone());
    Ok(opened)
}

fn check_versions(path: &str, catalog: &Catalog, want: &[Option<u64>]) -> Result<()> {
    let have = catalog.versions();
    let names = catalog
        .nodes
        .keys()
        .map(|l| format!("node table {l}"))
        .chain(catalog.rels.iter().map(|r| {
            format!(
                "relationship table {} ({} -> {})",
                r.cfg.rel_type, r.cfg.from, r.cfg.to
            )
        }));
    if have.len() != want.len() {
        return Err(Error::storage(format!(
            "graph {path}: the plan was made for a graph of {} tables, this process opened {}",
            want.len(),
            have.len()
        )));
    }
    for ((name, h), w) in names.zip(&have).zip(want) {
        if h != w {
            return Err(Error::storage(format!(
                "graph {path}: the {name} changed since the plan was made (the plan reads \
                 state {}, this process sees {}); run the query again",
                stamp(w),
                stamp(h)
            )));
        }
    }
    Ok(())
}

fn stamp(v: &Option<u64>) -> String {
    v.map_or("in memory".to_string(), |v| format!("{v:016x}"))
}

/// What a plan's shared data is, in terms of the graph that holds it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Part {
    /// The CSR index of relationship table `rel` (both directions).
    Csr(usize),
    /// The node keys of a label.
    Keys(String),
    /// The loaded columns of a label's node table.
    NodeColumns(String),
    /// The loaded columns of relationship table `rel`.
    RelColumns(usize),
}

/// The opened graph holding `found`, and where.
fn locate(found: impl Fn(&Opened) -> Option<Part>) -> Option<(Arc<Opened>, Part)> {
    graphs()
        .values()
        .find_map(|g| found(g).map(|p| (g.clone(), p)))
}

pub fn locate_csr(index: &Arc<CsrIndex>) -> Option<(Arc<Opened>, Part)> {
    locate(|g| {
        let loaded = g
            .indexes
            .csr
            .iter()
            .map(|c| c.as_ref().and_then(|c| c.loaded()));
        loaded
            .enumerate()
            .find(|(_, c)| c.as_ref().is_some_and(|c| Arc::ptr_eq(c, index)))
            .map(|(i, _)| Part::Csr(i))
    })
}

pub fn locate_keys(keys: &Arc<NodeKeys>) -> Option<(Arc<Opened>, Part)> {
    locate(|g| {
        g.indexes
            .keys
            .iter()
            .find(|(_, k)| k.loaded().is_some_and(|k| Arc::ptr_eq(&k, keys)))
            .map(|(l, _)| Part::Keys(l.clone()))
    })
}

pub fn locate_columns(cols: &Arc<TableColumns>) -> Option<(Arc<Opened>, Part)> {
    locate(|g| {
        let node = g.indexes.node_columns.iter();
        if let Some((l, _)) = node.into_iter().find(|(_, c)| Arc::ptr_eq(c, cols)) {
            return Some(Part::NodeColumns(l.clone()));
        }
        let rels = g.indexes.rel_columns.iter();
        rels.enumerate()
            .find(|(_, c)| Arc::ptr_eq(c, cols))
            .map(|(i, _)| Part::RelColumns(i))
    })
}

impl Opened {
    fn missing(&self, part: &Part) -> Error {
        Error::storage(format!(
            "graph {}: this process has no {part:?} (the index was not built or the table \
             is not there)",
            self.path
        ))
    }

    pub fn csr(&self, part: &Part) -> Result<Arc<CsrIndex>> {
        match part {
            Part::Csr(i) => self.indexes.csr(*i),
            _ => None,
        }
        .ok_or_else(|| self.missing(part))
    }

    pub fn keys(&self, part: &Part) -> Result<Arc<NodeKeys>> {
        match part {
            Part::Keys(l) => self.indexes.keys(l),
            _ => None,
        }
        .ok_or_else(|| self.missing(part))
    }

    pub fn columns(&self, part: &Part) -> Result<Arc<TableColumns>> {
        match part {
            Part::NodeColumns(l) => self.indexes.node_columns.get(l).cloned(),
            Part::RelColumns(i) => self.indexes.rel_columns.get(*i).cloned(),
            _ => None,
        }
        .ok_or_else(|| self.missing(part))
    }
}
