//! Recursive-descent parser with precedence climbing for the Cypher subset.

use crate::ast::*;
use crate::span::{ErrorKind, Location, ParseError, Span};
use crate::token::{tokenize, SpannedToken, Token};

/// Deepest expression accepted before giving up with an error (instead of overflowing a
/// stack later): brackets, function calls and operator chains each count a level per link,
/// so `a OR b OR c` is three levels deep, as deep as the tree it becomes.
pub const DEFAULT_RECURSION_LIMIT: usize = 200;

/// Most relationships in one MATCH (all its patterns): every pair of them gets a uniqueness
/// check, and planning cost grows faster than the pair count.
pub const MAX_PATTERN_LENGTH: usize = 32;

/// Most queries joined by UNION.
pub const MAX_UNION_BRANCHES: usize = 1000;

const RESERVED: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "WITH",
    "RETURN",
    "UNWIND",
    "AS",
    "DISTINCT",
    "ORDER",
    "BY",
    "ASC",
    "ASCENDING",
    "DESC",
    "DESCENDING",
    "SKIP",
    "LIMIT",
    "UNION",
    "ALL",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CREATE",
    "MERGE",
    "SET",
    "DELETE",
    "DETACH",
    "REMOVE",
    "CALL",
    "FOREACH",
    "LOAD",
    "YIELD",
];

/// Clauses the engine rejects: those that write, then others it does not run.
const WRITE_CLAUSES: &[&str] = &[
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD", "CALL",
];

/// How many of [`WRITE_CLAUSES`] write.
const WRITING: usize = 7;

/// Words that must be backquoted to be used as identifiers in canonical output.
pub fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// Parses a whole query.
pub fn parse_query(src: &str) -> Result<Query, ParseError> {
    Parser::new(src)?.query()
}

/// Parses a single expression (used for `--param k=v` values).
pub fn parse_expression(src: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(src)?;
    let e = p.expr()?;
    p.expect_eof()?;
    Ok(e)
}

/// A pattern predicate (`(a)-->(b)`) stands only where a predicate does: a WHERE, an operand
/// of NOT / AND / OR / XOR, a CASE condition, a comprehension's or quantifier's WHERE, or
/// `exists(...)`; as a value (`RETURN (a)-->(b)`) it is a syntax error.
/// A node pattern's label expression as the plain labels it requires and the rest.
fn split_label_expression(e: LabelExpr) -> (Vec<Ident>, Option<LabelExpr>) {
    let items = match e {
        LabelExpr::And(items) => items,
        e => vec![e],
    };
    let mut labels = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        match item {
            LabelExpr::Label(l) => labels.push(l),
            other => rest.push(other),
        }
    }
    let rest = match rest.len() {
        0 => None,
        1 => rest.pop(),
        _ => Some(LabelExpr::And(rest)),
    };
    (labels, rest)
}

fn predicates_only_as_predicates(sq: &SingleQuery) -> PResult<()> {
    fn check(e: &Expr, predicate: bool) -> PResult<()> {
        let mut stack = vec![(e, predicate)];
        while let Some((e, predicate)) = stack.pop() {
            match &e.kind {
                ExprKind::PatternPredicate(p) => {
                    if !predicate {
                        return Err(ParseError::new(
                            ErrorKind::UnexpectedSyntax,
                            "A pattern expression can only be used as a predicate (use \
                             EXISTS { ... }, COUNT { ... } or a pattern comprehension)",
                            e.span,
                        ));
                    }
                    pattern(p)?;
                }
                ExprKind::PatternComprehension {
                    pattern: p,
                    filter,
                    map,
                } => {
                    pattern(p)?;
                    stack.extend(filter.iter().map(|f| (f.as_ref(), true)));
                    stack.push((map, false));
                }
                ExprKind::Subquery(_, q) => predicates_only_as_predicates(q)?,
                ExprKind::Unary(UnaryOp::Not, x) => stack.push((x, true)),
                ExprKind::Binary(BinaryOp::And | BinaryOp::Or | BinaryOp::Xor, l, r) => {
                    stack.push((l, true));
                    stack.push((r, true));
                }
                ExprKind::Function { name, args, .. } if name.eq_ignore_ascii_case("exists") => {
                    stack.extend(args.iter().map(|a| (a, true)))
                }
                ExprKind::Case {
                    operand,
                    whens,
                    else_,
                } => {
                    stack.extend(operand.iter().map(|o| (o.as_ref(), false)));
                    for (w, t) in whens {
                        stack.push((w, operand.is_none()));
                        stack.push((t, false));
                    }
                    stack.extend(else_.iter().map(|x| (x.as_ref(), false)));
                }
                ExprKind::ListComprehension {
                    list, filter, map, ..
                } => {
                    stack.push((list, false));
                    stack.extend(filter.iter().map(|f| (f.as_ref(), true)));
                    stack.extend(map.iter().map(|m| (m.as_ref(), false)));
                }
                ExprKind::Quantifier { list, pred, .. } => {
                    stack.push((list, false));
                    stack.push((pred, true));
                }
                _ => stack.extend(e.children().into_iter().map(|c| (c, false))),
            }
        }
        Ok(())
    }
    fn pattern(p: &PathPattern) -> PResult<()> {
        let nodes = std::iter::once(&p.start).chain(p.steps.iter().map(|(_, n)| n));
        for props in nodes
            .filter_map(|n| n.props.as_ref())
            .chain(p.steps.iter().filter_map(|(r, _)| r.props.as_ref()))
        {
            check(props, false)?;
        }
        Ok(())
    }
    let projection = |p: &Projection| -> PResult<()> {
        p.items.iter().try_for_each(|i| check(&i.expr, false))?;
        p.order_by.iter().try_for_each(|s| check(&s.expr, false))
    };
    for c in &sq.clauses {
        match c {
            Clause::Match(m) => {
                m.patterns.iter().try_for_each(pattern)?;
                m.where_.iter().try_for_each(|w| check(w, true))?;
            }
            Clause::Unwind(u) => check(&u.expr, false)?,
            Clause::With(w) => {
                projection(&w.projection)?;
                w.where_.iter().try_for_each(|w| check(w, true))?;
            }
            Clause::Return(r) => projection(r)?,
            Clause::Call(c) => {
                c.args.iter().try_for_each(|a| check(a, false))?;
                c.where_.iter().try_for_each(|w| check(w, true))?;
            }
        }
    }
    Ok(())
}

pub struct Parser<'a> {
    src: &'a str,
    tokens: Vec<SpannedToken>,
    pos: usize,
    depth: usize,
    recursion_limit: usize,
    /// Parsing a comprehension's WHERE, which a top-level `|` ends.
    pipe_ends_filter: bool,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> PResult<Self> {
        Ok(Self {
            src,
            tokens: tokenize(src)?,
            pos: 0,
            depth: 0,
            recursion_limit: DEFAULT_RECURSION_LIMIT,
            pipe_ends_filter: false,
        })
    }

    pub fn with_recursion_limit(mut self, limit: usize) -> Self {
        self.recursion_limit = limit;
        self
    }

    // --- token helpers -------------------------------------------------------------------

    fn peek(&self) -> &Token {
        &self.tokens[self.pos].token
    }

    fn peek_at(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.tokens.len() - 1);
        &self.tokens[i].token
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_end(&self) -> Location {
        if self.pos == 0 {
            self.tokens[0].span.start
        } else {
            self.tokens[self.pos - 1].span.end
        }
    }

    fn span_from(&self, start: Location) -> Span {
        Span::new(start, self.prev_end())
    }

    fn advance(&mut self) -> SpannedToken {
        let t = self.tokens[self.pos].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at(&self, t: &Token) -> bool {
        self.peek() == t
    }

    fn eat(&mut self, t: &Token) -> bool {
        if self.at(t) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn is_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    fn is_kw_at(&self, n: usize, kw: &str) -> bool {
        matches!(self.peek_at(n), Token::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn error(&self, expected: &str) -> ParseError {
        let t = &self.tokens[self.pos];
        ParseError::new(
            ErrorKind::UnexpectedSyntax,
            format!("Expected: {expected}, found: {}", t.token),
            t.span,
        )
    }

    fn expect(&mut self, t: &Token, expected: &str) -> PResult<Span> {
        if self.at(t) {
            Ok(self.advance().span)
        } else {
            Err(self.error(expected))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.is_kw(kw) {
            Ok(self.advance().span)
        } else {
            Err(self.error(kw))
        }
    }

    fn expect_eof(&mut self) -> PResult<()> {
        while self.eat(&Token::Semicolon) {}
        if self.at(&Token::Eof) {
            Ok(())
        } else {
            Err(self.error("end of input"))
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.recursion_limit {
            return Err(ParseError::new(
                ErrorKind::RecursionLimit,
                format!(
                    "Query nests deeper than the limit of {} levels",
                    self.recursion_limit
                ),
                self.span(),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn unsupported(&self, what: &str, span: Span) -> ParseError {
        ParseError::new(ErrorKind::Unsupported, format!("unsupported: {what}"), span)
    }

    /// An identifier: a non-reserved word or a backquoted name.
    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Token::Quoted(s) => {
                let sp = self.advance().span;
                Ok(Ident::new(s, sp))
            }
            Token::Word(w) if !is_reserved(&w) => {
                let sp = self.advance().span;
                Ok(Ident::new(w, sp))
            }
            _ => Err(self.error(what)),
        }
    }

    /// A name after `.` or `:` or as a map key: any word, reserved or not.
    fn symbolic_name(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Token::Quoted(s) | Token::Word(s) => {
                let sp = self.advance().span;
                Ok(Ident::new(s, sp))
            }
            _ => Err(self.error(what)),
        }
    }

    // --- clauses -------------------------------------------------------------------------

    pub fn query(&mut self) -> PResult<Query> {
        let first = self.single_query()?;
        let mut unions = Vec::new();
        while self.is_kw("UNION") {
            if unions.len() + 1 == MAX_UNION_BRANCHES {
                return Err(ParseError::new(
                    ErrorKind::RecursionLimit,
                    format!("More than {MAX_UNION_BRANCHES} queries joined by UNION"),
                    self.span(),
                ));
            }
            let at = self.span();
            self.advance();
            let all = self.eat_kw("ALL");
            if unions.first().is_some_and(|(first, _)| *first != all) {
                return Err(ParseError::new(
                    ErrorKind::InvalidClauseComposition,
                    "UNION and UNION ALL cannot be combined in one query",
                    at,
                ));
            }
            unions.push((all, self.single_query()?));
        }
        self.expect_eof()?;
        let q = Query { first, unions };
        for sq in std::iter::once(&q.first).chain(q.unions.iter().map(|(_, sq)| sq)) {
            predicates_only_as_predicates(sq)?;
        }
        Ok(q)
    }

    fn single_query(&mut self) -> PResult<SingleQuery> {
        self.clauses(false)
    }

    /// Clauses up to and with RETURN; in a subquery (`nested`), up to the closing `}`, RETURN
    /// optional.
    fn clauses(&mut self, nested: bool) -> PResult<SingleQuery> {
        let start = self.span().start;
        let mut clauses = Vec::new();
        loop {
            if self.is_kw("CALL") && !matches!(self.peek_at(1), Token::LBrace) {
                let call = self.call_clause()?;
                let standalone = clauses.is_empty()
                    && !nested
                    && (matches!(self.peek(), Token::Eof | Token::Semicolon)
                        || self.is_kw("UNION"));
                let span = call.span;
                clauses.push(Clause::Call(call));
                if standalone {
                    // `CALL p(...)` alone returns what it yields.
                    clauses.push(Clause::Return(Projection::star(span)));
                    break;
                }
                continue;
            }
            if let Token::Word(w) = self.peek() {
                if let Some(i) = WRITE_CLAUSES.iter().position(|k| k.eq_ignore_ascii_case(w)) {
                    let kw = WRITE_CLAUSES[i];
                    let kind = if i < WRITING {
                        ErrorKind::WriteClause
                    } else {
                        ErrorKind::Unsupported
                    };
                    let why = match kw {
                        "CALL" => "unsupported: CALL { ... } subqueries (procedure calls, \
                                   `CALL name(...)`, are answered)"
                            .to_string(),
                        _ => format!("unsupported: {kw} (lance-csr answers read-only queries)"),
                    };
                    return Err(ParseError::new(kind, why, self.span()));
                }
            }
            if self.is_kw("MATCH") || (self.is_kw("OPTIONAL") && self.is_kw_at(1, "MATCH")) {
                clauses.push(Clause::Match(self.match_clause()?));
            } else if self.is_kw("UNWIND") {
                clauses.push(Clause::Unwind(self.unwind_clause()?));
            } else if self.is_kw("WITH") {
                self.advance();
                let projection = self.projection(start)?;
                let where_ = if self.eat_kw("WHERE") {
                    Some(self.expr()?)
                } else {
                    None
                };
                clauses.push(Clause::With(With {
                    projection,
                    where_,
                    standalone: false,
                }));
            } else if !clauses.is_empty()
                && (self.is_kw("ORDER") && self.is_kw_at(1, "BY")
                    || ["SKIP", "OFFSET", "LIMIT"].iter().any(|k| self.is_kw(k)))
            {
                // `ORDER BY`, `SKIP` / `OFFSET` and `LIMIT` as a clause (Cypher 25): the rows so
                // far sorted and cut, every variable kept, as `WITH * ORDER BY ... LIMIT ...`.
                let s = self.span().start;
                let (order_by, skip, limit) = self.order_skip_limit()?;
                let projection = Projection {
                    order_by,
                    skip,
                    limit,
                    ..Projection::star(self.span_from(s))
                };
                clauses.push(Clause::With(With {
                    projection,
                    where_: None,
                    standalone: true,
                }));
            } else if self.is_kw("RETURN") {
                let s = self.advance().span.start;
                let r = self.projection(s)?;
                clauses.push(Clause::Return(r));
                break;
            } else if nested && !clauses.is_empty() && self.at(&Token::RBrace) {
                break;
            } else if clauses.is_empty() {
                return Err(self.error("MATCH, OPTIONAL MATCH, UNWIND, WITH, CALL or RETURN"));
            } else if matches!(self.peek(), Token::Eof | Token::Semicolon) || self.is_kw("UNION") {
                return Err(ParseError::new(
                    ErrorKind::UnexpectedSyntax,
                    "Query cannot conclude with MATCH, UNWIND or WITH (must be RETURN)",
                    self.span(),
                ));
            } else {
                return Err(
                    self.error("MATCH, OPTIONAL MATCH, UNWIND, WITH, CALL, RETURN or UNION")
                );
            }
        }
        Ok(SingleQuery {
            clauses,
            span: self.span_from(start),
        })
    }

    fn match_clause(&mut self) -> PResult<Match> {
        let start = self.span().start;
        let optional = self.eat_kw("OPTIONAL");
        self.expect_kw("MATCH")?;
        let mut patterns = vec![self.path_pattern(0)?];
        while self.eat(&Token::Comma) {
            let before = patterns.iter().map(|p: &PathPattern| p.steps.len()).sum();
            patterns.push(self.path_pattern(before)?);
        }
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Match {
            optional,
            patterns,
            where_,
            unique_within: None,
            span: self.span_from(start),
        })
    }

    /// `CALL name.space.proc(args) [YIELD field [AS var], ... [WHERE pred]]`.
    fn call_clause(&mut self) -> PResult<Call> {
        let start = self.advance().span.start;
        let first = self.symbolic_name("a procedure name")?;
        let mut procedure = first.name;
        let mut name_span = first.span;
        while self.eat(&Token::Dot) {
            let part = self.symbolic_name("a procedure name")?;
            procedure.push('.');
            procedure.push_str(&part.name);
            name_span = name_span.union(&part.span);
        }
        self.expect(&Token::LParen, "'(' and the procedure's arguments")?;
        let mut args = Vec::new();
        if !self.at(&Token::RParen) {
            args.push(self.expr()?);
            while self.eat(&Token::Comma) {
                args.push(self.expr()?);
            }
        }
        self.expect(&Token::RParen, "')' closing the arguments")?;
        let mut yields = None;
        let mut where_ = None;
        if self.eat_kw("YIELD") {
            if self.at(&Token::Star) {
                // Every output, as without YIELD.
                self.advance();
            } else {
                let mut items = Vec::new();
                loop {
                    let field = self.symbolic_name("an output name")?;
                    let alias = if self.eat_kw("AS") {
                        Some(self.ident("variable name")?)
                    } else {
                        None
                    };
                    items.push(YieldItem { field, alias });
                    if !self.eat(&Token::Comma) {
                        break;
                    }
                }
                yields = Some(items);
            }
            if self.eat_kw("WHERE") {
                where_ = Some(self.expr()?);
            }
        }
        Ok(Call {
            procedure,
            procedure_span: name_span,
            args,
            yields,
            where_,
            span: self.span_from(start),
        })
    }

    fn unwind_clause(&mut self) -> PResult<Unwind> {
        let start = self.advance().span.start;
        let expr = self.expr()?;
        self.expect_kw("AS")?;
        let alias = self.ident("variable name")?;
        Ok(Unwind {
            expr,
            alias,
            span: self.span_from(start),
        })
    }

    fn projection(&mut self, start: Location) -> PResult<Projection> {
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(&Token::Star) {
            star = true;
            while self.eat(&Token::Comma) {
                items.push(self.projection_item()?);
            }
        } else {
            items.push(self.projection_item()?);
            while self.eat(&Token::Comma) {
                items.push(self.projection_item()?);
            }
        }
        let (order_by, skip, limit) = self.order_skip_limit()?;
        Ok(Projection {
            distinct,
            star,
            items,
            order_by,
            skip,
            limit,
            span: self.span_from(start),
        })
    }

    /// `[ORDER BY items] [SKIP | OFFSET n] [LIMIT n]`, after a projection or as a clause.
    #[allow(clippy::type_complexity)]
    fn order_skip_limit(&mut self) -> PResult<(Vec<SortItem>, Option<Expr>, Option<Expr>)> {
        let mut order_by = Vec::new();
        if self.is_kw("ORDER") {
            self.advance();
            self.expect_kw("BY")?;
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                order_by.push(SortItem { expr, descending });
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        // OFFSET: GQL's name for SKIP.
        let skip = if self.eat_kw("SKIP") || self.eat_kw("OFFSET") {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_kw("LIMIT") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok((order_by, skip, limit))
    }

    fn projection_item(&mut self) -> PResult<ProjectionItem> {
        let start = self.span().start;
        let expr = self.expr()?;
        let end = self.prev_end();
        let text = SourceText(self.src[start.offset..end.offset].to_string());
        let alias = if self.eat_kw("AS") {
            Some(self.ident("alias name")?)
        } else {
            None
        };
        Ok(ProjectionItem { expr, alias, text })
    }

    // --- patterns ------------------------------------------------------------------------

    /// A path pattern of a MATCH whose earlier patterns have `before` relationships.
    fn path_pattern(&mut self, before: usize) -> PResult<PathPattern> {
        let start = self.span().start;
        let mut name = None;
        if matches!(self.peek(), Token::Word(_) | Token::Quoted(_)) && self.peek_at(1) == &Token::Eq
        {
            name = Some(self.ident("path name")?);
            self.advance();
        }
        let shortest = self.shortest_selector()?;
        let in_parens = matches!(shortest, Some((_, true)));
        let first = self.node_pattern()?;
        let mut steps = Vec::new();
        while matches!(self.peek(), Token::Minus | Token::Lt) {
            if before + steps.len() == MAX_PATTERN_LENGTH {
                return Err(ParseError::new(
                    ErrorKind::RecursionLimit,
                    format!("More than {MAX_PATTERN_LENGTH} relationships in one MATCH"),
                    self.span(),
                ));
            }
            let rel = self.rel_pattern()?;
            let node = self.node_pattern()?;
            steps.push((rel, node));
        }
        if in_parens {
            self.expect(&Token::RParen, "')' closing the shortest path")?;
        }
        Ok(PathPattern {
            name,
            shortest,
            start: first,
            steps,
            span: self.span_from(start),
        })
    }

    /// `shortestPath(` / `allShortestPaths(` (the pattern follows, then `)`), or the GQL
    /// selectors `ANY SHORTEST`, `ALL SHORTEST`, `SHORTEST k`.
    fn shortest_selector(&mut self) -> PResult<Option<(Shortest, bool)>> {
        let Token::Word(w) = self.peek().clone() else {
            return Ok(None);
        };
        let word = |t: &Token, kw: &str| matches!(t, Token::Word(x) if x.eq_ignore_ascii_case(kw));
        if (w.eq_ignore_ascii_case("shortestPath") || w.eq_ignore_ascii_case("allShortestPaths"))
            && self.peek_at(1) == &Token::LParen
        {
            let all = w.eq_ignore_ascii_case("allShortestPaths");
            self.advance();
            self.advance();
            return Ok(Some((
                if all { Shortest::All } else { Shortest::Any },
                true,
            )));
        }
        if (w.eq_ignore_ascii_case("ANY") || w.eq_ignore_ascii_case("ALL"))
            && word(self.peek_at(1), "SHORTEST")
        {
            let all = w.eq_ignore_ascii_case("ALL");
            self.advance();
            self.advance();
            return Ok(Some((
                if all { Shortest::All } else { Shortest::Any },
                false,
            )));
        }
        if w.eq_ignore_ascii_case("SHORTEST") {
            let span = self.advance().span;
            return match self.peek().clone() {
                Token::Integer(k) if k > 0 => {
                    self.advance();
                    Ok(Some((Shortest::K(k as u64), false)))
                }
                _ => Err(ParseError::new(
                    ErrorKind::UnexpectedSyntax,
                    "SHORTEST needs a positive number of paths (`SHORTEST 3 (a)-[*]-(b)`)",
                    span,
                )),
            };
        }
        Ok(None)
    }

    fn node_pattern(&mut self) -> PResult<NodePattern> {
        let start = self.span().start;
        self.expect(&Token::LParen, "'(' starting a node pattern")?;
        let var = if matches!(self.peek(), Token::Word(_) | Token::Quoted(_)) {
            Some(self.ident("variable name")?)
        } else {
            None
        };
        let (labels, label_expr) = match self.label_expression(true)? {
            None => (vec![], None),
            Some(e) => split_label_expression(e),
        };
        let props = self.pattern_properties()?;
        self.expect(&Token::RParen, "')' closing the node pattern")?;
        Ok(NodePattern {
            var,
            labels,
            label_expr,
            props,
            span: self.span_from(start),
        })
    }

    /// `:A:B`, `:A&B|C`, `:!A`, `:%`, `:(A|B)&C` at a colon (`None` elsewhere): a list of
    /// colon items, all of which hold. `alternatives: false` leaves a top-level `|` alone
    /// (in a comprehension's WHERE it starts the projection).
    fn label_expression(&mut self, alternatives: bool) -> PResult<Option<LabelExpr>> {
        let mut items = Vec::new();
        while self.eat(&Token::Colon) {
            // `:A:B&C` is one conjunction of three labels.
            match self.label_or(alternatives)? {
                LabelExpr::And(parts) => items.extend(parts),
                e => items.push(e),
            }
        }
        Ok(match items.len() {
            0 => None,
            1 => items.pop(),
            _ => Some(LabelExpr::And(items)),
        })
    }

    fn label_or(&mut self, alternatives: bool) -> PResult<LabelExpr> {
        let mut parts = vec![self.label_and()?];
        while alternatives && self.eat(&Token::Pipe) {
            // `:A|:B` (the older form) reads as `:A|B`.
            self.eat(&Token::Colon);
            parts.push(self.label_and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            LabelExpr::Or(parts)
        })
    }

    fn label_and(&mut self) -> PResult<LabelExpr> {
        let mut parts = vec![self.label_not()?];
        while self.eat(&Token::Amp) {
            parts.push(self.label_not()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            LabelExpr::And(parts)
        })
    }

    fn label_not(&mut self) -> PResult<LabelExpr> {
        self.enter()?;
        let e = if self.eat(&Token::Bang) {
            LabelExpr::Not(Box::new(self.label_not()?))
        } else if self.at(&Token::Percent) {
            LabelExpr::Any(self.advance().span)
        } else if self.eat(&Token::LParen) {
            // Inside parentheses a `|` can only be an alternative.
            let e = self.label_or(true)?;
            self.expect(&Token::RParen, "')' closing the label expression")?;
            e
        } else {
            LabelExpr::Label(self.symbolic_name("label name")?)
        };
        self.leave();
        Ok(e)
    }

    fn pattern_properties(&mut self) -> PResult<Option<Expr>> {
        match self.peek() {
            Token::LBrace => Ok(Some(self.map_literal()?)),
            Token::Param(p) => {
                let p = p.clone();
                let sp = self.advance().span;
                Ok(Some(Expr::new(ExprKind::Param(p), sp)))
            }
            _ => Ok(None),
        }
    }

    fn rel_pattern(&mut self) -> PResult<RelPattern> {
        let start = self.span().start;
        let left_arrow = self.eat(&Token::Lt);
        self.expect(&Token::Minus, "'-' in a relationship pattern")?;
        let mut var = None;
        let mut types = Vec::new();
        let mut length = None;
        let mut props = None;
        if self.eat(&Token::LBracket) {
            if matches!(self.peek(), Token::Word(_) | Token::Quoted(_)) {
                var = Some(self.ident("variable name")?);
            }
            if self.eat(&Token::Colon) {
                types.push(self.symbolic_name("relationship type")?);
                while self.eat(&Token::Pipe) {
                    self.eat(&Token::Colon);
                    types.push(self.symbolic_name("relationship type")?);
                }
            }
            if self.eat(&Token::Star) {
                length = Some(self.range_literal()?);
            }
            props = self.pattern_properties()?;
            self.expect(&Token::RBracket, "']' closing the relationship pattern")?;
        }
        self.expect(&Token::Minus, "'-' in a relationship pattern")?;
        let right_arrow = self.eat(&Token::Gt);
        let direction = match (left_arrow, right_arrow) {
            (false, true) => Direction::Outgoing,
            (true, false) => Direction::Incoming,
            _ => Direction::Both,
        };
        Ok(RelPattern {
            var,
            types,
            direction,
            length,
            props,
            span: self.span_from(start),
        })
    }

    fn range_bound(&mut self) -> PResult<Option<u64>> {
        match self.peek().clone() {
            Token::Integer(i) => {
                self.advance();
                Ok(Some(i as u64))
            }
            _ => Ok(None),
        }
    }

    fn range_literal(&mut self) -> PResult<(Option<u64>, Option<u64>)> {
        let lo = self.range_bound()?;
        if self.eat(&Token::DotDot) {
            let hi = self.range_bound()?;
            Ok((lo, hi))
        } else {
            Ok((lo, lo))
        }
    }

    // --- expressions ---------------------------------------------------------------------

    // Operator chains are parsed in loops, but each link makes the tree one level deeper
    // (`link`); the level count is restored when the chain ends (`unlink`).

    #[recursive::recursive]
    pub fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.or_expr();
        self.leave();
        r
    }

    fn link(&mut self, links: &mut usize) -> PResult<()> {
        *links += 1;
        self.enter()
    }

    fn unlink(&mut self, links: usize) {
        self.depth -= links;
    }

    fn binary(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        let span = l.span.union(&r.span);
        Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
    }

    // A flat chain of `AND`, `OR` or `XOR` (associative) is a balanced tree, and one of
    // arithmetic operators a `Chain`: neither counts its links as depth, so machine-written
    // chains of any length parse; only nesting (parentheses, NOT, unary minus) is limited.

    fn or_expr(&mut self) -> PResult<Expr> {
        self.associative("OR", BinaryOp::Or, Self::xor_expr)
    }

    fn xor_expr(&mut self) -> PResult<Expr> {
        self.associative("XOR", BinaryOp::Xor, Self::and_expr)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        self.associative("AND", BinaryOp::And, Self::not_expr)
    }

    /// Operands of `operand` joined by keyword `kw` (operator `op`).
    fn associative(
        &mut self,
        kw: &str,
        op: BinaryOp,
        operand: fn(&mut Self) -> PResult<Expr>,
    ) -> PResult<Expr> {
        let mut items = vec![operand(self)?];
        while self.eat_kw(kw) {
            items.push(operand(self)?);
        }
        Ok(Expr::associative(op, items).expect("one operand at least"))
    }

    #[recursive::recursive]
    fn not_expr(&mut self) -> PResult<Expr> {
        if self.is_kw("NOT") {
            let sp = self.advance().span;
            self.enter()?;
            let e = self.not_expr();
            self.leave();
            let e = e?;
            let span = sp.union(&e.span);
            return Ok(Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(e)), span));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> PResult<Expr> {
        let first = self.predicate_expr()?;
        // `a < b < c` means `a < b AND b < c`: the comparisons, joined as a flat chain.
        let mut cmps: Vec<Expr> = Vec::new();
        // The left operand of the next comparison: cloned only when a chain uses it twice.
        let mut left = Some(first);
        loop {
            let op = match self.peek() {
                Token::Eq => BinaryOp::Eq,
                Token::Neq => BinaryOp::Neq,
                Token::Lt => BinaryOp::Lt,
                Token::Le => BinaryOp::Le,
                Token::Gt => BinaryOp::Gt,
                Token::Ge => BinaryOp::Ge,
                Token::RegexEq => BinaryOp::RegexMatch,
                _ => break,
            };
            self.advance();
            let right = self.predicate_expr()?;
            let l = left.take().expect("set on every iteration");
            let chained = matches!(
                self.peek(),
                Token::Eq
                    | Token::Neq
                    | Token::Lt
                    | Token::Le
                    | Token::Gt
                    | Token::Ge
                    | Token::RegexEq
            );
            if chained {
                left = Some(right.clone());
            }
            cmps.push(Self::binary(op, l, right));
            if !chained {
                break;
            }
        }
        Ok(match (Expr::associative(BinaryOp::And, cmps), left) {
            (Some(r), _) => r,
            (None, Some(first)) => first,
            (None, None) => unreachable!("a lone operand is kept"),
        })
    }

    fn predicate_expr(&mut self) -> PResult<Expr> {
        let mut e = self.add_sub()?;
        let mut links = 0;
        loop {
            if ["IS", "IN", "STARTS", "ENDS", "CONTAINS"]
                .iter()
                .any(|k| self.is_kw(k))
            {
                self.link(&mut links)?;
            }
            if self.is_kw("IS") {
                self.advance();
                let negated = self.eat_kw("NOT");
                let end = self.expect_kw("NULL")?;
                let span = e.span.union(&end);
                e = Expr::new(
                    ExprKind::IsNull {
                        expr: Box::new(e),
                        negated,
                    },
                    span,
                );
            } else if self.is_kw("IN") {
                self.advance();
                let r = self.add_sub()?;
                e = Self::binary(BinaryOp::In, e, r);
            } else if self.is_kw("STARTS") && self.is_kw_at(1, "WITH") {
                self.advance();
                self.advance();
                let r = self.add_sub()?;
                e = Self::binary(BinaryOp::StartsWith, e, r);
            } else if self.is_kw("ENDS") && self.is_kw_at(1, "WITH") {
                self.advance();
                self.advance();
                let r = self.add_sub()?;
                e = Self::binary(BinaryOp::EndsWith, e, r);
            } else if self.is_kw("CONTAINS") {
                self.advance();
                let r = self.add_sub()?;
                e = Self::binary(BinaryOp::Contains, e, r);
            } else {
                self.unlink(links);
                return Ok(e);
            }
        }
    }

    fn add_sub(&mut self) -> PResult<Expr> {
        let first = self.mul_div()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Token::Plus => BinaryOp::Add,
                Token::Minus => BinaryOp::Sub,
                _ => return Ok(Expr::left_chain(first, rest)),
            };
            self.advance();
            rest.push((op, self.mul_div()?));
        }
    }

    fn mul_div(&mut self) -> PResult<Expr> {
        let first = self.power()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Token::Star => BinaryOp::Mul,
                Token::Slash => BinaryOp::Div,
                Token::Percent => BinaryOp::Mod,
                _ => return Ok(Expr::left_chain(first, rest)),
            };
            self.advance();
            rest.push((op, self.power()?));
        }
    }

    fn power(&mut self) -> PResult<Expr> {
        let mut l = self.unary()?;
        let mut links = 0;
        while self.eat(&Token::Caret) {
            self.link(&mut links)?;
            let r = self.unary()?;
            l = Self::binary(BinaryOp::Pow, l, r);
        }
        self.unlink(links);
        Ok(l)
    }

    #[recursive::recursive]
    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            Token::Minus => UnaryOp::Neg,
            Token::Plus => UnaryOp::Pos,
            _ => return self.postfix(),
        };
        let sp = self.advance().span;
        // `-9223372036854775808` is the one literal that only exists negated.
        if op == UnaryOp::Neg && self.at(&Token::IntegerMinMagnitude) {
            let end = self.advance().span;
            return Ok(Expr::new(
                ExprKind::Literal(Literal::Integer(i64::MIN)),
                sp.union(&end),
            ));
        }
        self.enter()?;
        let e = self.unary();
        self.leave();
        let e = e?;
        let span = sp.union(&e.span);
        Ok(match (op, e.kind) {
            (UnaryOp::Neg, ExprKind::Literal(Literal::Integer(i))) if i != i64::MIN => {
                Expr::new(ExprKind::Literal(Literal::Integer(-i)), span)
            }
            (UnaryOp::Neg, ExprKind::Literal(Literal::Float(x))) => {
                Expr::new(ExprKind::Literal(Literal::Float(-x)), span)
            }
            (op, kind) => Expr::new(
                ExprKind::Unary(op, Box::new(Expr { kind, span: e.span })),
                span,
            ),
        })
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.atom()?;
        let mut links = 0;
        loop {
            if matches!(self.peek(), Token::Dot | Token::LBracket | Token::Colon) {
                self.link(&mut links)?;
            }
            match self.peek() {
                Token::Dot => {
                    self.advance();
                    let key = self.symbolic_name("property name")?;
                    let span = e.span.union(&key.span);
                    e = Expr::new(ExprKind::Property(Box::new(e), key), span);
                }
                Token::LBracket => {
                    self.advance();
                    let start_e = if self.at(&Token::DotDot) {
                        None
                    } else {
                        Some(Box::new(self.expr()?))
                    };
                    if self.eat(&Token::DotDot) {
                        let end_e = if self.at(&Token::RBracket) {
                            None
                        } else {
                            Some(Box::new(self.expr()?))
                        };
                        let close = self.expect(&Token::RBracket, "']'")?;
                        let span = e.span.union(&close);
                        e = Expr::new(ExprKind::Slice(Box::new(e), start_e, end_e), span);
                    } else {
                        let close = self.expect(&Token::RBracket, "']'")?;
                        let span = e.span.union(&close);
                        let idx = start_e.ok_or_else(|| self.error("index expression"))?;
                        e = Expr::new(ExprKind::Index(Box::new(e), idx), span);
                    }
                }
                Token::Colon => {
                    let alternatives = !self.pipe_ends_filter;
                    let labels = self.label_expression(alternatives)?.expect("at a colon");
                    let span = e.span.union(&labels.span());
                    e = Expr::new(ExprKind::HasLabels(Box::new(e), labels), span);
                }
                Token::LBrace if matches!(e.kind, ExprKind::Variable(_)) => {
                    return Err(self.unsupported("map projection", self.span()));
                }
                _ => {
                    self.unlink(links);
                    return Ok(e);
                }
            }
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        let t = self.tokens[self.pos].clone();
        let lit = |l: Literal| Ok(Expr::new(ExprKind::Literal(l), t.span));
        match t.token {
            Token::Integer(i) => {
                self.advance();
                lit(Literal::Integer(i))
            }
            Token::IntegerMinMagnitude => Err(ParseError::new(
                ErrorKind::IntegerOverflow,
                "Integer literal 9223372036854775808 is too large for a 64-bit integer",
                t.span,
            )),
            Token::Float(x) => {
                self.advance();
                lit(Literal::Float(x))
            }
            Token::Str(s) => {
                self.advance();
                lit(Literal::String(s))
            }
            Token::Param(p) => {
                self.advance();
                Ok(Expr::new(ExprKind::Param(p), t.span))
            }
            Token::LBrace => self.map_literal(),
            Token::LBracket => self.list_literal(),
            Token::LParen => {
                if let Some(p) = self.try_relationship_pattern()? {
                    let span = p.span;
                    return Ok(Expr::new(ExprKind::PatternPredicate(Box::new(p)), span));
                }
                self.advance();
                self.enter()?;
                let saved = std::mem::replace(&mut self.pipe_ends_filter, false);
                let e = self.expr();
                self.pipe_ends_filter = saved;
                self.leave();
                let mut e = e?;
                if matches!(self.peek(), Token::Comma) || self.at(&Token::Colon) {
                    return Err(self.unsupported("pattern expression", t.span));
                }
                let close = self.expect(&Token::RParen, "')'")?;
                e.span = t.span.union(&close);
                Ok(e)
            }
            Token::Quoted(name) => {
                self.advance();
                if self.at(&Token::LParen) {
                    return self.function_call(name, t.span);
                }
                Ok(Expr::new(ExprKind::Variable(name), t.span))
            }
            Token::Word(w) => self.word_atom(w, t.span),
            _ => Err(self.error("an expression")),
        }
    }

    /// An expression starting with the word `w` (at `span`): a literal keyword, CASE, a
    /// quantifier, a function call (namespaced names too) or a variable.
    fn word_atom(&mut self, w: String, span: Span) -> PResult<Expr> {
        let upper = w.to_ascii_uppercase();
        match upper.as_str() {
            "TRUE" => {
                self.advance();
                Ok(Expr::new(ExprKind::Literal(Literal::Bool(true)), span))
            }
            "FALSE" => {
                self.advance();
                Ok(Expr::new(ExprKind::Literal(Literal::Bool(false)), span))
            }
            "NULL" => {
                self.advance();
                Ok(Expr::new(ExprKind::Literal(Literal::Null), span))
            }
            "CASE" => self.case_expr(),
            "ALL" | "ANY" | "NONE" | "SINGLE"
                if self.peek_at(1) == &Token::LParen
                    && matches!(self.peek_at(2), Token::Word(_) | Token::Quoted(_))
                    && self.is_kw_at(3, "IN") =>
            {
                let kind = match upper.as_str() {
                    "ALL" => Quantifier::All,
                    "ANY" => Quantifier::Any,
                    "NONE" => Quantifier::None,
                    _ => Quantifier::Single,
                };
                self.quantifier(kind)
            }
            "REDUCE"
                if self.peek_at(1) == &Token::LParen
                    && matches!(self.peek_at(2), Token::Word(_) | Token::Quoted(_))
                    && self.peek_at(3) == &Token::Eq =>
            {
                self.reduce()
            }
            "EXISTS" | "COUNT" | "COLLECT" if self.peek_at(1) == &Token::LBrace => {
                let kind = match upper.as_str() {
                    "EXISTS" => SubqueryKind::Exists,
                    "COUNT" => SubqueryKind::Count,
                    _ => SubqueryKind::Collect,
                };
                self.subquery(kind)
            }
            _ if is_reserved(&w) => Err(self.error("an expression")),
            _ => {
                self.advance();
                // Namespaced function names: `a.b.c(...)`.
                let mut name = w;
                let mut k = 0;
                while self.peek_at(k) == &Token::Dot
                    && matches!(self.peek_at(k + 1), Token::Word(_))
                {
                    k += 2;
                }
                if k > 0 && self.peek_at(k) == &Token::LParen {
                    while self.eat(&Token::Dot) {
                        if let Token::Word(part) = self.advance().token {
                            name.push('.');
                            name.push_str(&part);
                        }
                    }
                }
                if self.at(&Token::LParen) {
                    return self.function_call(name, span);
                }
                Ok(Expr::new(ExprKind::Variable(name), span))
            }
        }
    }

    fn function_call(&mut self, name: String, start: Span) -> PResult<Expr> {
        self.expect(&Token::LParen, "'('")?;
        if name.eq_ignore_ascii_case("count") && self.at(&Token::Star) {
            self.advance();
            let close = self.expect(&Token::RParen, "')'")?;
            return Ok(Expr::new(ExprKind::CountStar, start.union(&close)));
        }
        let distinct = self.eat_kw("DISTINCT");
        let mut args = Vec::new();
        if !self.at(&Token::RParen) {
            args.push(self.expr()?);
            while self.eat(&Token::Comma) {
                args.push(self.expr()?);
            }
        }
        let close = self.expect(&Token::RParen, "')' closing the function call")?;
        Ok(Expr::new(
            ExprKind::Function {
                name,
                distinct,
                args,
            },
            start.union(&close),
        ))
    }

    fn case_expr(&mut self) -> PResult<Expr> {
        let start = self.advance().span;
        let operand = if self.is_kw("WHEN") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let w = self.expr()?;
            self.expect_kw("THEN")?;
            let t = self.expr()?;
            whens.push((w, t));
        }
        if whens.is_empty() {
            return Err(self.error("WHEN"));
        }
        let else_ = if self.eat_kw("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        let end = self.expect_kw("END")?;
        Ok(Expr::new(
            ExprKind::Case {
                operand,
                whens,
                else_,
            },
            start.union(&end),
        ))
    }

    /// `all(x IN list WHERE pred)` and the other quantifiers (at the name).
    fn quantifier(&mut self, kind: Quantifier) -> PResult<Expr> {
        let start = self.advance().span;
        self.expect(&Token::LParen, "'('")?;
        self.enter()?;
        let var = self.ident("variable name")?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        self.expect_kw("WHERE")?;
        let pred = self.expr()?;
        self.leave();
        let end = self.expect(&Token::RParen, "')' closing the list predicate")?;
        Ok(Expr::new(
            ExprKind::Quantifier {
                kind,
                var,
                list: Box::new(list),
                pred: Box::new(pred),
            },
            start.union(&end),
        ))
    }

    /// `reduce(acc = init, x IN list | body)` (at the name).
    fn reduce(&mut self) -> PResult<Expr> {
        let start = self.advance().span;
        self.expect(&Token::LParen, "'('")?;
        self.enter()?;
        let acc = self.ident("accumulator name")?;
        self.expect(&Token::Eq, "'='")?;
        let init = self.expr()?;
        self.expect(&Token::Comma, "','")?;
        let var = self.ident("variable name")?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        self.expect(&Token::Pipe, "'|'")?;
        let body = self.expr()?;
        self.leave();
        let end = self.expect(&Token::RParen, "')' closing reduce")?;
        Ok(Expr::new(
            ExprKind::Reduce {
                acc,
                init: Box::new(init),
                var,
                list: Box::new(list),
                body: Box::new(body),
            },
            start.union(&end),
        ))
    }

    /// A relationship pattern at a `(` in an expression (`(a)-[:T]->(b)`, `p = (a)-->()`
    /// in a comprehension), or `None` with nothing consumed when the tokens there do not
    /// start one (a parenthesised expression: `(a) - [1][0]`, `(a) < -1`). Decided by the
    /// tokens after the first node pattern, so that nothing is parsed twice.
    fn try_relationship_pattern(&mut self) -> PResult<Option<PathPattern>> {
        let named = matches!(self.peek(), Token::Word(_) | Token::Quoted(_))
            && self.peek_at(1) == &Token::Eq
            && self.peek_at(2) == &Token::LParen;
        if !named && !self.at(&Token::LParen) {
            return Ok(None);
        }
        let open = self.pos + if named { 2 } else { 0 };
        // `(`, a variable, labels or properties, then its `)`: found by counting brackets,
        // not by parsing (a property map may hold patterns itself).
        let looks_like_node = match self.tokens.get(open + 1).map(|t| &t.token) {
            Some(Token::RParen | Token::Colon | Token::LBrace | Token::Param(_)) => true,
            Some(Token::Word(_) | Token::Quoted(_)) => matches!(
                self.tokens.get(open + 2).map(|t| &t.token),
                Some(Token::RParen | Token::Colon | Token::LBrace | Token::Param(_))
            ),
            _ => false,
        };
        if !looks_like_node {
            return Ok(None);
        }
        let mut depth = 0usize;
        let mut close = None;
        for (i, t) in self.tokens.iter().enumerate().skip(open) {
            match t.token {
                Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                Token::Eof => break,
                _ => {}
            }
        }
        let Some(close) = close.filter(|&c| self.tokens[c].token == Token::RParen) else {
            return Ok(None);
        };
        let at = |k: usize| self.tokens.get(close + k).map_or(&Token::Eof, |t| &t.token);
        let detail = |t: &Token| {
            matches!(
                t,
                Token::Word(_)
                    | Token::Quoted(_)
                    | Token::Colon
                    | Token::Star
                    | Token::LBrace
                    | Token::Param(_)
                    | Token::RBracket
            )
        };
        let rel_follows = match (at(1), at(2)) {
            (Token::Minus, Token::Minus) => true,
            (Token::Minus, Token::LBracket) => detail(at(3)),
            (Token::Lt, Token::Minus) => {
                matches!(at(3), Token::Minus) || (at(3) == &Token::LBracket && detail(at(4)))
            }
            _ => false,
        };
        if !rel_follows {
            return Ok(None);
        }
        self.path_pattern(0).map(Some)
    }

    /// `[(a)-->(b) WHERE pred | expr]` after the `[`, or `None` with nothing consumed.
    fn try_pattern_comprehension(&mut self, start: Span) -> PResult<Option<Expr>> {
        let (pos, depth) = (self.pos, self.depth);
        let Some(pattern) = self.try_relationship_pattern()? else {
            return Ok(None);
        };
        if !self.is_kw("WHERE") && !self.at(&Token::Pipe) {
            // A list whose first item is a pattern predicate.
            (self.pos, self.depth) = (pos, depth);
            return Ok(None);
        }
        self.enter()?;
        let filter = if self.eat_kw("WHERE") {
            Some(Box::new(self.comprehension_filter()?))
        } else {
            None
        };
        self.expect(&Token::Pipe, "'|' in the pattern comprehension")?;
        let map = Box::new(self.expr()?);
        self.leave();
        let end = self.expect(&Token::RBracket, "']' closing the pattern comprehension")?;
        Ok(Some(Expr::new(
            ExprKind::PatternComprehension {
                pattern: Box::new(pattern),
                filter,
                map,
            },
            start.union(&end),
        )))
    }

    /// `EXISTS { ... }`, `COUNT { ... }`, `COLLECT { ... }` at the keyword: clauses (RETURN
    /// optional) or, short form, patterns with an optional WHERE.
    fn subquery(&mut self, kind: SubqueryKind) -> PResult<Expr> {
        let start = self.advance().span;
        self.expect(&Token::LBrace, "'{'")?;
        self.enter()?;
        // A `|` inside the braces is never a comprehension's.
        let saved = std::mem::replace(&mut self.pipe_ends_filter, false);
        let body = self.subquery_body(kind, start);
        self.pipe_ends_filter = saved;
        body
    }

    fn subquery_body(&mut self, kind: SubqueryKind, start: Span) -> PResult<Expr> {
        let body = if matches!(self.peek(), Token::Word(_)) && !self.at_pattern_start() {
            self.clauses(true)?
        } else {
            let at = self.span().start;
            let mut patterns = vec![self.path_pattern(0)?];
            while self.eat(&Token::Comma) {
                let before = patterns.iter().map(|p: &PathPattern| p.steps.len()).sum();
                patterns.push(self.path_pattern(before)?);
            }
            let where_ = if self.eat_kw("WHERE") {
                Some(self.expr()?)
            } else {
                None
            };
            let span = self.span_from(at);
            SingleQuery {
                clauses: vec![Clause::Match(Match {
                    optional: false,
                    patterns,
                    where_,
                    unique_within: None,
                    span,
                })],
                span,
            }
        };
        self.leave();
        let end = self.expect(&Token::RBrace, "'}' closing the subquery")?;
        Ok(Expr::new(
            ExprKind::Subquery(kind, Box::new(body)),
            start.union(&end),
        ))
    }

    /// At `p = (`: a named pattern, not a clause keyword.
    fn at_pattern_start(&self) -> bool {
        self.peek_at(1) == &Token::Eq
    }

    /// A comprehension's WHERE predicate, which a `|` outside parentheses ends.
    fn comprehension_filter(&mut self) -> PResult<Expr> {
        let saved = std::mem::replace(&mut self.pipe_ends_filter, true);
        let e = self.expr();
        self.pipe_ends_filter = saved;
        e
    }

    /// `[x IN list WHERE pred | expr]` (after the `[`).
    fn list_comprehension(&mut self, start: Span) -> PResult<Expr> {
        self.enter()?;
        let var = self.ident("variable name")?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        let filter = if self.eat_kw("WHERE") {
            Some(Box::new(self.comprehension_filter()?))
        } else {
            None
        };
        let map = if self.eat(&Token::Pipe) {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.leave();
        let end = self.expect(&Token::RBracket, "']' closing the list comprehension")?;
        Ok(Expr::new(
            ExprKind::ListComprehension {
                var,
                list: Box::new(list),
                filter,
                map,
            },
            start.union(&end),
        ))
    }

    fn list_literal(&mut self) -> PResult<Expr> {
        let start = self.advance().span;
        if matches!(self.peek(), Token::Word(_) | Token::Quoted(_)) && self.is_kw_at(1, "IN") {
            return self.list_comprehension(start);
        }
        if let Some(e) = self.try_pattern_comprehension(start)? {
            return Ok(e);
        }
        self.enter()?;
        let mut items = Vec::new();
        if !self.at(&Token::RBracket) {
            loop {
                items.push(self.expr()?);
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        self.leave();
        let end = self.expect(&Token::RBracket, "']' closing the list")?;
        Ok(Expr::new(ExprKind::List(items), start.union(&end)))
    }

    fn map_literal(&mut self) -> PResult<Expr> {
        let start = self.expect(&Token::LBrace, "'{'")?;
        self.enter()?;
        let mut entries: Vec<(Ident, Expr)> = Vec::new();
        if !self.at(&Token::RBrace) {
            loop {
                let k = self.symbolic_name("map key")?;
                self.expect(&Token::Colon, "':' after the map key")?;
                let v = self.expr()?;
                entries.push((k, v));
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        self.leave();
        let end = self.expect(&Token::RBrace, "'}' closing the map")?;
        Ok(Expr::new(ExprKind::Map(entries), start.union(&end)))
    }
}
