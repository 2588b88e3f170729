//! Graph operators: logical nodes (`CsrExpand`, `NodeLookup`), their physical operators, and the
//! `ExtensionPlanner` that turns one into the other.

pub mod backstop;
pub mod cancel;
pub mod const_row;
pub mod count_paths;
pub mod count_paths_exclude;
pub mod count_paths_exec;
pub mod count_paths_join;
pub mod csr_expand;
pub mod csr_expand_exec;
pub mod csr_intersect;
pub mod csr_intersect_exec;
pub mod node;
pub mod node_lookup;
pub mod node_lookup_exec;
pub mod params;
pub mod path_elems;
pub mod planner;
pub mod repeated_exprs;
pub mod shared;
pub mod shared_exec;
pub mod shortest;
pub mod traversal;
pub mod var_length;
pub mod var_length_exec;

/// The `ExecutionPlan` methods our single-input operators write alike (fields `input`,
/// `cache` and `metrics`): name, properties, child, metrics. `with_new_children` takes its
/// child through [`only_child`].
macro_rules! unary_exec {
    ($name:literal) => {
        fn name(&self) -> &str {
            $name
        }

        fn properties(&self) -> &std::sync::Arc<datafusion::physical_plan::PlanProperties> {
            &self.cache
        }

        fn children(&self) -> Vec<&std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
            vec![&self.input]
        }

        fn metrics(&self) -> Option<datafusion::physical_plan::metrics::MetricsSet> {
            Some(self.metrics.clone_inner())
        }
    };
}
pub(crate) use unary_exec;

/// The one child `with_new_children` was given: an internal error for any other number (a
/// broken plan rewrite), not a panic.
pub(crate) fn only_child(
    name: &str,
    mut children: Vec<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>>,
) -> datafusion::common::Result<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    match children.len() {
        1 => Ok(children.swap_remove(0)),
        n => datafusion::common::internal_err!("{name} takes one input, got {n}"),
    }
}

use arrow::datatypes::{Field, Schema, SchemaRef};
use csr_expand::TakeSpec;
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties, PlanProperties};
use std::sync::Arc;

/// `PartialEq`, `Eq`, `PartialOrd` and `Hash` of a logical node through its `sig()` tuple
/// (the shared data behind `Arc`s takes no part in identity).
macro_rules! node_identity {
    ($t:ty) => {
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.sig() == other.sig()
            }
        }
        impl Eq for $t {}
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                self.sig().partial_cmp(&other.sig())
            }
        }
        impl std::hash::Hash for $t {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.sig().hash(state)
            }
        }
    };
}
pub(crate) use node_identity;

/// `Debug` as the node's EXPLAIN line, without its input: DataFusion's physical planner formats
/// every extension node with `{:?}` as it plans it, and a derived `Debug` would print the whole
/// subtree below each node (quadratic in the plan's depth).
macro_rules! explain_debug {
    ($t:ty) => {
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                datafusion::logical_expr::UserDefinedLogicalNodeCore::fmt_for_explain(self, f)
            }
        }
    };
}
pub(crate) use explain_debug;

/// What differs between our single-input logical nodes; [`unary_node!`] writes DataFusion's
/// `UserDefinedLogicalNodeCore` from it. None has expressions of its own for DataFusion to
/// rewrite (pushed filters are type-checked and simplified before they move in, and may name
/// columns the node no longer outputs), and none lets a LIMIT move below it (each changes the
/// row count or must compute the same rows everywhere).
pub(crate) trait UnaryNode: Clone {
    const NAME: &'static str;
    fn input(&self) -> &LogicalPlan;
    fn output_schema(&self) -> &DFSchemaRef;
    /// The same node over a new input (its schema recomputed where it depends on the input).
    fn with_input(&self, input: LogicalPlan) -> Result<Self>;
    fn explain(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result;
    /// Columns a predicate above must not be pushed below the node on: what the node
    /// produces (our own rule moves such predicates inside it).
    fn barrier_columns(&self) -> std::collections::HashSet<String> {
        Default::default()
    }
    /// The input columns needed for the requested output columns (`None`: all of them).
    fn needed_input_columns(&self, _output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        None
    }
}

/// `UserDefinedLogicalNodeCore` for a [`UnaryNode`].
macro_rules! unary_node {
    ($t:ty) => {
        impl datafusion::logical_expr::UserDefinedLogicalNodeCore for $t {
            fn name(&self) -> &str {
                <$t as $crate::operators::UnaryNode>::NAME
            }

            fn inputs(&self) -> Vec<&datafusion::logical_expr::LogicalPlan> {
                vec![$crate::operators::UnaryNode::input(self)]
            }

            fn schema(&self) -> &datafusion::common::DFSchemaRef {
                $crate::operators::UnaryNode::output_schema(self)
            }

            fn expressions(&self) -> Vec<datafusion::logical_expr::Expr> {
                vec![]
            }

            fn prevent_predicate_push_down_columns(&self) -> std::collections::HashSet<String> {
                $crate::operators::UnaryNode::barrier_columns(self)
            }

            fn fmt_for_explain(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                $crate::operators::UnaryNode::explain(self, f)
            }

            fn with_exprs_and_inputs(
                &self,
                _exprs: Vec<datafusion::logical_expr::Expr>,
                mut inputs: Vec<datafusion::logical_expr::LogicalPlan>,
            ) -> datafusion::common::Result<Self> {
                $crate::operators::UnaryNode::with_input(self, inputs.swap_remove(0))
            }

            fn necessary_children_exprs(
                &self,
                output_columns: &[usize],
            ) -> Option<Vec<Vec<usize>>> {
                $crate::operators::UnaryNode::needed_input_columns(self, output_columns)
            }

            fn supports_limit_pushdown(&self) -> bool {
                false
            }
        }
    };
}
pub(crate) use unary_node;

/// The input's columns followed by `extra`: the schema of an operator that adds columns.
pub fn extended_schema<'a>(
    input: &LogicalPlan,
    extra: impl IntoIterator<Item = (&'a String, &'a arrow::datatypes::DataType)>,
) -> Result<DFSchemaRef> {
    let mut fields: Vec<Field> = input
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.extend(
        extra
            .into_iter()
            .map(|(n, t)| Field::new(n, t.clone(), true)),
    );
    Ok(Arc::new(DFSchema::try_from(Schema::new(fields))?))
}

/// `necessary_children_exprs` of an operator that passes its input through and adds columns:
/// the requested input columns plus the ones it reads (`keys`).
pub fn input_columns_needed(
    input: &LogicalPlan,
    output_columns: &[usize],
    keys: &[&str],
) -> Option<Vec<Vec<usize>>> {
    let schema = input.schema();
    let n_in = schema.fields().len();
    let mut need: Vec<usize> = output_columns
        .iter()
        .copied()
        .filter(|&i| i < n_in)
        .collect();
    for k in keys {
        need.push(schema.index_of_column_by_name(None, k)?);
    }
    need.sort_unstable();
    need.dedup();
    Some(vec![need])
}

/// Properties of a streaming operator that keeps its input's partitioning (recomputed whenever
/// the input changes: the physical optimizer may repartition it).
pub fn streaming_properties(
    schema: &SchemaRef,
    input: &Arc<dyn ExecutionPlan>,
) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(schema.clone()),
        input.output_partitioning().clone(),
        EmissionType::Incremental,
        Boundedness::Bounded,
    ))
}

/// [`streaming_properties`] over a new `input`: the node's own (`cache`) while the input's
/// partitioning is the same, so that the operators above a rebuilt node (a kept plan bound
/// for a run) see the same properties and skip recomputing theirs.
pub fn streaming_properties_over(
    cache: &Arc<PlanProperties>,
    schema: &SchemaRef,
    input: &Arc<dyn ExecutionPlan>,
) -> Arc<PlanProperties> {
    if cache.partitioning == *input.output_partitioning() {
        cache.clone()
    } else {
        streaming_properties(schema, input)
    }
}

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

/// Output rows an expansion aims at per batch.
pub(crate) const TARGET_BATCH_ROWS: usize = 8192;

/// The output of a one-to-many operator over `input`, in batches of about
/// [`TARGET_BATCH_ROWS`] rows: input batches are expanded in slices sized from the fan-out seen
/// so far (starting at one row), so that a high fan-out never builds one huge batch and a
/// consumer that stops early (a LIMIT above, even past other operators) stops the expansion
/// soon. With `fetch` (a LIMIT absorbed into the operator) it ends after that many rows.
/// `expand` gets the rows still wanted (it may stop once it has them; more are cut off).
pub fn limited_stream(
    input: datafusion::physical_plan::SendableRecordBatchStream,
    schema: SchemaRef,
    fetch: Option<usize>,
    elapsed: datafusion::physical_plan::metrics::Time,
    expand: impl FnMut(&arrow::array::RecordBatch, Option<usize>) -> Result<arrow::array::RecordBatch>
        + Send
        + 'static,
) -> datafusion::physical_plan::SendableRecordBatchStream {
    use futures::FutureExt;
    let mut expand = expand;
    sliced_stream(input, schema, fetch, move |slice, remaining| {
        let timer = elapsed.timer();
        let out = expand(&slice, remaining);
        timer.done();
        futures::future::ready(out).boxed()
    })
}

/// [`limited_stream`] for expansions whose rows can each take long (a search per row): a
/// slice runs in place under a budget of work (`cancel::IN_POLL_UNITS`, ticked on `expand`'s
/// checkpoint); one past it runs again on the blocking pool, as does every slice after it,
/// where dropping the stream stops it (`cancel::run_blocking`). `expand` must count its
/// metrics only when it succeeds: a slice stopped by the budget is expanded again.
pub fn limited_stream_offloading(
    input: datafusion::physical_plan::SendableRecordBatchStream,
    schema: SchemaRef,
    fetch: Option<usize>,
    elapsed: datafusion::physical_plan::metrics::Time,
    expand: impl Fn(
            &arrow::array::RecordBatch,
            Option<usize>,
            &cancel::Checkpoint,
        ) -> Result<arrow::array::RecordBatch>
        + Send
        + Sync
        + 'static,
) -> datafusion::physical_plan::SendableRecordBatchStream {
    use futures::FutureExt;
    let expand = Arc::new(expand);
    let mut offloaded = false;
    sliced_stream(input, schema, fetch, move |slice, remaining| {
        if !offloaded {
            let cp = cancel::Checkpoint::with_budget(cancel::IN_POLL_UNITS);
            let timer = elapsed.timer();
            let out = (*expand)(&slice, remaining, &cp);
            timer.done();
            if !(out.is_err() && cp.over_budget()) {
                return futures::future::ready(out).boxed();
            }
            offloaded = true;
        }
        let (expand, elapsed) = (expand.clone(), elapsed.clone());
        cancel::run_blocking(move |cp| {
            let timer = elapsed.timer();
            let out = (*expand)(&slice, remaining, &cp);
            timer.done();
            out
        })
        .boxed()
    })
}

/// The expansion of one slice of input rows (the rows still wanted): done in place, or a
/// computation elsewhere to wait for.
type SliceFuture = futures::future::BoxFuture<'static, Result<arrow::array::RecordBatch>>;

/// The stream of [`limited_stream`], each slice expanded by `apply`. Slices are sized from the
/// fan-out and from the time the last one took (about [`cancel::SLICE_TIME`]: rows that each
/// take long, a hub's edges all filtered away, must not hold a runtime worker for long), and
/// the stream yields once its slices took that long since it last did: a consumer that pulls
/// without ever waiting (an aggregate) would otherwise hold its worker for the whole
/// expansion, and a dropped query (a timeout, a client gone) would not stop until then.
fn sliced_stream(
    input: datafusion::physical_plan::SendableRecordBatchStream,
    schema: SchemaRef,
    fetch: Option<usize>,
    apply: impl FnMut(arrow::array::RecordBatch, Option<usize>) -> SliceFuture + Send + 'static,
) -> datafusion::physical_plan::SendableRecordBatchStream {
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use futures::StreamExt;
    use std::time::{Duration, Instant};
    struct State<F> {
        input: datafusion::physical_plan::SendableRecordBatchStream,
        apply: F,
        /// The input batch being expanded and the next row of it.
        current: Option<(arrow::array::RecordBatch, usize)>,
        chunk: usize,
        remaining: Option<usize>,
        /// Time the slices took since the stream last yielded.
        busy: Duration,
    }
    let state = State {
        input,
        apply,
        current: None,
        chunk: 1,
        remaining: fetch,
        busy: Duration::ZERO,
    };
    let stream = futures::stream::unfold(state, |mut st| async move {
        loop {
            if st.remaining == Some(0) {
                return None;
            }
            tokio::task::consume_budget().await;
            if st.busy >= cancel::SLICE_TIME {
                st.busy = Duration::ZERO;
                tokio::task::yield_now().await;
            }
            let (batch, start) = match st.current.take() {
                Some(c) => c,
                None => match st.input.next().await? {
                    Ok(b) => (b, 0),
                    Err(e) => {
                        st.remaining = Some(0);
                        return Some((Err(e), st));
                    }
                },
            };
            if start >= batch.num_rows() {
                continue;
            }
            let len = st.chunk.min(batch.num_rows() - start);
            let started = Instant::now();
            let out = (st.apply)(batch.slice(start, len), st.remaining).await;
            let took = started.elapsed();
            st.busy += took;
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    st.remaining = Some(0);
                    return Some((Err(e), st));
                }
            };
            if start + len < batch.num_rows() {
                st.current = Some((batch, start + len));
            }
            // Size the next slice from this one's fan-out and time.
            let per_row = (out.num_rows() as f64 / len as f64).max(1e-3);
            let by_rows = TARGET_BATCH_ROWS as f64 / per_row;
            let secs = took.as_secs_f64().max(1e-6);
            let by_time = len as f64 * cancel::SLICE_TIME.as_secs_f64() / secs;
            st.chunk = (by_rows.min(by_time) as usize).clamp(1, 1 << 16);
            let out = match st.remaining.as_mut() {
                Some(r) => {
                    let out = out.slice(0, out.num_rows().min(*r));
                    *r -= out.num_rows();
                    out
                }
                None => out,
            };
            if out.num_rows() > 0 {
                return Some((Ok(out), st));
            }
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}

#[cfg(test)]
mod exec_tests;
#[cfg(test)]
pub(crate) mod hand_built;
#[cfg(test)]
mod tests;
