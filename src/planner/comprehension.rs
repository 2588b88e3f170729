//! List comprehensions and list predicates: the body is lowered over the element (a value
//! column of its own) and the variables in scope; what it reads of the row (columns,
//! parameters) becomes the function's arguments, so the optimizer and the plan cache see them.

use super::expr::{col, ExprCtx};
use super::scope::{Binding, Scope};
use super::Lowerer;
use crate::error::Result;
use crate::functions::any::ANY;
use crate::functions::comprehension::{ListEval, ListOp};
use crate::functions::registry::null;
use crate::functions::CypherFn;
use crate::sem_err;
use arrow::datatypes::{DataType, Field, Schema};
use cypher::ast;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::DFSchema;
use datafusion::logical_expr::Expr;
use datafusion::optimizer::analyzer::type_coercion::TypeCoercionRewriter;

impl Lowerer<'_> {
    /// `[var IN list WHERE filter | map]`; `all(var IN list WHERE pred)` and the others.
    pub(super) fn list_eval(
        &self,
        op: ListOp,
        var: &ast::Ident,
        list: &ast::Expr,
        (filter, map): (Option<&ast::Expr>, Option<&ast::Expr>),
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        let Some((l, elem)) = self.list_and_element(list, cx)? else {
            return Ok(null());
        };
        // The element lives in a column of its own, visible as the variable.
        let elem_col = format!("__x{}", var.name);
        let mut scope = Scope {
            vars: cx.scope.vars.clone(),
        };
        scope.bind(
            &var.name,
            Binding::Value {
                col: elem_col.clone(),
            },
        );
        let extra =
            DFSchema::try_from(Schema::new(vec![Field::new(&elem_col, elem.clone(), true)]))?;
        let mut schema = cx.schema.clone();
        schema.merge(&extra);
        let inner = ExprCtx {
            scope: &scope,
            schema: &schema,
            overrides: cx.overrides,
            no_aggregates: "inside a list comprehension",
            missing_props_null: cx.missing_props_null,
        };
        // The body is compiled on its own, past DataFusion's analyzer: its operands get the
        // analyzer's casts here (an element of the null type, `[]`, compared with a number).
        let coerce = |e: Expr| -> Result<Expr> {
            let mut rewriter = TypeCoercionRewriter::new(&schema);
            Ok(e.rewrite(&mut rewriter)?.data)
        };
        let filter = filter
            .map(|f| self.expr(f, &inner).and_then(coerce))
            .transpose()?;
        let map = map
            .map(|m| self.expr(m, &inner).and_then(coerce))
            .transpose()?;
        let out = match (op, &map) {
            (ListOp::Comprehension, Some(m)) => DataType::new_list(self.type_of(m, &schema)?, true),
            (ListOp::Comprehension, None) => DataType::new_list(elem.clone(), true),
            _ => DataType::Boolean,
        };
        let (filter, map, captured) = self.capture(&[&elem_col], filter, map, &schema)?;
        let mut fields = vec![Field::new(&elem_col, elem, true)];
        fields.extend(
            captured
                .iter()
                .map(|(_, n, t)| Field::new(n, t.clone(), true)),
        );
        let body_schema = DFSchema::try_from(Schema::new(fields))?;
        let mut args = vec![l];
        args.extend(captured.into_iter().map(|(e, _, _)| e));
        Ok(ListEval::call(op, filter, map, body_schema, out, args))
    }

    /// The list a comprehension or reduce iterates and its element type; `None` for a null
    /// list (the result is null).
    fn list_and_element(
        &self,
        list: &ast::Expr,
        cx: &ExprCtx<'_>,
    ) -> Result<Option<(Expr, DataType)>> {
        let l = self.expr(list, cx)?;
        let elem = match self.type_of(&l, cx.schema)? {
            DataType::List(f) | DataType::LargeList(f) => f.data_type().clone(),
            DataType::Null => return Ok(None),
            other => {
                return sem_err!(
                    InvalidArgumentType,
                    list.span,
                    "`{}` is not a list: {other}",
                    list
                )
            }
        };
        Ok(Some((l, elem)))
    }

    /// What a body reads of the row (not its own `locals`), captured as arguments: each
    /// largest sub-expression that reads no local as one (`x[0] = ps[0][0]` captures the
    /// number `ps[0][0]`, not the list `ps`, which would be repeated for every element).
    #[allow(clippy::type_complexity)]
    fn capture(
        &self,
        locals: &[&str],
        filter: Option<Expr>,
        map: Option<Expr>,
        schema: &DFSchema,
    ) -> Result<(Option<Expr>, Option<Expr>, Vec<(Expr, String, DataType)>)> {
        let mut captured: Vec<(Expr, String, DataType)> = Vec::new();
        let mut capture = |e: Expr| -> Result<Expr> {
            let e = e.transform_down(|x| {
                if !reads_row_only(&x, locals) {
                    return Ok(Transformed::no(x));
                }
                let name = match captured.iter().find(|(e, _, _)| e == &x) {
                    Some((_, n, _)) => n.clone(),
                    None => {
                        let n = format!("__o{}", captured.len());
                        let t = self
                            .type_of(&x, schema)
                            .map_err(datafusion::error::DataFusionError::from)?;
                        captured.push((x.clone(), n.clone(), t));
                        n
                    }
                };
                Ok(Transformed::new(
                    col(&name),
                    true,
                    datafusion::common::tree_node::TreeNodeRecursion::Jump,
                ))
            })?;
            Ok(e.data)
        };
        let filter = filter.map(&mut capture).transpose()?;
        let map = map.map(&mut capture).transpose()?;
        Ok((filter, map, captured))
    }

    /// `reduce(acc = init, x IN list | body)`: the body over each element in turn, the
    /// accumulator a value of mixed kind (its kind may change from one element to the next).
    pub(super) fn reduce(
        &self,
        (acc, init): (&ast::Ident, &ast::Expr),
        var: &ast::Ident,
        list: &ast::Expr,
        body: &ast::Expr,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        let Some((l, elem)) = self.list_and_element(list, cx)? else {
            return Ok(null());
        };
        let init = CypherFn::ToAny.call(vec![self.expr(init, cx)?]);
        let (elem_col, acc_col) = (format!("__x{}", var.name), format!("__a{}", acc.name));
        let mut scope = Scope {
            vars: cx.scope.vars.clone(),
        };
        scope.bind(
            &var.name,
            Binding::Value {
                col: elem_col.clone(),
            },
        );
        scope.bind(
            &acc.name,
            Binding::Value {
                col: acc_col.clone(),
            },
        );
        let extra = DFSchema::try_from(Schema::new(vec![
            Field::new(&elem_col, elem.clone(), true),
            Field::new(&acc_col, ANY, true),
        ]))?;
        let mut schema = cx.schema.clone();
        schema.merge(&extra);
        let inner = ExprCtx {
            scope: &scope,
            schema: &schema,
            overrides: cx.overrides,
            no_aggregates: "inside reduce",
            missing_props_null: cx.missing_props_null,
        };
        let body = self.expr(body, &inner)?;
        let mut rewriter = TypeCoercionRewriter::new(&schema);
        let body = CypherFn::ToAny.call(vec![body.rewrite(&mut rewriter)?.data]);
        let (_, body, captured) =
            self.capture(&[&elem_col, &acc_col], None, Some(body), &schema)?;
        let mut fields = vec![
            Field::new(&elem_col, elem, true),
            Field::new(&acc_col, ANY, true),
        ];
        fields.extend(
            captured
                .iter()
                .map(|(_, n, t)| Field::new(n, t.clone(), true)),
        );
        let body_schema = DFSchema::try_from(Schema::new(fields))?;
        let mut args = vec![l, init];
        args.extend(captured.into_iter().map(|(e, _, _)| e));
        Ok(ListEval::call(
            ListOp::Reduce,
            None,
            body,
            body_schema,
            ANY,
            args,
        ))
    }

    pub(super) fn quantifier_op(kind: ast::Quantifier) -> ListOp {
        match kind {
            ast::Quantifier::All => ListOp::All,
            ast::Quantifier::Any => ListOp::Any,
            ast::Quantifier::None => ListOp::None,
            ast::Quantifier::Single => ListOp::Single,
        }
    }
}

/// Whether `x` reads the row (a column or parameter) but none of the body's own columns
/// (`locals`: the element, an accumulator), and is deterministic: what a comprehension's body
/// captures as an argument.
fn reads_row_only(x: &Expr, locals: &[&str]) -> bool {
    let mut row = false;
    let mut elem = false;
    let _ = x.apply(|y| {
        match y {
            Expr::Column(c) if locals.contains(&c.name.as_str()) => elem = true,
            Expr::Column(_) | Expr::Placeholder(_) => row = true,
            _ => {}
        }
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    });
    row && !elem && !x.is_volatile()
}
