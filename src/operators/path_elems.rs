//! The nodes and relationships of traversed paths as struct values (a named path's segment,
//! a variable-length relationship returned as a list): taken by ordinal / edge row from the
//! loaded columns of each label and table, per element, in path order.

use super::var_length::PathElems;
use super::var_length_exec::{ext, TraversalSpec};
use arrow::array::{new_null_array, Array, ArrayRef, StringArray, StructArray, UInt32Array};
use arrow::datatypes::{DataType, Fields};
use datafusion::common::Result;
use std::sync::Arc;

/// Separates a label / table from a key / edge id in element identities (as the planner's).
const ID_SEP: char = '\u{1f}';

/// The node and relationship structs of `steps` (hop, edge row, slot, node per step).
pub fn build(
    spec: &TraversalSpec,
    e: &PathElems,
    steps: &[(usize, u32, usize, u32)],
) -> Result<(ArrayRef, ArrayRef)> {
    let nodes: Vec<(usize, u32)> = steps.iter().map(|&(_, _, s, n)| (s, n)).collect();
    let rels: Vec<(usize, u32)> = steps.iter().map(|&(h, r, _, _)| (h, r)).collect();
    Ok((node_structs(spec, e, &nodes)?, rel_structs(spec, e, &rels)?))
}

/// The structs of nodes given by label slot and ordinal.
pub fn node_structs(
    spec: &TraversalSpec,
    e: &PathElems,
    items: &[(usize, u32)],
) -> Result<ArrayRef> {
    let nodes = Grouped::new(items.iter().copied());
    let mut node_cols = Vec::new();
    for (k, field) in e.node_fields.iter().enumerate() {
        let parts = nodes.each(|slot, rows| {
            let (cols, key) = &e.slots[slot];
            let label = &spec_label(spec, slot);
            let n = rows.len();
            Ok(match k {
                0 => Arc::new(StringArray::from(vec![label.as_str(); n])) as ArrayRef,
                1 => identities(label, &take(cols.get(key).map_err(ext)?, rows)?)?,
                _ => property(cols, field.name(), rows, field.data_type())?,
            })
        })?;
        node_cols.push(nodes.interleave(&parts, field.data_type())?);
    }
    struct_array(&e.node_fields, node_cols, items.len())
}

/// The structs of relationships given by hop and edge row.
pub fn rel_structs(
    spec: &TraversalSpec,
    e: &PathElems,
    items: &[(usize, u32)],
) -> Result<ArrayRef> {
    let rels = Grouped::new(items.iter().copied());
    let mut rel_cols = Vec::new();
    for (k, field) in e.rel_fields.iter().enumerate() {
        let parts = rels.each(|h, rows| {
            let hop = &spec.hops[h];
            let ends = &e.ends[h];
            let n = rows.len();
            Ok(match k {
                0 => Arc::new(StringArray::from(vec![hop.rel_type.as_str(); n])) as ArrayRef,
                1 => {
                    let ids: Vec<String> = rows
                        .values()
                        .iter()
                        .map(|&r| {
                            let id = spec.rowids[h].value(r as usize);
                            format!("{}{ID_SEP}{id}", hop.rel)
                        })
                        .collect();
                    Arc::new(StringArray::from(ids)) as ArrayRef
                }
                2 => identities(
                    &ends.from,
                    &take(hop.edges.get(&ends.src).map_err(ext)?, rows)?,
                )?,
                3 => identities(
                    &ends.to,
                    &take(hop.edges.get(&ends.dst).map_err(ext)?, rows)?,
                )?,
                _ => property(&hop.edges, field.name(), rows, field.data_type())?,
            })
        })?;
        rel_cols.push(rels.interleave(&parts, field.data_type())?);
    }
    struct_array(&e.rel_fields, rel_cols, items.len())
}

fn spec_label(spec: &TraversalSpec, slot: usize) -> String {
    spec.labels[slot].clone()
}

fn struct_array(fields: &Fields, cols: Vec<ArrayRef>, len: usize) -> Result<ArrayRef> {
    Ok(Arc::new(StructArray::try_new_with_length(
        fields.clone(),
        cols,
        None,
        len,
    )?))
}

fn take(a: ArrayRef, rows: &UInt32Array) -> Result<ArrayRef> {
    Ok(arrow::compute::take(a.as_ref(), rows, None)?)
}

/// `label` + separator + each key as text.
fn identities(label: &str, keys: &ArrayRef) -> Result<ArrayRef> {
    let text = arrow::compute::cast(keys, &DataType::Utf8)?;
    let text = text
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("cast to Utf8");
    let ids: Vec<Option<String>> = text
        .iter()
        .map(|k| k.map(|k| format!("{label}{ID_SEP}{k}")))
        .collect();
    Ok(Arc::new(StringArray::from(ids)))
}

/// Property `name` of `rows` as type `t`; nulls where the table lacks it.
fn property(
    cols: &crate::csr::TableColumns,
    name: &str,
    rows: &UInt32Array,
    t: &DataType,
) -> Result<ArrayRef> {
    match cols.get(name) {
        Ok(a) => {
            let v = take(a, rows)?;
            Ok(if v.data_type() == t {
                v
            } else {
                arrow::compute::cast(&v, t)?
            })
        }
        Err(_) => Ok(new_null_array(t, rows.len())),
    }
}

/// Elements grouped by label slot / hop, remembering where each goes.
struct Grouped {
    groups: Vec<(usize, Vec<u32>)>,
    order: Vec<(usize, usize)>,
}

impl Grouped {
    fn new(items: impl Iterator<Item = (usize, u32)>) -> Self {
        let mut groups: Vec<(usize, Vec<u32>)> = Vec::new();
        let mut order = Vec::new();
        for (g, row) in items {
            let i = match groups.iter().position(|(x, _)| *x == g) {
                Some(i) => i,
                None => {
                    groups.push((g, Vec::new()));
                    groups.len() - 1
                }
            };
            order.push((i, groups[i].1.len()));
            groups[i].1.push(row);
        }
        Self { groups, order }
    }

    fn each(
        &self,
        mut f: impl FnMut(usize, &UInt32Array) -> Result<ArrayRef>,
    ) -> Result<Vec<ArrayRef>> {
        self.groups
            .iter()
            .map(|(g, rows)| f(*g, &UInt32Array::from(rows.clone())))
            .collect()
    }

    fn interleave(&self, parts: &[ArrayRef], t: &DataType) -> Result<ArrayRef> {
        if parts.is_empty() {
            return Ok(arrow::array::new_empty_array(t));
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        Ok(arrow::compute::interleave(&refs, &self.order)?)
    }
}
