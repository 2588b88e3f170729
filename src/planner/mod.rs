//! Planner: lowers a bound query whose MATCHes the rewrites prepared
//! (`rewrite::clause::Rewritten`) to a DataFusion LogicalPlan.
//!
//! One walk over the clauses: each clause takes the plan so far and the variables in scope
//! ([`State`]) and returns the next. Each MATCH the query writes comes prepared as a
//! `MatchPlan` (split where its parts are lowered apart; each part rewritten, bound,
//! branched, re-rooted, resolved), lowered as it is. Hops run as joins here, or on the CSR
//! indexes.

pub mod branch;
mod call;
pub mod clause;
mod comprehension;
mod csr_hop;
pub mod expr;
mod identity_lists;
pub mod path;
pub mod pattern;
mod projection;
mod scan;
pub mod scope;
mod shortest;
mod subquery;
mod var_length;

use crate::binder::names;
use crate::binder::query::BoundQuery;
use crate::catalog::{Catalog, NodeInfo, RelInfo};
use crate::config::RelTable;
use crate::error::{Error, Result};
use crate::functions::value::Value;
use crate::rewrite::clause::{MatchPlan, Rewritten};
use crate::rewrite::Names;
use crate::sem_err;
use crate::storage::{TableHandle, ROW_ID};
use arrow::datatypes::{DataType, Field, Schema};
use cypher::ast;
use cypher::Span;
use datafusion::common::DFSchema;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder};
use scope::{Entities, Scope};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use crate::config::options::PlannerOptions;

/// Query parameters: name -> value.
pub type Params = BTreeMap<String, Value>;

/// The plan built so far and the variables it binds.
#[derive(Debug, Clone)]
pub struct State {
    pub plan: LogicalPlan,
    pub scope: Scope,
    /// The plan is the single empty row a query starts from.
    pub unit: bool,
}

impl State {
    /// The single empty row a query (or an uncorrelated subquery) starts from.
    pub fn unit() -> Result<Self> {
        Ok(Self {
            plan: LogicalPlanBuilder::empty(true).build()?,
            scope: Scope::default(),
            unit: true,
        })
    }

    /// The plan's column names; none for the single empty row a query starts from.
    pub fn columns(&self) -> Vec<String> {
        if self.unit {
            return vec![];
        }
        self.plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// A lowered query: its plan and the result column names (Cypher's, in order).
#[derive(Debug, Clone)]
pub struct Lowered {
    pub plan: LogicalPlan,
    pub columns: Vec<String>,
    /// What the graph rewrites did, for EXPLAIN.
    pub notes: Vec<String>,
    /// The long list parameters the plan names (held while this lives).
    pub held: Vec<Arc<crate::functions::held::Held>>,
}

pub struct Lowerer<'c> {
    pub catalog: &'c Catalog,
    /// Present in CSR mode: hops covered by an index become `CsrExpand`.
    pub indexes: Option<&'c crate::csr::GraphIndexes>,
    /// The parameters the query reads, as the literals that write them (from the bound
    /// query's slots; lowered like literals).
    pub params: BTreeMap<String, ast::Expr>,
    /// Long lists among them, as Arrow lists (their literal is the parameter itself).
    pub(crate) compact_params: BTreeMap<String, datafusion::common::ScalarValue>,
    /// Those the plan names as variables, held for its physical planning.
    held: std::cell::RefCell<BTreeMap<String, Arc<crate::functions::held::Held>>>,
    /// The query's CALLs, bound.
    pub(crate) calls: Vec<crate::binder::call::BoundCall>,
    /// Lowering a plan to be cached: scalar parameters (number, string, boolean) become
    /// typed placeholders, bound to each execution's values (`operators::params`).
    pub placeholders: bool,
    /// Parameters of [`Self::placeholders`] mode: name -> type.
    param_types: std::cell::RefCell<BTreeMap<String, DataType>>,
    /// The parameters whose values the plan was built for (lists, maps, nulls, SKIP / LIMIT
    /// counts, and every parameter outside placeholder mode): a cached plan serves only
    /// calls that give the same values for these.
    pub baked: std::cell::RefCell<std::collections::BTreeSet<String>>,
    pub options: PlannerOptions,
    empty_node: NodeInfo,
    empty_rel: RelInfo,
    pub(crate) counter: Names,
    /// The shared subplans made so far (their ids).
    shared: usize,
    /// The column names WITH has given computed values so far in this query.
    pub(crate) with_columns: std::collections::HashSet<String>,
    /// The labels (types) the user wrote for each node (relationship) variable in the query's
    /// patterns: a property none of them has is a typo (an error); where the label was only
    /// inferred, a missing property is null, as in openCypher.
    pub(crate) written_labels: HashMap<String, Vec<String>>,
    /// What the graph rewrites did, for EXPLAIN.
    pub notes: Vec<String>,
    /// The clause being lowered is followed by one that collects: a WITH ... ORDER BY then
    /// numbers its rows in that order (see [`Self::input_order`]).
    pub(crate) next_collects: bool,
    /// The `collect(v)` calls of the WITH being lowered whose lists hold only identities
    /// (see `identity_lists`); set for that WITH's projection only.
    pub(crate) identity_collects: Vec<ast::Expr>,
    /// The column numbering the input rows in the order the previous WITH ... ORDER BY gave
    /// them: `collect` follows it (DataFusion drops a sort no operator above requires).
    pub(crate) input_order: Option<String>,
    /// [`Self::input_order`] for the next clause.
    pub(crate) output_order: Option<String>,
    /// The fresh node variables standing for a value variable in a node position
    /// (`UNWIND friends AS f MATCH (f)-->()`), with the column of that value (node structs
    /// only): looked up by the key the value names where the node is a root.
    pub(crate) value_nodes: HashMap<String, String>,
    /// The MATCHes the query writes, each with what the binder had bound before it and
    /// as the rewrites prepared it.
    pub(crate) matches: Vec<(crate::binder::query::BoundMatch, MatchPlan)>,
}

impl<'c> Lowerer<'c> {
    /// Notes the labels and types written in `m`'s patterns (see `written_labels`).
    fn record_written_labels(&mut self, m: &ast::Match) {
        for p in &m.patterns {
            let nodes = p.nodes();
            for n in nodes {
                if let Some(v) = &n.var {
                    let e = self.written_labels.entry(v.name.clone()).or_default();
                    e.extend(n.labels.iter().map(|l| l.name.clone()));
                }
            }
            for (r, _) in &p.steps {
                if let Some(v) = &r.var {
                    let e = self.written_labels.entry(v.name.clone()).or_default();
                    e.extend(r.types.iter().map(|t| t.name.clone()));
                }
            }
        }
    }

    pub fn new(catalog: &'c Catalog, options: PlannerOptions) -> Result<Self> {
        // Stand-ins for labels / types the graph does not have (lenient mode): empty tables.
        let key_schema = Arc::new(Schema::new(vec![Field::new(
            "__id",
            DataType::Int64,
            false,
        )]));
        let empty_node = NodeInfo {
            label: String::new(),
            labels: vec![],
            name: String::new(),
            table: TableHandle::from_batches("<none>", key_schema.clone(), vec![], false)?,
            key: "__id".into(),
            key_hidden: true,
            key_type: DataType::Int64,
            props: vec![("__id".into(), DataType::Int64)],
        };
        let rel_schema = Arc::new(Schema::new(vec![
            Field::new("__src", DataType::Int64, false),
            Field::new("__dst", DataType::Int64, false),
        ]));
        let empty_rel = RelInfo {
            index: usize::MAX,
            cfg: RelTable {
                rel_type: String::new(),
                from: String::new(),
                to: String::new(),
                source: String::new(),
                src: "__src".into(),
                dst: "__dst".into(),
                ..Default::default()
            },
            table: TableHandle::from_batches("<none>", rel_schema, vec![], true)?,
            props: vec![],
        };
        debug_assert!(empty_rel
            .table
            .provider
            .schema()
            .field_with_name(ROW_ID)
            .is_ok());
        Ok(Self {
            catalog,
            indexes: None,
            params: BTreeMap::new(),
            compact_params: BTreeMap::new(),
            held: Default::default(),
            calls: Vec::new(),
            placeholders: false,
            param_types: Default::default(),
            baked: Default::default(),
            options,
            empty_node,
            empty_rel,
            counter: Names::default(),
            shared: 0,
            with_columns: Default::default(),
            written_labels: HashMap::new(),
            notes: Vec::new(),
            next_collects: false,
            identity_collects: Vec::new(),
            input_order: None,
            output_order: None,
            value_nodes: HashMap::new(),
            matches: Vec::new(),
        })
    }

    pub fn entities(&self) -> Entities<'_> {
        Entities {
            catalog: self.catalog,
            empty_node: &self.empty_node,
            empty_rel: &self.empty_rel,
        }
    }

    /// Parameter `p`'s value as the literal that writes it; the plan is then built for this
    /// value (see [`Self::baked`]).
    pub(crate) fn param_literal(&self, p: &str) -> Option<&ast::Expr> {
        self.baked.borrow_mut().insert(p.to_string());
        self.params.get(p)
    }

    /// Parameter `p` when it is a long list held as an Arrow list: a variable naming the
    /// value [held](crate::functions::held) beside the plan (the plan is then built for this
    /// value); the list itself where the plan goes to other processes.
    pub(crate) fn param_compact(&self, p: &str) -> Option<Expr> {
        let v = self.compact_params.get(p)?;
        self.baked.borrow_mut().insert(p.to_string());
        if !self.options.one_process {
            return Some(datafusion::prelude::lit(v.clone()));
        }
        let mut held = self.held.borrow_mut();
        let held = held
            .entry(p.to_string())
            .or_insert_with(|| crate::functions::held::Held::new(p, v.clone()));
        Some(held.expr())
    }

    /// Parameter `p` as a typed placeholder (placeholder mode, scalar values).
    pub(crate) fn param_placeholder(&self, p: &str) -> Option<Expr> {
        let t = self.param_types.borrow().get(p)?.clone();
        Some(crate::operators::params::placeholder(p, t))
    }

    /// A fresh internal name (anonymous variables, helper columns).
    pub fn fresh(&mut self, what: &str) -> String {
        self.counter.fresh(what)
    }

    /// A new id for a shared subplan.
    pub(crate) fn fresh_id(&mut self) -> usize {
        self.shared += 1;
        self.shared - 1
    }

    /// Lowers a bound query whose MATCHes the rewrites prepared.
    pub(crate) fn lower_query(&mut self, q: &Rewritten) -> Result<Lowered> {
        let bound = &q.bound;
        self.matches = (bound.matches.iter().cloned())
            .zip(q.matches.iter().cloned())
            .collect();
        // Internal names continue after the rewrites'.
        self.counter = q.names;
        // Messages name variables as the user wrote them.
        self.lower_bound(bound).map_err(names::unescape_error)
    }

    fn lower_bound(&mut self, bound: &BoundQuery) -> Result<Lowered> {
        if self.placeholders {
            self.param_types = std::cell::RefCell::new(
                bound
                    .params
                    .iter()
                    .filter(|(_, slot)| slot.is_scalar())
                    .map(|(k, slot)| (k.clone(), slot.data_type.clone()))
                    .collect(),
            );
        }
        self.params = bound
            .params
            .iter()
            .map(|(k, slot)| (k.clone(), slot.literal.clone()))
            .collect();
        self.compact_params = bound
            .params
            .iter()
            .filter_map(|(k, slot)| Some((k.clone(), slot.compact.clone()?)))
            .collect();
        self.calls = bound.calls.clone();
        let q = &bound.query;
        let first = self.lower_single(&q.first)?;
        let mut inputs = vec![Arc::new(first.plan)];
        for (_, sq) in &q.unions {
            let next = self.lower_single(sq)?;
            if next.columns != first.columns {
                return sem_err!(
                    DifferentColumnsInUnion,
                    sq.span,
                    "All sub queries in a UNION must have the same column names ({} vs {})",
                    first.columns.join(", "),
                    next.columns.join(", ")
                );
            }
            inputs.push(Arc::new(next.plan));
        }
        // One Union over every branch (a chain of two-input unions makes planning quadratic
        // in the number of branches); duplicates removed once, over all of them, when any
        // UNION lacks ALL.
        let mut plan = if inputs.len() == 1 {
            Arc::unwrap_or_clone(inputs.pop().expect("one input"))
        } else {
            LogicalPlan::Union(datafusion::logical_expr::Union::try_new_with_loose_types(
                inputs,
            )?)
        };
        if q.unions.iter().any(|(all, _)| !all) {
            plan = distinct_by_value(plan)?;
        }
        Ok(Lowered {
            plan,
            columns: first.columns,
            notes: std::mem::take(&mut self.notes),
            held: self.held.borrow().values().cloned().collect(),
        })
    }

    fn lower_single(&mut self, sq: &ast::SingleQuery) -> Result<Lowered> {
        let mut st = State::unit()?;
        for (i, clause) in sq.clauses.iter().enumerate() {
            if let ast::Clause::Match(m) = clause {
                self.record_written_labels(m);
            }
            self.next_collects = order_needed_after(&sq.clauses, i, |c| collects(c) || cuts(c));
            self.identity_collects = identity_lists::identity_collects(&sq.clauses, i);
            self.input_order = self.output_order.take();
            if let ast::Clause::Return(r) = clause {
                let (st, r) = self.projection_subqueries(st, r)?;
                return self.lower_return(st, &r);
            }
            st = self.lower_clause(st, clause)?;
        }
        sem_err!(Unsupported, sq.span, "Query cannot conclude without RETURN")
    }

    /// A MATCH, UNWIND or WITH over `st`, its pattern expressions and subqueries computed
    /// first (a MATCH's after the match, in `lower_match`).
    fn lower_clause(&mut self, st: State, clause: &ast::Clause) -> Result<State> {
        match clause {
            ast::Clause::Match(m) if m.optional => self.lower_optional_match(st, m),
            ast::Clause::Match(m) => self.lower_match(st, m),
            ast::Clause::Unwind(u) if u.expr.contains_subquery() => {
                let mut u = u.clone();
                let st = self.subquery_columns(st, vec![&mut u.expr])?;
                self.lower_unwind(st, &u)
            }
            ast::Clause::Unwind(u) => self.lower_unwind(st, u),
            ast::Clause::Call(c) => self.lower_call(st, c),
            // A sort and cut where no variable is in scope (`MATCH (:A) LIMIT 2`): of the
            // rows as they are (an ORDER BY can read nothing that would order them).
            ast::Clause::With(w) if w.standalone && st.scope.visible_names().is_empty() => {
                let plan = self.skip_limit(st.plan, &w.projection)?;
                Ok(State { plan, ..st })
            }
            ast::Clause::With(w) => {
                // Only this WITH's own projection reads them, not the subqueries in it.
                let identity = std::mem::take(&mut self.identity_collects);
                let (st, projection) = self.projection_subqueries(st, &w.projection)?;
                let w = ast::With {
                    projection,
                    where_: w.where_.clone(),
                    standalone: w.standalone,
                };
                self.identity_collects = identity;
                let st = self.lower_with(st, &w);
                self.identity_collects.clear();
                st
            }
            ast::Clause::Return(r) => sem_err!(
                Unsupported,
                r.span,
                "RETURN can only be used at the end of the query"
            ),
        }
    }

    /// A filter. Volatile conjuncts (`rand() < 0.5`) are first computed as a column, so that
    /// DataFusion cannot push them below an expansion, where they would run once per input
    /// row instead of once per output row.
    pub fn filter(&mut self, plan: LogicalPlan, pred: Expr) -> Result<LogicalPlan> {
        let (volatile, fixed): (Vec<Expr>, Vec<Expr>) =
            datafusion::logical_expr::utils::split_conjunction_owned(pred)
                .into_iter()
                .partition(|e| e.is_volatile());
        let mut b = LogicalPlanBuilder::from(plan);
        if let Some(p) = fixed.into_iter().reduce(Expr::and) {
            b = b.filter(p)?;
        }
        if volatile.is_empty() {
            return Ok(b.build()?);
        }
        let keep: Vec<Expr> = b
            .schema()
            .fields()
            .iter()
            .map(|f| expr::col(f.name()))
            .collect();
        let mut with_flags = keep.clone();
        let mut flags = Vec::new();
        for v in volatile {
            let name = self.fresh("volatile");
            with_flags.push(v.alias(&name));
            flags.push(expr::col(&name));
        }
        let cond = flags
            .into_iter()
            .reduce(Expr::and)
            .expect("at least one volatile conjunct");
        Ok(b.project(with_flags)?
            .filter(cond)?
            .project(keep)?
            .build()?)
    }

    /// Errors unless `e` is boolean (or null) typed.
    pub fn check_boolean(&self, e: &Expr, schema: &DFSchema, span: Span) -> Result<()> {
        let t = self.type_of(e, schema)?;
        if matches!(t, DataType::Boolean | DataType::Null) {
            Ok(())
        } else {
            Err(Error::semantic(
                crate::error::SemanticKind::InvalidArgumentType,
                format!("a predicate must be boolean, got {t}"),
                span,
            ))
        }
    }
}

/// A WITH or RETURN whose items call `collect`.
/// `plan`'s distinct rows, values of mixed kind compared by value (`1` and `1.0` are one
/// row), as DISTINCT compares them: a group shows its least encoding (an integer before an
/// equal float), the same whatever order parallel inputs come in.
fn distinct_by_value(plan: LogicalPlan) -> Result<LogicalPlan> {
    use crate::functions::{any::is_any, CypherFn};
    let schema = plan.schema().clone();
    if !schema.fields().iter().any(|f| is_any(f.data_type())) {
        return Ok(LogicalPlanBuilder::from(plan).distinct()?.build()?);
    }
    let (mut keys, mut firsts) = (Vec::new(), Vec::new());
    for (i, f) in schema.fields().iter().enumerate() {
        let c = datafusion::logical_expr::Expr::Column(datafusion::common::Column::from(
            schema.qualified_field(i),
        ));
        if is_any(f.data_type()) {
            keys.push(
                CypherFn::GroupKey
                    .call(vec![c.clone()])
                    .alias(format!("__aggkey{i}")),
            );
            firsts.push(datafusion::functions_aggregate::expr_fn::min(c).alias(f.name()));
        } else {
            keys.push(c);
        }
    }
    let names: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| expr::col(f.name()))
        .collect();
    Ok(LogicalPlanBuilder::from(plan)
        .aggregate(keys, firsts)?
        .project(names)?
        .build()?)
}

/// Whether a clause after the `i`th of `clauses` `needs` the order its rows come in, only
/// WITHs that keep rows in the order they come between (see [`keeps_order`]): a WITH ...
/// ORDER BY at `i` then numbers its rows, and those WITHs pass the numbering on.
pub(super) fn order_needed_after(
    clauses: &[ast::Clause],
    i: usize,
    needs: impl Fn(&ast::Clause) -> bool,
) -> bool {
    for c in clauses.iter().skip(i + 1) {
        if needs(c) {
            return true;
        }
        if !matches!(c, ast::Clause::With(w) if keeps_order(&w.projection)) {
            return false;
        }
    }
    false
}

/// A projection that keeps its rows in the order they come (Neo4j's pipelines do): it
/// neither aggregates, deduplicates nor orders them anew.
pub(super) fn keeps_order(p: &ast::Projection) -> bool {
    !p.distinct && p.order_by.is_empty() && !p.items.iter().any(|i| i.expr.contains_aggregate())
}

/// A WITH or RETURN whose SKIP / LIMIT cuts rows in the order they come (it has no ORDER BY
/// of its own, and keeps rows as they are).
fn cuts(c: &ast::Clause) -> bool {
    let p = match c {
        ast::Clause::With(w) => &w.projection,
        ast::Clause::Return(r) => r,
        _ => return false,
    };
    p.cuts() && keeps_order(p)
}

fn collects(c: &ast::Clause) -> bool {
    let p = match c {
        ast::Clause::With(w) => &w.projection,
        ast::Clause::Return(r) => r,
        _ => return false,
    };
    p.items.iter().any(|it| {
        it.expr.aggregate_calls().iter().any(|a| {
            matches!(&a.kind, ast::ExprKind::Function { name, .. } if name.eq_ignore_ascii_case("collect"))
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::session::{Graph, Mode};
    use crate::Params;

    #[test]
    fn in_csr_mode_a_hop_is_a_csr_expand_and_a_key_lookup_starts_it() {
        let p = plan_in(
            "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) RETURN b.firstName",
            Mode::Csr,
        );
        assert!(!p.contains("Join"), "{p}");
        assert!(
            p.contains("CsrExpand: key=a__id -> [k__#src, k__#dst], edges=7, take=b["),
            "{p}"
        );
        assert!(p.contains("NodeLookup: key=__lookup1, label=Person"), "{p}");
        // A hop onto a bound node closes the cycle instead of taking the node again.
        let p = plan_in(
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(a) RETURN a.id",
            Mode::Csr,
        );
        assert!(p.contains(", close=a__id,"), "{p}");
        // Undirected hops walk both directions of one index.
        let p = plan_in(
            "MATCH (a:Person {id: 1})-[:KNOWS]-(b) RETURN b.id",
            Mode::Csr,
        );
        assert!(p.contains("both directions"), "{p}");
    }

    /// The lowered plan on the join path.
    fn plan_text(q: &str) -> String {
        plan_in(q, Mode::Join)
    }

    fn plan_in(q: &str, mode: Mode) -> String {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(Graph::sample()).unwrap();
        let g = rt.block_on(g.with_mode(mode)).unwrap();
        let (plan, _) = g.plan(q, &Params::new()).unwrap();
        let text = plan.display_indent().to_string();
        text
    }

    #[test]
    fn a_hop_is_two_inner_joins_on_the_endpoint_keys() {
        let p = plan_text("MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) RETURN b.firstName");
        assert_eq!(p.matches("Inner Join").count(), 2, "{p}");
        assert!(p.contains("Inner Join: a__id = k__#near"), "{p}");
        assert!(p.contains("Inner Join: k__#far = b__id"), "{p}");
        assert!(p.contains("Filter: a__id = Int64(1)"), "{p}");
    }

    #[test]
    fn hops_over_one_table_are_unique_per_match() {
        let p =
            plan_text("MATCH (a:Person)-[r1:KNOWS]->(b:Person)-[r2:KNOWS]->(c:Person) RETURN c.id");
        assert!(p.contains("r1__#eid != r2__#eid"), "{p}");
        // Different tables never share an edge, so no check there.
        let p = plan_text(
            "MATCH (a:Person)-[r1:KNOWS]->(b:Person)-[r2:IS_LOCATED_IN]->(c:City) RETURN c.id",
        );
        assert!(!p.contains("!="), "{p}");
    }

    #[test]
    fn unlabeled_endpoints_take_the_configured_label() {
        let p = plan_text("MATCH (a:Post {id: 100})-[:HAS_CREATOR]->(b) RETURN b.firstName");
        assert!(p.contains("TableScan: node_Person"), "{p}");
    }

    #[test]
    fn undirected_hops_union_both_orientations() {
        let p = plan_text("MATCH (a:Person {id: 1})-[:KNOWS]-(b) RETURN b.id");
        assert!(p.contains("Union"), "{p}");
    }

    #[test]
    fn semantic_errors_point_at_the_culprit() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(Graph::sample()).unwrap();
        let e = g
            .plan(
                "MATCH (a:Person)-[:KNOWS]->(b:Persn) RETURN b",
                &Params::new(),
            )
            .unwrap_err();
        let span = e.span().unwrap();
        assert_eq!((span.start.column, span.end.column), (31, 36));
        let e = g
            .plan("MATCH (a:Person) RETURN a.x", &Params::new())
            .unwrap_err();
        assert_eq!(e.span().unwrap().start.column, 27);
    }
}
