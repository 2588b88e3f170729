//! The syntax tree and its canonical `Display` (parse -> print -> parse gives an equal tree).

use crate::span::Span;
use std::fmt::{self, Display, Formatter, Write};

/// A whole query: single queries combined with UNION / UNION ALL.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub first: SingleQuery,
    /// `(all, query)` for each `UNION [ALL] query`.
    pub unions: Vec<(bool, SingleQuery)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    Match(Match),
    Unwind(Unwind),
    With(With),
    Return(Projection),
    Call(Call),
}

impl Clause {
    pub fn span(&self) -> Span {
        match self {
            Clause::Match(m) => m.span,
            Clause::Unwind(u) => u.span,
            Clause::With(w) => w.projection.span,
            Clause::Return(r) => r.span,
            Clause::Call(c) => c.span,
        }
    }
}

/// `CALL db.index.vector.queryNodes('person_embedding', 10, $q) YIELD node, score WHERE ...`:
/// a procedure's rows, each output it yields bound to a variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The dotted name (`db.index.vector.queryNodes`), as written.
    pub procedure: String,
    pub procedure_span: Span,
    pub args: Vec<Expr>,
    /// `None`: no YIELD, every output bound under its own name.
    pub yields: Option<Vec<YieldItem>>,
    /// `YIELD ... WHERE`: a filter over the yielded variables.
    pub where_: Option<Expr>,
    pub span: Span,
}

/// One output of a procedure, bound to `alias` or its own name.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldItem {
    pub field: Ident,
    pub alias: Option<Ident>,
}

impl YieldItem {
    /// The variable it binds.
    pub fn var(&self) -> &Ident {
        self.alias.as_ref().unwrap_or(&self.field)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub optional: bool,
    pub patterns: Vec<PathPattern>,
    pub where_: Option<Expr>,
    /// Which relationships must differ from each other (relationship uniqueness). `None`,
    /// as parsed: every relationship of the clause. `Some(groups)`: only relationships whose
    /// variables are in one group; a MATCH that several consecutive MATCHes were merged into
    /// keeps each one's uniqueness so.
    pub unique_within: Option<Vec<Vec<String>>>,
    pub span: Span,
}

impl Match {
    /// The MATCH of one pattern (what a pattern expression matches), with `filter` as WHERE.
    pub fn of_pattern(p: &PathPattern, filter: Option<&Expr>) -> Self {
        Match {
            optional: false,
            patterns: vec![p.clone()],
            where_: filter.cloned(),
            unique_within: None,
            span: p.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Unwind {
    pub expr: Expr,
    pub alias: Ident,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct With {
    pub projection: Projection,
    pub where_: Option<Expr>,
    /// `ORDER BY`, `SKIP` / `OFFSET` or `LIMIT` written as a clause of its own: `WITH *` with
    /// them, that also stands where no variable is in scope (`MATCH (:A) LIMIT 2`).
    pub standalone: bool,
}

/// The body shared by WITH and RETURN.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub distinct: bool,
    /// `*` as the first item.
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    pub alias: Option<Ident>,
    /// The expression as written; the result column name when there is no alias.
    pub text: SourceText,
}

impl ProjectionItem {
    /// The column name Cypher gives this item: the alias, or the expression text.
    pub fn name(&self) -> String {
        match &self.alias {
            Some(a) => a.name.clone(),
            None => self.text.0.clone(),
        }
    }
}

/// Source text kept for naming; like spans, it never takes part in equality.
#[derive(Debug, Clone, Default)]
pub struct SourceText(pub String);

impl PartialEq for SourceText {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

impl Ident {
    pub fn new(name: impl Into<String>, span: Span) -> Self {
        Self {
            name: name.into(),
            span,
        }
    }
}

/// Which shortest paths a path pattern asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shortest {
    /// `shortestPath(...)`, `ANY SHORTEST`: one shortest path per pair of ends.
    Any,
    /// `allShortestPaths(...)`, `ALL SHORTEST`: every shortest path per pair of ends.
    All,
    /// `SHORTEST k`: the k shortest paths per pair of ends (of any lengths).
    K(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PathPattern {
    /// `p = (a)-->(b)`: a named path.
    pub name: Option<Ident>,
    /// A shortest-path selector around the pattern, as written (function or GQL form).
    pub shortest: Option<(Shortest, bool)>,
    pub start: NodePattern,
    pub steps: Vec<(RelPattern, NodePattern)>,
    pub span: Span,
}

impl PathPattern {
    /// Its node patterns, in order.
    pub fn nodes(&self) -> impl Iterator<Item = &NodePattern> {
        std::iter::once(&self.start).chain(self.steps.iter().map(|(_, n)| n))
    }

    /// Its node patterns, in order, to change.
    pub fn nodes_mut(&mut self) -> impl Iterator<Item = &mut NodePattern> {
        std::iter::once(&mut self.start).chain(self.steps.iter_mut().map(|(_, n)| n))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodePattern {
    pub var: Option<Ident>,
    /// Labels the node must all have (`:A:B`, `:A&B`).
    pub labels: Vec<Ident>,
    /// The rest of its label expression (`:A|B`, `:!A`, `:%`), which it must satisfy too.
    pub label_expr: Option<LabelExpr>,
    pub props: Option<Expr>,
    pub span: Span,
}

/// A label expression: what labels a node must have.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelExpr {
    Label(Ident),
    /// `%`: any label at all.
    Any(Span),
    Not(Box<LabelExpr>),
    And(Vec<LabelExpr>),
    Or(Vec<LabelExpr>),
}

impl LabelExpr {
    /// Whether a node with exactly `labels` satisfies it.
    pub fn matches<S: AsRef<str>>(&self, labels: &[S]) -> bool {
        match self {
            LabelExpr::Label(l) => labels.iter().any(|x| x.as_ref() == l.name),
            LabelExpr::Any(_) => !labels.is_empty(),
            LabelExpr::Not(e) => !e.matches(labels),
            LabelExpr::And(es) => es.iter().all(|e| e.matches(labels)),
            LabelExpr::Or(es) => es.iter().any(|e| e.matches(labels)),
        }
    }

    /// The label names it mentions, in order.
    pub fn names(&self) -> Vec<&Ident> {
        match self {
            LabelExpr::Label(l) => vec![l],
            LabelExpr::Any(_) => vec![],
            LabelExpr::Not(e) => e.names(),
            LabelExpr::And(es) | LabelExpr::Or(es) => es.iter().flat_map(|e| e.names()).collect(),
        }
    }

    /// The plain labels of a conjunction (`A`, `A&B`); `None` for anything else.
    pub fn conjunction(&self) -> Option<Vec<&Ident>> {
        match self {
            LabelExpr::Label(l) => Some(vec![l]),
            LabelExpr::And(es) => {
                let parts: Option<Vec<Vec<&Ident>>> = es.iter().map(|e| e.conjunction()).collect();
                Some(parts?.into_iter().flatten().collect())
            }
            _ => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            LabelExpr::Label(l) => l.span,
            LabelExpr::Any(s) => *s,
            LabelExpr::Not(e) => e.span(),
            LabelExpr::And(es) | LabelExpr::Or(es) => es
                .iter()
                .map(|e| e.span())
                .reduce(|a, b| a.union(&b))
                .unwrap_or_default(),
        }
    }
}

impl NodePattern {
    /// Whether a node with exactly `labels` satisfies the pattern's label expression.
    pub fn labels_match<S: AsRef<str>>(&self, labels: &[S]) -> bool {
        self.labels
            .iter()
            .all(|l| labels.iter().any(|x| x.as_ref() == l.name))
            && self.label_expr.as_ref().is_none_or(|e| e.matches(labels))
    }

    /// Whether the pattern says anything about labels.
    pub fn has_label_test(&self) -> bool {
        !self.labels.is_empty() || self.label_expr.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `-[]->`
    Outgoing,
    /// `<-[]-`
    Incoming,
    /// `-[]-` (or `<-[]->`)
    Both,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RelPattern {
    pub var: Option<Ident>,
    pub types: Vec<Ident>,
    pub direction: Direction,
    /// `*min..max`; `Some((None, None))` is a bare `*`.
    pub length: Option<(Option<u64>, Option<u64>)>,
    pub props: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Integer(i64),
    Float(f64),
    String(String),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    Xor,
    And,
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    StartsWith,
    EndsWith,
    Contains,
    RegexMatch,
}

impl BinaryOp {
    pub fn symbol(&self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::Xor => "XOR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "=",
            BinaryOp::Neq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "^",
            BinaryOp::In => "IN",
            BinaryOp::StartsWith => "STARTS WITH",
            BinaryOp::EndsWith => "ENDS WITH",
            BinaryOp::Contains => "CONTAINS",
            BinaryOp::RegexMatch => "=~",
        }
    }

    pub fn is_comparison(&self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::Neq
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Not,
    Neg,
    Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    Param(String),
    Variable(String),
    Property(Box<Expr>, Ident),
    List(Vec<Expr>),
    Map(Vec<(Ident, Expr)>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A chain of more than [`CHAIN_MIN`] operands joined by arithmetic operators of one
    /// precedence (`a + b - c + ...`, `a * b / c ...`), evaluated left to right as
    /// `((a + b) - c) + ...`: held flat, so that a machine-written chain of 10^5 terms is no
    /// deeper than one term. Shorter chains are `Binary` trees.
    Chain(Box<Expr>, Vec<(BinaryOp, Expr)>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `n:A:B` label predicate.
    HasLabels(Box<Expr>, LabelExpr),
    /// `count(*)`
    CountStar,
    Function {
        name: String,
        distinct: bool,
        args: Vec<Expr>,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
    },
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `[x IN list WHERE pred | expr]` (`WHERE` and `| expr` optional).
    ListComprehension {
        var: Ident,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    /// `all(x IN list WHERE pred)`, and `any`, `none`, `single`.
    Quantifier {
        kind: Quantifier,
        var: Ident,
        list: Box<Expr>,
        pred: Box<Expr>,
    },
    /// `reduce(acc = init, x IN list | body)`: `body` folded over the list from `init`.
    Reduce {
        acc: Ident,
        init: Box<Expr>,
        var: Ident,
        list: Box<Expr>,
        body: Box<Expr>,
    },
    /// `(a)-[:T]->(b)` as an expression: true when the pattern has a match from the bound
    /// variables (it introduces none).
    PatternPredicate(Box<PathPattern>),
    /// `[p = (a)-->(b) WHERE pred | expr]`: `expr` for every match of the pattern.
    PatternComprehension {
        pattern: Box<PathPattern>,
        filter: Option<Box<Expr>>,
        map: Box<Expr>,
    },
    /// `EXISTS { ... }`, `COUNT { ... }`, `COLLECT { ... }`: a query run per row, seeing the
    /// row's variables. The short form `EXISTS { (a)-->(b) WHERE ... }` is held as its MATCH.
    Subquery(SubqueryKind, Box<SingleQuery>),
}

/// What a subquery expression gives of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubqueryKind {
    /// Whether there is one.
    Exists,
    /// How many.
    Count,
    /// The list of their single column.
    Collect,
}

impl SubqueryKind {
    pub fn keyword(&self) -> &'static str {
        match self {
            SubqueryKind::Exists => "EXISTS",
            SubqueryKind::Count => "COUNT",
            SubqueryKind::Collect => "COLLECT",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    All,
    Any,
    None,
    Single,
}

impl Quantifier {
    pub fn name(&self) -> &'static str {
        match self {
            Quantifier::All => "all",
            Quantifier::Any => "any",
            Quantifier::None => "none",
            Quantifier::Single => "single",
        }
    }
}

/// Operands a chain of one operator (or arithmetic operators of one precedence) holds at most
/// as a `Binary` tree; longer chains are balanced trees (`AND`, `OR`, `XOR`: associative) or
/// a [`ExprKind::Chain`] (arithmetic: evaluated left to right).
pub const CHAIN_MIN: usize = 8;

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Self { kind, span }
    }

    /// The top-level `AND` operands of a predicate (itself when it is no `AND`).
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Binary(BinaryOp::And, l, r) => {
                let mut v = l.conjuncts();
                v.extend(r.conjuncts());
                v
            }
            _ => vec![self],
        }
    }

    /// `a op b op c ...` of an associative operator (`AND`, `OR`, `XOR`): left-deep up to
    /// [`CHAIN_MIN`] operands, else a balanced tree (as deep as the logarithm of their number).
    /// `None` without operands.
    pub fn associative(op: BinaryOp, mut items: Vec<Expr>) -> Option<Expr> {
        fn binary(op: BinaryOp, l: Expr, r: Expr) -> Expr {
            let span = l.span.union(&r.span);
            Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
        }
        fn balanced(op: BinaryOp, mut items: Vec<Expr>) -> Expr {
            if items.len() == 1 {
                return items.pop().expect("one");
            }
            let right = items.split_off(items.len().div_ceil(2));
            binary(op, balanced(op, items), balanced(op, right))
        }
        if items.len() <= CHAIN_MIN {
            let first = (!items.is_empty()).then(|| items.remove(0))?;
            return Some(items.into_iter().fold(first, |l, r| binary(op, l, r)));
        }
        Some(balanced(op, items))
    }

    /// `first op1 e1 op2 e2 ...` of arithmetic operators of one precedence, left to right: a
    /// left-deep `Binary` tree up to [`CHAIN_MIN`] operands, else an [`ExprKind::Chain`].
    pub fn left_chain(first: Expr, rest: Vec<(BinaryOp, Expr)>) -> Expr {
        if rest.len() < CHAIN_MIN {
            return rest.into_iter().fold(first, |l, (op, r)| {
                let span = l.span.union(&r.span);
                Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
            });
        }
        let span = rest
            .last()
            .map_or(first.span, |(_, e)| first.span.union(&e.span));
        Expr::new(ExprKind::Chain(Box::new(first), rest), span)
    }

    /// Direct sub-expressions, in source order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            // A pattern expression or subquery is a scope of its own: its expressions are not
            // this expression's operands (an aggregate in it aggregates its own rows).
            ExprKind::Literal(_)
            | ExprKind::Param(_)
            | ExprKind::Variable(_)
            | ExprKind::CountStar
            | ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Subquery(..) => {
                vec![]
            }
            ExprKind::Property(e, _) | ExprKind::Unary(_, e) | ExprKind::HasLabels(e, _) => vec![e],
            ExprKind::IsNull { expr, .. } => vec![expr],
            ExprKind::List(xs) => xs.iter().collect(),
            ExprKind::Map(kv) => kv.iter().map(|(_, v)| v).collect(),
            ExprKind::Binary(_, l, r) | ExprKind::Index(l, r) => vec![l, r],
            ExprKind::Chain(first, rest) => std::iter::once(first.as_ref())
                .chain(rest.iter().map(|(_, e)| e))
                .collect(),
            ExprKind::Function { args, .. } => args.iter().collect(),
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                let mut v: Vec<&Expr> = operand.iter().map(|b| b.as_ref()).collect();
                for (w, t) in whens {
                    v.push(w);
                    v.push(t);
                }
                v.extend(else_.iter().map(|b| b.as_ref()));
                v
            }
            ExprKind::Slice(e, a, b) => {
                let mut v = vec![e.as_ref()];
                v.extend(a.iter().map(|b| b.as_ref()));
                v.extend(b.iter().map(|b| b.as_ref()));
                v
            }
            ExprKind::ListComprehension {
                list, filter, map, ..
            } => {
                let mut v = vec![list.as_ref()];
                v.extend(filter.iter().map(|b| b.as_ref()));
                v.extend(map.iter().map(|b| b.as_ref()));
                v
            }
            ExprKind::Quantifier { list, pred, .. } => vec![list, pred],
            ExprKind::Reduce {
                init, list, body, ..
            } => vec![init, list, body],
        }
    }

    /// [`Expr::children`], mutable.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Literal(_)
            | ExprKind::Param(_)
            | ExprKind::Variable(_)
            | ExprKind::CountStar
            | ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Subquery(..) => vec![],
            ExprKind::Property(e, _) | ExprKind::Unary(_, e) | ExprKind::HasLabels(e, _) => vec![e],
            ExprKind::IsNull { expr, .. } => vec![expr],
            ExprKind::List(xs) => xs.iter_mut().collect(),
            ExprKind::Map(kv) => kv.iter_mut().map(|(_, v)| v).collect(),
            ExprKind::Binary(_, l, r) | ExprKind::Index(l, r) => vec![l, r],
            ExprKind::Chain(first, rest) => std::iter::once(first.as_mut())
                .chain(rest.iter_mut().map(|(_, e)| e))
                .collect(),
            ExprKind::Function { args, .. } => args.iter_mut().collect(),
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                let mut v: Vec<&mut Expr> = operand.iter_mut().map(|b| b.as_mut()).collect();
                for (w, t) in whens {
                    v.push(w);
                    v.push(t);
                }
                v.extend(else_.iter_mut().map(|b| b.as_mut()));
                v
            }
            ExprKind::Slice(e, a, b) => {
                let mut v = vec![e.as_mut()];
                v.extend(a.iter_mut().map(|b| b.as_mut()));
                v.extend(b.iter_mut().map(|b| b.as_mut()));
                v
            }
            ExprKind::ListComprehension {
                list, filter, map, ..
            } => {
                let mut v = vec![list.as_mut()];
                v.extend(filter.iter_mut().map(|b| b.as_mut()));
                v.extend(map.iter_mut().map(|b| b.as_mut()));
                v
            }
            ExprKind::Quantifier { list, pred, .. } => vec![list, pred],
            ExprKind::Reduce {
                init, list, body, ..
            } => vec![init, list, body],
        }
    }

    /// Pre-order walk; `f` returns false to stop descending below a node.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr) -> bool) {
        if f(self) {
            for c in self.children() {
                c.walk(f);
            }
        }
    }
}

impl Expr {
    /// A pattern expression or subquery expression.
    pub fn is_subquery(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::PatternPredicate(_)
                | ExprKind::PatternComprehension { .. }
                | ExprKind::Subquery(..)
        )
    }

    /// A pattern expression or subquery, or a call that reads the graph the same way
    /// (`startNode(r)`, `endNode(r)`: the relationship matched again).
    pub fn reads_graph(&self) -> bool {
        self.is_subquery()
            || matches!(&self.kind, ExprKind::Function { name, .. }
                if name.eq_ignore_ascii_case("startNode") || name.eq_ignore_ascii_case("endNode"))
    }

    /// True when a pattern expression or subquery stands anywhere in this expression, or
    /// another expression that reads the graph (`startNode(r)`, `endNode(r)`).
    pub fn contains_subquery(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            found |= e.reads_graph();
            !found
        });
        found
    }

    /// Every variable name this expression mentions, at any depth, inside pattern
    /// expressions and subqueries too (their own variables included).
    pub fn mentioned_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        self.walk(&mut |e| {
            match &e.kind {
                ExprKind::Variable(v) => out.push(v),
                ExprKind::PatternPredicate(p) => p.mentioned_names(out),
                ExprKind::PatternComprehension {
                    pattern,
                    filter,
                    map,
                } => {
                    pattern.mentioned_names(out);
                    for x in filter.iter().chain(std::iter::once(map)) {
                        x.mentioned_names(out);
                    }
                }
                ExprKind::Subquery(_, q) => q.mentioned_names(out),
                _ => {}
            }
            true
        });
    }
}

impl PathPattern {
    /// The variables the pattern declares: its name, then each node's and relationship's in
    /// the order written.
    pub fn variables(&self) -> impl Iterator<Item = &Ident> {
        let steps = self
            .steps
            .iter()
            .flat_map(|(r, n)| r.var.iter().chain(n.var.iter()));
        self.name.iter().chain(self.start.var.iter()).chain(steps)
    }

    /// The variables of the pattern and those its property maps read.
    pub fn mentioned_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        out.extend(self.name.iter().map(|n| n.name.as_str()));
        let nodes = std::iter::once(&self.start).chain(self.steps.iter().map(|(_, n)| n));
        for n in nodes {
            out.extend(n.var.iter().map(|v| v.name.as_str()));
            n.props.iter().for_each(|p| p.mentioned_names(out));
        }
        for (r, _) in &self.steps {
            out.extend(r.var.iter().map(|v| v.name.as_str()));
            r.props.iter().for_each(|p| p.mentioned_names(out));
        }
    }
}

impl SingleQuery {
    /// Every variable name the clauses mention (see [`Expr::mentioned_names`]).
    pub fn mentioned_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        self.clauses.iter().for_each(|c| c.mentioned_names(out));
    }
}

impl Clause {
    /// Every variable name the clause mentions (see [`Expr::mentioned_names`]).
    pub fn mentioned_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Clause::Match(m) => {
                m.patterns.iter().for_each(|p| p.mentioned_names(out));
                m.where_.iter().for_each(|w| w.mentioned_names(out));
            }
            Clause::Unwind(u) => u.expr.mentioned_names(out),
            Clause::With(w) => {
                w.projection.mentioned_names(out);
                w.where_.iter().for_each(|w| w.mentioned_names(out));
            }
            Clause::Return(r) => r.mentioned_names(out),
            Clause::Call(c) => {
                c.args.iter().for_each(|a| a.mentioned_names(out));
                c.where_.iter().for_each(|w| w.mentioned_names(out));
            }
        }
    }
}

impl Projection {
    /// `*`: every variable in scope, as it is, nothing sorted or cut.
    pub fn star(span: Span) -> Self {
        Projection {
            distinct: false,
            star: true,
            items: vec![],
            order_by: vec![],
            skip: None,
            limit: None,
            span,
        }
    }

    /// Whether it has a SKIP or a LIMIT.
    pub fn cuts(&self) -> bool {
        self.skip.is_some() || self.limit.is_some()
    }

    fn mentioned_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        self.items.iter().for_each(|i| i.expr.mentioned_names(out));
        self.order_by
            .iter()
            .for_each(|s| s.expr.mentioned_names(out));
    }
}

/// Aggregating function names (lower case).
pub const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "collect",
    "stdev",
    "stdevp",
    "percentiledisc",
    "percentilecont",
];

impl Expr {
    /// True when the expression contains an aggregate call.
    #[recursive::recursive]
    pub fn contains_aggregate(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            found |= e.is_aggregate();
            !found
        });
        found
    }

    /// A call of an aggregate function (`count(*)`, `sum(x)`, ...).
    pub fn is_aggregate(&self) -> bool {
        match &self.kind {
            ExprKind::CountStar => true,
            ExprKind::Function { name, .. } => AGGREGATES.contains(&name.to_lowercase().as_str()),
            _ => false,
        }
    }

    /// The aggregate calls in this expression, in source order, not those inside another one.
    pub fn aggregate_calls(&self) -> Vec<&Expr> {
        if self.is_aggregate() {
            return vec![self];
        }
        self.children()
            .into_iter()
            .flat_map(|c| c.aggregate_calls())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Display: canonical text. Binary and unary expressions are fully parenthesised so that the
// printed text re-parses to the same tree whatever the precedence.

/// Prints an identifier, backquoting it when it is not a plain word.
pub fn fmt_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !crate::parser::is_reserved(name);
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// Prints a string literal with single quotes and escapes.
pub fn fmt_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Integer(i) => write!(f, "{i}"),
            Literal::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x:?}")
                }
            }
            Literal::String(s) => f.write_str(&fmt_string(s)),
            Literal::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Literal::Null => f.write_str("null"),
        }
    }
}

fn comma_list<T: Display>(f: &mut Formatter<'_>, xs: &[T]) -> fmt::Result {
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

impl Display for Expr {
    #[recursive::recursive]
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(l) => write!(f, "{l}"),
            ExprKind::Param(p) => write!(f, "${}", fmt_ident(p)),
            ExprKind::Variable(v) => f.write_str(&fmt_ident(v)),
            ExprKind::Property(e, k) => write!(f, "{e}.{}", fmt_ident(&k.name)),
            ExprKind::List(xs) => {
                f.write_str("[")?;
                comma_list(f, xs)?;
                f.write_str("]")
            }
            ExprKind::Map(kv) => fmt_map(f, kv),
            ExprKind::Unary(UnaryOp::Not, e) => write!(f, "(NOT {e})"),
            ExprKind::Unary(UnaryOp::Neg, e) => write!(f, "(-{e})"),
            ExprKind::Unary(UnaryOp::Pos, e) => write!(f, "(+{e})"),
            ExprKind::Binary(op, l, r) => write!(f, "({l} {} {r})", op.symbol()),
            ExprKind::Chain(first, rest) => {
                write!(f, "({first}")?;
                for (op, e) in rest {
                    write!(f, " {} {e}", op.symbol())?;
                }
                f.write_str(")")
            }
            ExprKind::IsNull { expr, negated } => {
                write!(f, "({expr} IS {}NULL)", if *negated { "NOT " } else { "" })
            }
            ExprKind::HasLabels(e, ls) => match ls.conjunction() {
                Some(names) => {
                    write!(f, "({e}")?;
                    for l in names {
                        write!(f, ":{}", fmt_ident(&l.name))?;
                    }
                    f.write_str(")")
                }
                None => write!(f, "({e}:{ls})"),
            },
            ExprKind::CountStar => f.write_str("count(*)"),
            ExprKind::Function {
                name,
                distinct,
                args,
            } => {
                write!(f, "{}(", fmt_ident(name))?;
                if *distinct {
                    f.write_str("DISTINCT ")?;
                }
                comma_list(f, args)?;
                f.write_str(")")
            }
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => fmt_case(f, operand.as_deref(), whens, else_.as_deref()),
            ExprKind::Index(e, i) => write!(f, "{e}[{i}]"),
            ExprKind::Slice(e, a, b) => {
                write!(f, "{e}[")?;
                if let Some(a) = a {
                    write!(f, "{a}")?;
                }
                f.write_str("..")?;
                b.iter().try_for_each(|b| write!(f, "{b}"))?;
                f.write_str("]")
            }
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => {
                write!(f, "[{} IN {list}", fmt_ident(&var.name))?;
                if let Some(w) = filter {
                    write!(f, " WHERE {w}")?;
                }
                if let Some(m) = map {
                    write!(f, " | {m}")?;
                }
                f.write_str("]")
            }
            ExprKind::Quantifier {
                kind,
                var,
                list,
                pred,
            } => write!(
                f,
                "{}({} IN {list} WHERE {pred})",
                kind.name(),
                fmt_ident(&var.name)
            ),
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                body,
            } => write!(
                f,
                "reduce({} = {init}, {} IN {list} | {body})",
                fmt_ident(&acc.name),
                fmt_ident(&var.name)
            ),
            ExprKind::PatternPredicate(p) => write!(f, "{p}"),
            ExprKind::PatternComprehension {
                pattern,
                filter,
                map,
            } => {
                write!(f, "[{pattern}")?;
                if let Some(w) = filter {
                    write!(f, " WHERE {w}")?;
                }
                write!(f, " | {map}]")
            }
            ExprKind::Subquery(kind, q) => write!(f, "{} {{ {q} }}", kind.keyword()),
        }
    }
}

/// `{k: v, ...}`.
fn fmt_map(f: &mut Formatter<'_>, kv: &[(Ident, Expr)]) -> fmt::Result {
    f.write_str("{")?;
    for (i, (k, v)) in kv.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{}: {v}", fmt_ident(&k.name))?;
    }
    f.write_str("}")
}

/// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
fn fmt_case(
    f: &mut Formatter<'_>,
    operand: Option<&Expr>,
    whens: &[(Expr, Expr)],
    else_: Option<&Expr>,
) -> fmt::Result {
    f.write_str("CASE")?;
    if let Some(o) = operand {
        write!(f, " {o}")?;
    }
    for (w, t) in whens {
        write!(f, " WHEN {w} THEN {t}")?;
    }
    if let Some(e) = else_ {
        write!(f, " ELSE {e}")?;
    }
    f.write_str(" END")
}

impl Display for NodePattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        if let Some(v) = &self.var {
            f.write_str(&fmt_ident(&v.name))?;
        }
        for l in &self.labels {
            write!(f, ":{}", fmt_ident(&l.name))?;
        }
        if let Some(e) = &self.label_expr {
            if self.labels.is_empty() {
                write!(f, ":{e}")?;
            } else {
                // `(n:A&(B|C))`: a colon list and `&` can't be mixed.
                f.write_str("&")?;
                write!(f, "{}", LabelAtom(e))?;
            }
        }
        if let Some(p) = &self.props {
            if self.var.is_some() || self.has_label_test() {
                f.write_str(" ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")
    }
}

impl Display for LabelExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let join = |f: &mut Formatter<'_>, es: &[LabelExpr], sep: &str| {
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                write!(f, "{}", LabelAtom(e))?;
            }
            Ok(())
        };
        match self {
            LabelExpr::Label(l) => f.write_str(&fmt_ident(&l.name)),
            LabelExpr::Any(_) => f.write_str("%"),
            LabelExpr::Not(e) => write!(f, "!{}", LabelAtom(e)),
            LabelExpr::And(es) => join(f, es, "&"),
            LabelExpr::Or(es) => join(f, es, "|"),
        }
    }
}

/// A label expression as an operand: parenthesised unless it is a name, `%` or a negation.
struct LabelAtom<'a>(&'a LabelExpr);

impl Display for LabelAtom<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            LabelExpr::And(_) | LabelExpr::Or(_) => write!(f, "({})", self.0),
            e => write!(f, "{e}"),
        }
    }
}

impl Display for RelPattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(if self.direction == Direction::Incoming {
            "<-["
        } else {
            "-["
        })?;
        if let Some(v) = &self.var {
            f.write_str(&fmt_ident(&v.name))?;
        }
        for (i, t) in self.types.iter().enumerate() {
            f.write_str(if i == 0 { ":" } else { "|" })?;
            f.write_str(&fmt_ident(&t.name))?;
        }
        if let Some((lo, hi)) = &self.length {
            f.write_str("*")?;
            match (lo, hi) {
                (None, None) => {}
                (Some(a), Some(b)) if a == b => write!(f, "{a}")?,
                (lo, hi) => {
                    if let Some(a) = lo {
                        write!(f, "{a}")?;
                    }
                    f.write_str("..")?;
                    if let Some(b) = hi {
                        write!(f, "{b}")?;
                    }
                }
            }
        }
        if let Some(p) = &self.props {
            write!(f, " {p}")?;
        }
        f.write_str(if self.direction == Direction::Outgoing {
            "]->"
        } else {
            "]-"
        })
    }
}

impl Display for PathPattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.name {
            write!(f, "{} = ", fmt_ident(&n.name))?;
        }
        let close = match self.shortest {
            None => "",
            Some((Shortest::Any, true)) => {
                f.write_str("shortestPath(")?;
                ")"
            }
            Some((Shortest::All, true)) => {
                f.write_str("allShortestPaths(")?;
                ")"
            }
            Some((Shortest::Any, false)) => {
                f.write_str("ANY SHORTEST ")?;
                ""
            }
            Some((Shortest::All, false)) => {
                f.write_str("ALL SHORTEST ")?;
                ""
            }
            Some((Shortest::K(k), _)) => {
                write!(f, "SHORTEST {k} ")?;
                ""
            }
        };
        write!(f, "{}", self.start)?;
        for (r, n) in &self.steps {
            write!(f, "{r}{n}")?;
        }
        f.write_str(close)
    }
}

impl Display for ProjectionItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        if let Some(a) = &self.alias {
            write!(f, " AS {}", fmt_ident(&a.name))?;
        }
        Ok(())
    }
}

impl Display for Projection {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        if self.star {
            f.write_str("*")?;
            if !self.items.is_empty() {
                f.write_str(", ")?;
            }
        }
        comma_list(f, &self.items)?;
        if !self.order_by.is_empty() {
            f.write_str(" ORDER BY ")?;
            for (i, s) in self.order_by.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}{}", s.expr, if s.descending { " DESC" } else { "" })?;
            }
        }
        if let Some(s) = &self.skip {
            write!(f, " SKIP {s}")?;
        }
        if let Some(l) = &self.limit {
            write!(f, " LIMIT {l}")?;
        }
        Ok(())
    }
}

impl Display for Clause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Clause::Match(m) => {
                if m.optional {
                    f.write_str("OPTIONAL ")?;
                }
                f.write_str("MATCH ")?;
                comma_list(f, &m.patterns)?;
                if let Some(w) = &m.where_ {
                    write!(f, " WHERE {w}")?;
                }
                Ok(())
            }
            Clause::Unwind(u) => write!(f, "UNWIND {} AS {}", u.expr, fmt_ident(&u.alias.name)),
            Clause::With(w) if w.standalone => {
                // `* ORDER BY ...`: the projection's sort and cut, as written.
                let p = w.projection.to_string();
                f.write_str(p.strip_prefix("* ").unwrap_or(&p))
            }
            Clause::With(w) => {
                write!(f, "WITH {}", w.projection)?;
                if let Some(wh) = &w.where_ {
                    write!(f, " WHERE {wh}")?;
                }
                Ok(())
            }
            Clause::Return(r) => write!(f, "RETURN {r}"),
            Clause::Call(c) => {
                write!(f, "CALL {}(", c.procedure)?;
                comma_list(f, &c.args)?;
                f.write_str(")")?;
                if let Some(ys) = &c.yields {
                    f.write_str(" YIELD ")?;
                    for (i, y) in ys.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        f.write_str(&fmt_ident(&y.field.name))?;
                        if let Some(a) = &y.alias {
                            write!(f, " AS {}", fmt_ident(&a.name))?;
                        }
                    }
                }
                if let Some(w) = &c.where_ {
                    write!(f, " WHERE {w}")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for SingleQuery {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clauses.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first)?;
        for (all, q) in &self.unions {
            write!(f, " UNION {}{q}", if *all { "ALL " } else { "" })?;
        }
        Ok(())
    }
}
