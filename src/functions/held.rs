//! Long list parameters held beside the plans, not in them: a plan names one as a variable
//! (`$xs#7`), and DataFusion's physical planning reads its value from here through
//! [`HeldLists`], registered in every session. A logical plan holding the list itself would
//! print all of it each time a projection over it is made (its functional dependencies are
//! found by name), which for ten million values took minutes to plan. Physical planning
//! makes the variable a literal of the list; [`HeldValue`] names it again there (a
//! projection prints its expressions each time it runs).

use super::members::Members;
use arrow::array::{Array, AsArray, ListArray, StructArray};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::execution::context::ExecutionProps;
use datafusion::logical_expr::interval_arithmetic::Interval;
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::var_provider::{VarProvider, VarType};
use datafusion::logical_expr::{ColumnarValue, Expr};
use datafusion::physical_expr::PhysicalExpr;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

/// Strings of at least this many bytes are held as they are, not written as a literal.
pub const HELD_STRING_BYTES: usize = 64 << 10;

/// A long list parameter's value, found by its variable's name while this lives (whatever
/// holds a plan naming it holds this too); dropped, it is let go.
#[derive(Debug)]
pub struct Held {
    name: String,
    value: ScalarValue,
    /// The members of its lists sorted, once `IN` asks for them: by the path of the list's
    /// column within it (empty for the value itself).
    members: Mutex<HashMap<Vec<usize>, Option<Arc<Members>>>>,
}

/// The values held now, by variable name.
static HELD: LazyLock<Mutex<HashMap<String, Weak<Held>>>> = LazyLock::new(Default::default);

impl Held {
    /// Holds `value`, the value of parameter `param`.
    pub fn new(param: &str, value: ScalarValue) -> Arc<Held> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("${param}#{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let held = Arc::new(Held {
            name,
            value,
            members: Default::default(),
        });
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(held.name.clone(), Arc::downgrade(&held));
        held
    }

    /// The variable a plan names it by.
    pub fn expr(&self) -> Expr {
        let field = arrow::datatypes::Field::new(&self.name, self.value.data_type(), true);
        Expr::ScalarVariable(Arc::new(field), vec![self.name.clone()])
    }

    /// The value `e` names, when it is a held list's variable.
    pub fn value_in(e: &Expr) -> Option<ScalarValue> {
        match e {
            Expr::ScalarVariable(_, names) => Held::value_of(names),
            _ => None,
        }
    }

    /// The held list `value` is (the same array, not an equal one).
    pub fn find(value: &ScalarValue) -> Option<Arc<Held>> {
        // The same array (a list or a map), or a long string equal to it (a string is copied
        // where physical planning makes the variable a literal).
        let same = |held: &ScalarValue| match (held, value) {
            (ScalarValue::List(a), ScalarValue::List(b)) => Arc::ptr_eq(a, b),
            (ScalarValue::Struct(a), ScalarValue::Struct(b)) => Arc::ptr_eq(a, b),
            (ScalarValue::Utf8(Some(a)), ScalarValue::Utf8(Some(b))) => a == b,
            _ => false,
        };
        match value {
            ScalarValue::List(_) | ScalarValue::Struct(_) => {}
            ScalarValue::Utf8(Some(s)) if s.len() >= HELD_STRING_BYTES => {}
            _ => return None,
        }
        // Looked through outside the lock: a value let go here may be the last holder of
        // one, whose drop takes the lock.
        let alive: Vec<Arc<Held>> = {
            let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
            all.values().filter_map(Weak::upgrade).collect()
        };
        alive.into_iter().find(|h| same(&h.value))
    }

    /// `value` as the held list it is, named.
    pub fn named(value: &ScalarValue) -> Option<HeldValue> {
        let h = Held::find(value)?;
        Some(HeldValue {
            name: h.name.clone(),
            value: h.value.clone(),
        })
    }

    /// The members, sorted, of `value` where it is a held list or a list a held map holds
    /// (`$m.ids` reads it out of the map again for every batch: the same arrays, another
    /// value); sorted the first time asked. `None` unless its elements are 64-bit integers
    /// or strings.
    pub fn members_of(value: &ScalarValue) -> Option<Arc<Members>> {
        let ScalarValue::List(list) = value else {
            return None;
        };
        let alive: Vec<Arc<Held>> = {
            let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
            all.values().filter_map(Weak::upgrade).collect()
        };
        alive.iter().find_map(|h| {
            let (path, at) = match &h.value {
                ScalarValue::List(l) if Arc::ptr_eq(l, list) => (Vec::new(), l.as_ref().clone()),
                ScalarValue::Struct(s) => list_in(s, list, &mut Vec::new())?,
                _ => return None,
            };
            let mut sorted = h.members.lock().unwrap_or_else(|e| e.into_inner());
            let m = sorted
                .entry(path)
                .or_insert_with(|| Members::sort(&at.value(0)).map(Arc::new));
            Some(m.clone())
        })?
    }

    /// Whether any value is held now.
    pub fn any() -> bool {
        let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        all.values().any(|h| h.strong_count() > 0)
    }

    /// The value the variable `names` names, while it is held.
    pub fn value_of(names: &[String]) -> Option<ScalarValue> {
        let [name] = names else { return None };
        let held = {
            let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
            all.get(name)?.upgrade()?
        };
        Some(held.value.clone())
    }
}

/// The path to the column of `s` (a map's entries, nested ones too) that holds `list`'s
/// items, and that column.
fn list_in(
    s: &StructArray,
    list: &ListArray,
    path: &mut Vec<usize>,
) -> Option<(Vec<usize>, ListArray)> {
    for (i, c) in s.columns().iter().enumerate() {
        path.push(i);
        if let Some(l) = c.as_list_opt::<i32>() {
            // The same items: a field read out of a map is another list array over them.
            if l.len() == 1
                && list.len() == 1
                && l.value(0).to_data().ptr_eq(&list.value(0).to_data())
            {
                return Some((path.clone(), l.clone()));
            }
        }
        if let Some(found) = c.as_struct_opt().and_then(|t| list_in(t, list, path)) {
            return Some(found);
        }
        path.pop();
    }
    None
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        all.remove(&self.name);
    }
}

/// `e` with each literal that is a held value replaced by its name ([`HeldValue`]): the
/// same value, shown as `$xs#7`.
pub fn named(e: &Arc<dyn PhysicalExpr>) -> Result<Transformed<Arc<dyn PhysicalExpr>>> {
    e.clone().transform_up(|x| {
        let held = x
            .downcast_ref::<datafusion::physical_expr::expressions::Literal>()
            .and_then(|l| Held::named(l.value()));
        Ok(match held {
            Some(h) => Transformed::yes(Arc::new(h) as Arc<dyn PhysicalExpr>),
            None => Transformed::no(x),
        })
    })
}

/// `e` as EXPLAIN shows it: held values by their names.
pub fn shown(e: &Arc<dyn PhysicalExpr>) -> String {
    if !Held::any() {
        return e.to_string();
    }
    named(e).map_or_else(|_| e.to_string(), |n| n.data.to_string())
}

/// A held list in a physical plan: the list, shown by its name.
#[derive(Debug, Clone)]
pub struct HeldValue {
    name: String,
    value: ScalarValue,
}

impl PartialEq for HeldValue {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
    }
}
impl Eq for HeldValue {}
impl std::hash::Hash for HeldValue {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

impl std::fmt::Display for HeldValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl PhysicalExpr for HeldValue {
    fn data_type(&self, _: &arrow::datatypes::Schema) -> Result<arrow::datatypes::DataType> {
        Ok(self.value.data_type())
    }

    fn nullable(&self, _: &arrow::datatypes::Schema) -> Result<bool> {
        Ok(false)
    }

    fn evaluate(&self, _: &arrow::array::RecordBatch) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(self.value.clone()))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(self)
    }

    /// A constant, as a literal is.
    fn get_properties(&self, _: &[ExprProperties]) -> Result<ExprProperties> {
        Ok(ExprProperties {
            sort_properties: SortProperties::Singleton,
            range: Interval::try_new(self.value.clone(), self.value.clone())?,
            preserves_lex_ordering: true,
        })
    }

    fn fmt_sql(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Reads held values for DataFusion (user-defined variables).
#[derive(Debug)]
pub struct HeldLists;

impl VarProvider for HeldLists {
    fn get_value(&self, names: Vec<String>) -> Result<ScalarValue> {
        Held::value_of(&names).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "parameter {} is no longer held (the plan outlived its query)",
                names.join(".")
            ))
        })
    }

    fn get_type(&self, names: &[String]) -> Option<arrow::datatypes::DataType> {
        Held::value_of(names).map(|v| v.data_type())
    }
}

/// The held values `exprs` name, for a function that keeps them as its body and makes them
/// physical only when it runs (a comprehension's): holding these, it finds them then.
pub fn named_in<'e>(exprs: impl IntoIterator<Item = &'e Expr>) -> Holding {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let mut out = Vec::new();
    for e in exprs {
        let _ = e.apply(|x| {
            if let Expr::ScalarVariable(_, names) = x {
                let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(held) = names.first().and_then(|n| all.get(n)?.upgrade()) {
                    out.push(held);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        });
    }
    Holding { _held: out }
}

/// Held values a function keeps alive; no part of its identity (two functions naming the
/// same variables are equal whatever they hold).
#[derive(Debug, Default)]
pub struct Holding {
    _held: Vec<Arc<Held>>,
}

/// Execution properties that read held values: for expressions made physical outside a
/// session (comprehension bodies, constants evaluated while planning).
pub fn props() -> ExecutionProps {
    let mut props = ExecutionProps::new();
    props.add_var_provider(VarType::UserDefined, Arc::new(HeldLists));
    props
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_found_while_held_and_planned_physically() {
        let list = ScalarValue::List(ScalarValue::new_list_nullable(
            &[ScalarValue::Int64(Some(1)), ScalarValue::Int64(Some(2))],
            &arrow::datatypes::DataType::Int64,
        ));
        let held = Held::new("xs", list.clone());
        let e = held.expr();
        assert!(e.to_string().starts_with("$xs#"), "{e}");
        let Expr::ScalarVariable(_, names) = &e else {
            panic!("{e}")
        };
        assert_eq!(Held::value_of(names), Some(list.clone()));
        let schema = datafusion::common::DFSchema::empty();
        let physical =
            datafusion::physical_expr::create_physical_expr(&e, &schema, &props()).unwrap();
        let one = arrow::array::RecordBatch::new_empty(Arc::new(arrow::datatypes::Schema::empty()));
        match physical.evaluate(&one).unwrap() {
            datafusion::logical_expr::ColumnarValue::Scalar(v) => assert_eq!(v, list),
            other => panic!("{other:?}"),
        }
        drop(held);
        assert_eq!(Held::value_of(names), None);
        let gone = HeldLists.get_value(names.clone()).unwrap_err().to_string();
        assert!(gone.contains("no longer held"), "{gone}");
    }

    /// `x IN $m.ids` reads the list out of the held map for every batch, another value
    /// over the same arrays: its members are sorted once, as a held list's are, and only
    /// for that list.
    #[test]
    fn a_list_a_held_map_holds_is_sorted_once_for_every_batch() {
        let ints = |xs: &[i64]| {
            ScalarValue::List(ScalarValue::new_list_nullable(
                &xs.iter()
                    .map(|&x| ScalarValue::Int64(Some(x)))
                    .collect::<Vec<_>>(),
                &arrow::datatypes::DataType::Int64,
            ))
        };
        let inner = ScalarValue::Struct(Arc::new(StructArray::from(vec![(
            Arc::new(arrow::datatypes::Field::new(
                "deep",
                ints(&[1]).data_type(),
                true,
            )),
            ints(&[9, 3, 7]).to_array().unwrap(),
        )])));
        let map = StructArray::from(vec![
            (
                Arc::new(arrow::datatypes::Field::new(
                    "ids",
                    ints(&[1]).data_type(),
                    true,
                )),
                ints(&[5, 1, 4]).to_array().unwrap(),
            ),
            (
                Arc::new(arrow::datatypes::Field::new("in", inner.data_type(), true)),
                inner.to_array().unwrap(),
            ),
        ]);
        let held = Held::new("m", ScalarValue::Struct(Arc::new(map.clone())));
        // What a field access gives, once per batch.
        let read = |path: &[usize]| {
            let mut c: arrow::array::ArrayRef = Arc::new(map.clone());
            for &i in path {
                c = c.as_struct().column(i).clone();
            }
            ScalarValue::try_from_array(&c, 0).unwrap()
        };
        let first = Held::members_of(&read(&[0])).expect("sorted");
        let again = Held::members_of(&read(&[0])).expect("sorted");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(first.has_int(4) && !first.has_int(9));
        let deep = Held::members_of(&read(&[1, 0])).expect("sorted");
        assert!(deep.has_int(9) && !deep.has_int(4));
        // An equal list not read out of a held value is not one.
        assert!(Held::members_of(&ints(&[5, 1, 4])).is_none());
        drop(held);
        assert!(Held::members_of(&read(&[0])).is_none());
    }
}
