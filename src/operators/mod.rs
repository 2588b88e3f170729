//! Graph operators: logical nodes (`CsrExpand`, `NodeLookup`), their physical operators, and the
//! `ExtensionPlanner` that turns one into the other.

pub mod count_paths;
pub mod count_paths_exec;
pub mod csr_expand;
pub mod csr_expand_exec;
pub mod node_lookup;
pub mod node_lookup_exec;
pub mod planner;
pub mod shared;
pub mod shared_exec;
pub mod var_length;
pub mod var_length_exec;

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

/// The output of a one-to-many operator over `input`, ending after `fetch` rows when given (a
/// LIMIT absorbed into the operator): input batches are then expanded in growing slices, so a
/// small limit expands only the input rows it needs instead of whole batches. `expand` gets the
/// rows still wanted (it may stop once it has them; more are cut off).
pub fn limited_stream(
    input: datafusion::physical_plan::SendableRecordBatchStream,
    schema: SchemaRef,
    fetch: Option<usize>,
    mut expand: impl FnMut(&arrow::array::RecordBatch, Option<usize>) -> Result<arrow::array::RecordBatch>
        + Send
        + 'static,
) -> datafusion::physical_plan::SendableRecordBatchStream {
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use futures::StreamExt;
    let Some(limit) = fetch else {
        let stream = input.map(move |b| b.and_then(|b| expand(&b, None)));
        return Box::pin(RecordBatchStreamAdapter::new(schema, stream));
    };
    let out_schema = schema.clone();
    let stream = futures::stream::unfold(
        (input, limit, expand),
        move |(mut input, mut remaining, mut expand)| {
            let schema = schema.clone();
            async move {
                if remaining == 0 {
                    return None;
                }
                let batch = match input.next().await? {
                    Ok(b) => b,
                    Err(e) => return Some((Err(e), (input, 0, expand))),
                };
                let mut outs = Vec::new();
                let (mut start, mut chunk) = (0, 1);
                while start < batch.num_rows() && remaining > 0 {
                    let len = chunk.min(batch.num_rows() - start);
                    let out = match expand(&batch.slice(start, len), Some(remaining)) {
                        Ok(o) => o,
                        Err(e) => return Some((Err(e), (input, 0, expand))),
                    };
                    let out = out.slice(0, out.num_rows().min(remaining));
                    remaining -= out.num_rows();
                    outs.push(out);
                    start += len;
                    chunk *= 2;
                }
                let merged = arrow::compute::concat_batches(&schema, &outs).map_err(Into::into);
                Some((merged, (input, remaining, expand)))
            }
        },
    );
    Box::pin(RecordBatchStreamAdapter::new(out_schema, stream))
}
