//! The plan cache: a query's optimized plan (and its physical plan where that can run again)
//! by query text and parameter kinds, so that a repeated query skips parsing, binding,
//! optimizing and, for most short reads, physical planning. Scalar parameters stay
//! placeholders in the cached plan and are bound to each call's values
//! (`operators::params`); other parameters (lists, maps, nulls, SKIP / LIMIT counts) are
//! part of what the plan was built for, and a call with other values for them plans anew.

use crate::functions::value::Value;
use crate::operators::params::{ParamValues, Reuse};
use crate::planner::Params;
use arrow::datatypes::SchemaRef;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Entries each shard of a graph's plan cache holds (least recently used evicted first).
pub const PLAN_CACHE_ENTRIES: u64 = 1024;

/// What a cached plan is found by: the query text and the kind of each given parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanKey {
    text: Arc<str>,
    kinds: Vec<(String, Cow<'static, str>)>,
}

impl PlanKey {
    /// A prepared query passes the `Arc` it holds, so its key shares the text, not a copy.
    pub fn new(text: impl Into<Arc<str>>, params: &Params) -> Self {
        Self {
            text: text.into(),
            kinds: params.iter().map(|(k, v)| (k.clone(), kind(v))).collect(),
        }
    }
}

/// A parameter value's kind: values of one kind lower to the same placeholder type. Every
/// call of a cached query builds its key, so the common kinds are not allocated.
fn kind(v: &Value) -> Cow<'static, str> {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Int(_) => "int".into(),
        Value::Float(_) => "float".into(),
        Value::Str(_) => "string".into(),
        Value::List(_) => "list".into(),
        Value::Map(_) => "map".into(),
        Value::Temporal(t) => t.kind().name().into(),
        Value::Other(s) => s.data_type().to_string().into(),
    }
}

/// A planned query, ready to run with any parameter values of its key's kinds (and the
/// `baked` values).
#[derive(Debug)]
pub struct CachedPlan {
    /// The result's column names, as the query wrote them.
    pub columns: Vec<String>,
    pub schema: SchemaRef,
    /// Parameters the plan was built for by value, with those values.
    pub baked: Vec<(String, Option<Value>)>,
    /// The optimized logical plan (placeholders for scalar parameters).
    pub logical: LogicalPlan,
    /// The physical plan, where it can run again ([`Reuse::Physical`]).
    pub physical: Option<Arc<dyn ExecutionPlan>>,
    pub reuse: Reuse,
}

impl CachedPlan {
    /// Whether a call with `params` may run this plan.
    pub fn serves(&self, params: &Params) -> bool {
        self.baked.iter().all(|(k, v)| params.get(k) == v.as_ref())
    }
}

/// The values a call binds a cached plan's placeholders to: its scalar parameters.
pub fn param_values(params: &Params) -> crate::Result<ParamValues> {
    let mut values = std::collections::HashMap::new();
    for (k, v) in params {
        if matches!(
            v,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
        ) {
            values.insert(format!("${k}"), v.to_scalar()?);
        }
    }
    Ok(ParamValues(values))
}

/// One `T` per thread slot, each on cache lines of its own: a thread takes a slot the first
/// time it asks (in that order) and uses only that slot's `T`, so concurrent callers (Python
/// threads, a server's workers, several tasks) share no plan, no reference count and no
/// lock. On two cores that sharing cost a third of a short read's time. Threads past the
/// slot count share slots.
pub struct PerThread<T> {
    slots: Vec<Slot<T>>,
}

#[repr(align(128))]
struct Slot<T>(T);

/// At most this many slots.
const MAX_SLOTS: usize = 16;

/// This thread's slot: 0 for the first thread that asks, 1 for the next, ...
fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.with(|s| *s)
}

impl<T> PerThread<T> {
    /// Twice as many slots as cores (at most [`MAX_SLOTS`]), each made by `make`.
    pub fn new(mut make: impl FnMut() -> T) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            slots: (0..(2 * cores).clamp(1, MAX_SLOTS))
                .map(|_| Slot(make()))
                .collect(),
        }
    }

    /// This thread's `T`.
    pub fn get(&self) -> &T {
        &self.slots[self.index()].0
    }

    /// Which slot is this thread's.
    pub fn index(&self) -> usize {
        thread_slot() % self.slots.len()
    }

    /// Every slot's `T`.
    pub fn all(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().map(|s| &s.0)
    }
}

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        Self::new(T::default)
    }
}

/// A graph's plan cache, a shard per thread slot ([`PerThread`]): each thread runs plans it
/// made itself. A shard plans what it lacks on its own, so a query repeated from `n` threads
/// is planned up to `n` times and held as often.
pub struct PlanCache {
    shards: PerThread<moka::sync::Cache<PlanKey, Arc<CachedPlan>>>,
}

impl PlanCache {
    /// A cache of up to `entries` plans per shard.
    pub fn new(entries: u64) -> Self {
        Self {
            shards: PerThread::new(|| {
                moka::sync::Cache::builder()
                    .max_capacity(entries)
                    .eviction_policy(moka::policy::EvictionPolicy::lru())
                    .build()
            }),
        }
    }

    /// The plan for `key` that serves `params`, from this thread's shard.
    pub fn get(&self, key: &PlanKey, params: &Params) -> Option<Arc<CachedPlan>> {
        self.shards.get().get(key).filter(|p| p.serves(params))
    }

    pub fn insert(&self, key: PlanKey, plan: Arc<CachedPlan>) {
        self.shards.get().insert(key, plan);
    }
}

/// Where a query's plan came from (EXPLAIN's `== plan cache ==`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// The graph has no plan cache (`--no-cache`).
    Off,
    /// Planned now and kept.
    Miss(Reuse),
    /// Found in the cache.
    Hit(Reuse),
}

impl fmt::Display for CacheUse {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let how = |r: &Reuse| {
            match r {
            Reuse::Physical => "the physical plan runs again, parameters bound as it starts",
            Reuse::Logical => {
                "the optimized plan is bound to the parameters and planned physically per run"
            }
            Reuse::None => {
                "not reusable (a shared subplan or a function whose value depends on when it runs): planned per run"
            }
        }
        };
        match self {
            CacheUse::Off => write!(f, "off"),
            CacheUse::Miss(Reuse::None) => write!(f, "miss: {}", how(&Reuse::None)),
            CacheUse::Miss(r) => write!(f, "miss: planned and cached; {}", how(r)),
            CacheUse::Hit(r) => write!(f, "hit: {}", how(r)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CachedPlan, PlanCache, PlanKey};
    use crate::operators::params::Reuse;
    use crate::{param, Graph, Params};
    use std::sync::Arc;

    fn plan() -> Arc<CachedPlan> {
        let empty = datafusion::logical_expr::LogicalPlanBuilder::empty(false)
            .build()
            .unwrap();
        Arc::new(CachedPlan {
            columns: vec![],
            schema: Arc::new(arrow::datatypes::Schema::empty()),
            baked: vec![],
            logical: empty,
            physical: None,
            reuse: Reuse::Logical,
        })
    }

    /// Each thread finds the plans it put (in its own shard, or one it shares).
    #[test]
    fn threads_find_their_plans() {
        let cache = PlanCache::new(4);
        let none = Params::new();
        let keys: Vec<PlanKey> = (0..8)
            .map(|i| PlanKey::new(format!("RETURN {i}"), &none))
            .collect();
        std::thread::scope(|s| {
            for k in &keys {
                let (cache, none) = (&cache, &none);
                s.spawn(move || {
                    assert!(cache.get(k, none).is_none());
                    cache.insert(k.clone(), plan());
                    assert!(cache.get(k, none).is_some());
                });
            }
        });
    }

    /// A thread keeps its slot, and what it puts there is found there.
    #[test]
    fn threads_keep_their_slots() {
        let slots = super::PerThread::new(std::sync::Mutex::<Vec<usize>>::default);
        let n = slots.all().count();
        assert!(n >= 2);
        let taken: Vec<usize> = std::thread::scope(|s| {
            let ts: Vec<_> = (0..n)
                .map(|t| {
                    let slots = &slots;
                    s.spawn(move || {
                        let at = slots.index();
                        slots.get().lock().unwrap().push(t);
                        assert_eq!(slots.index(), at);
                        at
                    })
                })
                .collect();
            ts.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (i, slot) in slots.all().enumerate() {
            let mut want: Vec<usize> = (0..n).filter(|&t| taken[t] == i).collect();
            let mut got = slot.lock().unwrap().clone();
            got.sort();
            want.sort();
            assert_eq!(got, want, "slot {i}");
        }
    }

    /// Threads sharing a prepared query plan it each for themselves and answer alike.
    #[test]
    fn prepared_queries_plan_per_thread() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(Graph::sample()).unwrap();
        let p = g
            .prepare("MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN f.id ORDER BY f.id")
            .unwrap();
        let runs: Vec<_> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..2)
                .map(|_| {
                    let (rt, g, p) = (&rt, &g, &p);
                    s.spawn(move || {
                        let answers = (1..=3)
                            .map(|id| {
                                let params = Params::from([("id".to_string(), param(id))]);
                                crate::rows(&rt.block_on(p.query(g, &params)).unwrap())
                            })
                            .collect::<Vec<_>>();
                        (answers, p.planned_slots().1)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(runs[0].0, runs[1].0);
        assert_eq!(
            runs[0].0[0],
            vec![vec!["2".to_string()], vec!["3".to_string()]]
        );
        // A plan in each thread's slot and nowhere else.
        let mut used = vec![runs[0].1, runs[1].1];
        used.sort();
        used.dedup();
        assert_eq!(p.planned_slots().0, used);
    }

    /// The plan-cache line EXPLAIN ends with, for `q` run with `params`.
    async fn cache_line(g: &Graph, q: &str, params: &Params) -> String {
        let e = g.explain(q, params).await.unwrap();
        let at = e.find("== plan cache ==\n").expect("a plan cache section");
        e[at..].lines().nth(1).unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn plans_are_kept_as_far_as_their_parameters_allow() {
        let g = Graph::sample().await.unwrap();
        let id = Params::from([("id".to_string(), param(1i64))]);
        let other = Params::from([("id".to_string(), param(2i64))]);
        // Parameters only inside the graph operators: the physical plan is kept, and serves
        // other values of the same kind.
        let hop = "MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN f.firstName";
        assert!(cache_line(&g, hop, &id)
            .await
            .starts_with("miss: planned and cached; the physical plan"));
        assert!(cache_line(&g, hop, &other)
            .await
            .starts_with("hit: the physical plan"));
        // Another kind of value: another plan.
        let s = Params::from([("id".to_string(), param("1"))]);
        assert!(cache_line(&g, hop, &s).await.starts_with("miss"));
        // A parameter in DataFusion's filters and projections: the physical plan is kept.
        let filtered = "MATCH (p:Person) WHERE p.age > $id RETURN p.id, p.age - $id ORDER BY p.id";
        assert!(cache_line(&g, filtered, &id)
            .await
            .starts_with("miss: planned and cached; the physical plan"));
        assert!(cache_line(&g, filtered, &other)
            .await
            .starts_with("hit: the physical plan"));
        // Elsewhere in DataFusion's nodes (a sort key): the optimized plan is kept.
        let sorted = "MATCH (p:Person) RETURN p.id ORDER BY p.age * $id, p.id";
        assert!(cache_line(&g, sorted, &id)
            .await
            .contains("the optimized plan is bound"));
        assert!(cache_line(&g, sorted, &other)
            .await
            .starts_with("hit: the optimized plan"));
        // A value that depends on when it runs: planned per run.
        let random = "MATCH (p:Person) WHERE rand() < 2 RETURN count(*)";
        for _ in 0..2 {
            assert!(cache_line(&g, random, &Params::new())
                .await
                .starts_with("miss: not reusable"));
        }
        // A LIMIT count is part of the plan: another count plans anew.
        let limited = "MATCH (p:Person) RETURN p.id LIMIT $id";
        assert!(cache_line(&g, limited, &id).await.starts_with("miss"));
        assert!(cache_line(&g, limited, &id).await.starts_with("hit"));
        assert!(cache_line(&g, limited, &other).await.starts_with("miss"));
        // Switched off.
        let off = g
            .with_options(crate::GraphOptions {
                no_plan_cache: true,
                ..g.options().clone()
            })
            .await
            .unwrap();
        assert_eq!(cache_line(&off, hop, &id).await, "off");
    }
}
