//! Long list parameters held beside the plans, not in them: a plan names one as a variable
//! (`$xs#7`), and DataFusion's physical planning reads its value from here through
//! [`HeldLists`], registered in every session. A logical plan holding the list itself would
//! print all of it each time a projection over it is made (its functional dependencies are
//! found by name), which for ten million values took minutes to plan.

use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::execution::context::ExecutionProps;
use datafusion::logical_expr::var_provider::{VarProvider, VarType};
use datafusion::logical_expr::Expr;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

/// A long list parameter's value, found by its variable's name while this lives (whatever
/// holds a plan naming it holds this too); dropped, it is let go.
#[derive(Debug)]
pub struct Held {
    name: String,
    value: ScalarValue,
}

/// The values held now, by variable name.
static HELD: LazyLock<Mutex<HashMap<String, Weak<Held>>>> = LazyLock::new(Default::default);

impl Held {
    /// Holds `value`, the value of parameter `param`.
    pub fn new(param: &str, value: ScalarValue) -> Arc<Held> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("${param}#{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let held = Arc::new(Held { name, value });
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(held.name.clone(), Arc::downgrade(&held));
        held
    }

    /// The variable a plan names it by.
    pub fn expr(&self) -> Expr {
        let field = arrow::datatypes::Field::new(&self.name, self.value.data_type(), true);
        Expr::ScalarVariable(Arc::new(field), vec![self.name.clone()])
    }

    /// The value the variable `names` names, while it is held.
    pub fn value_of(names: &[String]) -> Option<ScalarValue> {
        let [name] = names else { return None };
        let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        Some(all.get(name)?.upgrade()?.value.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        all.remove(&self.name);
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
}
