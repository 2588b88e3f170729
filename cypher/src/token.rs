//! Tokenizer: query text to tokens, each with a line/column span.

use crate::span::{ErrorKind, Location, ParseError, Span};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// A bare word: keyword or identifier; the parser decides which.
    Word(String),
    /// A backquoted identifier (never a keyword).
    Quoted(String),
    Integer(i64),
    /// An integer literal too large for i64 unless negated (9223372036854775808).
    IntegerMinMagnitude,
    Float(f64),
    Str(String),
    /// `$name` or `$0`.
    Param(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Pipe,
    /// `&` (label conjunction).
    Amp,
    /// A lone `!` (label negation).
    Bang,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    RegexEq,
    Semicolon,
    Eof,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Token::Word(w) => return write!(f, "'{w}'"),
            Token::Quoted(w) => return write!(f, "`{w}`"),
            Token::Integer(i) => return write!(f, "{i}"),
            Token::IntegerMinMagnitude => "9223372036854775808",
            Token::Float(x) => return write!(f, "{x}"),
            Token::Str(_) => "string literal",
            Token::Param(p) => return write!(f, "${p}"),
            Token::LParen => "'('",
            Token::RParen => "')'",
            Token::LBracket => "'['",
            Token::RBracket => "']'",
            Token::LBrace => "'{'",
            Token::RBrace => "'}'",
            Token::Comma => "','",
            Token::Dot => "'.'",
            Token::DotDot => "'..'",
            Token::Colon => "':'",
            Token::Pipe => "'|'",
            Token::Amp => "'&'",
            Token::Bang => "'!'",
            Token::Plus => "'+'",
            Token::Minus => "'-'",
            Token::Star => "'*'",
            Token::Slash => "'/'",
            Token::Percent => "'%'",
            Token::Caret => "'^'",
            Token::Eq => "'='",
            Token::Neq => "'<>'",
            Token::Lt => "'<'",
            Token::Gt => "'>'",
            Token::Le => "'<='",
            Token::Ge => "'>='",
            Token::RegexEq => "'=~'",
            Token::Semicolon => "';'",
            Token::Eof => "end of input",
        };
        f.write_str(s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpannedToken {
    pub token: Token,
    pub span: Span,
}

struct Cursor<'a> {
    src: &'a str,
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    loc: Location,
}

impl<'a> Cursor<'a> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|(_, c)| *c)
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.chars.clone();
        it.next();
        it.next().map(|(_, c)| c)
    }

    fn bump(&mut self) -> Option<char> {
        let (i, c) = self.chars.next()?;
        self.loc.offset = i + c.len_utf8();
        if c == '\n' {
            self.loc.line += 1;
            self.loc.column = 1;
        } else {
            self.loc.column += 1;
        }
        Some(c)
    }
}

/// Splits `src` into tokens; the last token is always `Eof`.
pub fn tokenize(src: &str) -> Result<Vec<SpannedToken>, ParseError> {
    let mut cur = Cursor {
        src,
        chars: src.char_indices().peekable(),
        loc: Location {
            line: 1,
            column: 1,
            offset: 0,
        },
    };
    let mut out = Vec::new();
    loop {
        skip_trivia(&mut cur)?;
        let start = cur.loc;
        let Some(c) = cur.peek() else {
            out.push(SpannedToken {
                token: Token::Eof,
                span: Span::new(start, start),
            });
            return Ok(out);
        };
        let token = match c {
            '(' => single(&mut cur, Token::LParen),
            ')' => single(&mut cur, Token::RParen),
            '[' => single(&mut cur, Token::LBracket),
            ']' => single(&mut cur, Token::RBracket),
            '{' => single(&mut cur, Token::LBrace),
            '}' => single(&mut cur, Token::RBrace),
            ',' => single(&mut cur, Token::Comma),
            ':' => single(&mut cur, Token::Colon),
            '|' => single(&mut cur, Token::Pipe),
            '&' => single(&mut cur, Token::Amp),
            '+' => single(&mut cur, Token::Plus),
            '-' => single(&mut cur, Token::Minus),
            '*' => single(&mut cur, Token::Star),
            '/' => single(&mut cur, Token::Slash),
            '%' => single(&mut cur, Token::Percent),
            '^' => single(&mut cur, Token::Caret),
            ';' => single(&mut cur, Token::Semicolon),
            '=' | '<' | '>' | '!' => comparison(&mut cur)?,
            '.' => {
                if cur.peek2().is_some_and(|d| d.is_ascii_digit()) {
                    number(&mut cur, start)?
                } else {
                    cur.bump();
                    if cur.peek() == Some('.') {
                        cur.bump();
                        Token::DotDot
                    } else {
                        Token::Dot
                    }
                }
            }
            '\'' | '"' => string(&mut cur, start)?,
            '`' => quoted_ident(&mut cur, start)?,
            '$' => param(&mut cur, start)?,
            c if c.is_ascii_digit() => number(&mut cur, start)?,
            c if is_ident_start(c) => Token::Word(word(&mut cur)),
            other => {
                cur.bump();
                return Err(err_at(
                    ErrorKind::UnexpectedSyntax,
                    format!("Unexpected character '{other}'"),
                    start,
                    cur.loc,
                ));
            }
        };
        out.push(SpannedToken {
            token,
            span: Span::new(start, cur.loc),
        });
    }
}

/// A comparison operator: `=`, `=~`, `<`, `<=`, `<>`, `>`, `>=`, `!=`, or a lone `!`.
fn comparison(cur: &mut Cursor<'_>) -> Result<Token, ParseError> {
    let c = cur.peek().expect("a comparison character");
    Ok(match c {
        '=' => {
            cur.bump();
            if cur.peek() == Some('~') {
                cur.bump();
                Token::RegexEq
            } else {
                Token::Eq
            }
        }
        '<' => {
            cur.bump();
            match cur.peek() {
                Some('=') => {
                    cur.bump();
                    Token::Le
                }
                Some('>') => {
                    cur.bump();
                    Token::Neq
                }
                _ => Token::Lt,
            }
        }
        '>' => {
            cur.bump();
            if cur.peek() == Some('=') {
                cur.bump();
                Token::Ge
            } else {
                Token::Gt
            }
        }
        '!' => {
            cur.bump();
            if cur.peek() == Some('=') {
                cur.bump();
                Token::Neq
            } else {
                // Negation in a label expression (`:!A`); anywhere else the parser rejects it.
                Token::Bang
            }
        }
        _ => unreachable!("called on a comparison character"),
    })
}

/// A parameter: `$name` or `` $`name` ``.
fn param(cur: &mut Cursor<'_>, start: Location) -> Result<Token, ParseError> {
    cur.bump();
    let name = match cur.peek() {
        Some('`') => match quoted_ident(cur, start)? {
            Token::Quoted(s) => s,
            _ => unreachable!("quoted_ident returns Quoted"),
        },
        Some(c) if is_ident_char(c) => word(cur),
        _ => {
            return Err(err_at(
                ErrorKind::UnexpectedSyntax,
                "Expected: parameter name after '$'",
                start,
                cur.loc,
            ))
        }
    };
    Ok(Token::Param(name))
}

fn single(cur: &mut Cursor<'_>, t: Token) -> Token {
    cur.bump();
    t
}

fn err_at(kind: ErrorKind, msg: impl Into<String>, start: Location, end: Location) -> ParseError {
    ParseError::new(kind, msg, Span::new(start, end))
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn skip_trivia(cur: &mut Cursor<'_>) -> Result<(), ParseError> {
    loop {
        match cur.peek() {
            Some(c) if c.is_whitespace() => {
                cur.bump();
            }
            Some('/') if cur.peek2() == Some('/') => {
                while let Some(c) = cur.peek() {
                    if c == '\n' {
                        break;
                    }
                    cur.bump();
                }
            }
            Some('/') if cur.peek2() == Some('*') => {
                let start = cur.loc;
                cur.bump();
                cur.bump();
                loop {
                    match cur.bump() {
                        None => {
                            return Err(err_at(
                                ErrorKind::UnexpectedSyntax,
                                "Unterminated block comment",
                                start,
                                cur.loc,
                            ))
                        }
                        Some('*') if cur.peek() == Some('/') => {
                            cur.bump();
                            break;
                        }
                        _ => {}
                    }
                }
            }
            _ => return Ok(()),
        }
    }
}

fn word(cur: &mut Cursor<'_>) -> String {
    let mut s = String::new();
    while let Some(c) = cur.peek() {
        if is_ident_char(c) {
            s.push(c);
            cur.bump();
        } else {
            break;
        }
    }
    s
}

fn quoted_ident(cur: &mut Cursor<'_>, start: Location) -> Result<Token, ParseError> {
    cur.bump();
    let mut s = String::new();
    loop {
        match cur.bump() {
            None => {
                return Err(err_at(
                    ErrorKind::UnexpectedSyntax,
                    "Unterminated backquoted identifier",
                    start,
                    cur.loc,
                ))
            }
            Some('`') => {
                if cur.peek() == Some('`') {
                    cur.bump();
                    s.push('`');
                } else {
                    return Ok(Token::Quoted(s));
                }
            }
            Some(c) => s.push(c),
        }
    }
}

fn string(cur: &mut Cursor<'_>, start: Location) -> Result<Token, ParseError> {
    let quote = cur.bump().unwrap_or('\'');
    let mut s = String::new();
    loop {
        let esc_start = cur.loc;
        match cur.bump() {
            None => {
                return Err(err_at(
                    ErrorKind::InvalidStringLiteral,
                    "Unterminated string literal",
                    start,
                    cur.loc,
                ))
            }
            Some(c) if c == quote => return Ok(Token::Str(s)),
            Some('\\') => {
                let c = cur.bump().ok_or_else(|| {
                    err_at(
                        ErrorKind::InvalidStringLiteral,
                        "Unterminated string literal",
                        start,
                        cur.loc,
                    )
                })?;
                match c {
                    '\\' => s.push('\\'),
                    '\'' => s.push('\''),
                    '"' => s.push('"'),
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'b' => s.push('\u{8}'),
                    'f' => s.push('\u{c}'),
                    'u' | 'U' => {
                        let n = if c == 'u' { 4 } else { 8 };
                        let mut hex = String::new();
                        for _ in 0..n {
                            match cur.bump() {
                                Some(h) if h.is_ascii_hexdigit() => hex.push(h),
                                _ => {
                                    return Err(err_at(
                                        ErrorKind::InvalidStringLiteral,
                                        format!("Invalid unicode escape, expected {n} hex digits"),
                                        esc_start,
                                        cur.loc,
                                    ))
                                }
                            }
                        }
                        let ch = u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| {
                                err_at(
                                    ErrorKind::InvalidStringLiteral,
                                    "Invalid unicode code point",
                                    esc_start,
                                    cur.loc,
                                )
                            })?;
                        s.push(ch);
                    }
                    other => {
                        return Err(err_at(
                            ErrorKind::InvalidStringLiteral,
                            format!("Invalid escape sequence '\\{other}'"),
                            esc_start,
                            cur.loc,
                        ))
                    }
                }
            }
            Some(c) => s.push(c),
        }
    }
}

fn number(cur: &mut Cursor<'_>, start: Location) -> Result<Token, ParseError> {
    let begin = start.offset;
    // Hex and octal integers.
    if cur.peek() == Some('0') && matches!(cur.peek2(), Some('x' | 'X' | 'o' | 'O')) {
        cur.bump();
        let radix = match cur.bump() {
            Some('x' | 'X') => 16,
            _ => 8,
        };
        let digits = word(cur);
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(err_at(
                ErrorKind::InvalidNumberLiteral,
                format!(
                    "Invalid number literal '{}'",
                    &cur.src[begin..cur.loc.offset]
                ),
                start,
                cur.loc,
            ));
        }
        return int_token(u64::from_str_radix(&digits, radix).ok(), cur, start);
    }
    let mut is_float = false;
    while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
        cur.bump();
    }
    if cur.peek() == Some('.') && cur.peek2().is_some_and(|c| c.is_ascii_digit()) {
        is_float = true;
        cur.bump();
        while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            cur.bump();
        }
    }
    if matches!(cur.peek(), Some('e' | 'E')) {
        is_float = true;
        cur.bump();
        if matches!(cur.peek(), Some('+' | '-')) {
            cur.bump();
        }
        if !cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            word(cur);
            return Err(err_at(
                ErrorKind::InvalidNumberLiteral,
                format!(
                    "Invalid number literal '{}'",
                    &cur.src[begin..cur.loc.offset]
                ),
                start,
                cur.loc,
            ));
        }
        while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            cur.bump();
        }
    }
    // A number glued to letters (`1a`, `9x`) is not a number.
    if cur.peek().is_some_and(is_ident_start) {
        word(cur);
        return Err(err_at(
            ErrorKind::InvalidNumberLiteral,
            format!(
                "Invalid number literal '{}'",
                &cur.src[begin..cur.loc.offset]
            ),
            start,
            cur.loc,
        ));
    }
    let text = &cur.src[begin..cur.loc.offset];
    if is_float {
        let v: f64 = text.parse().map_err(|_| {
            err_at(
                ErrorKind::InvalidNumberLiteral,
                format!("Invalid number literal '{text}'"),
                start,
                cur.loc,
            )
        })?;
        if v.is_infinite() {
            return Err(err_at(
                ErrorKind::InvalidNumberLiteral,
                format!("Float literal '{text}' is out of range"),
                start,
                cur.loc,
            ));
        }
        Ok(Token::Float(v))
    } else {
        int_token(text.parse::<u64>().ok(), cur, start)
    }
}

fn int_token(v: Option<u64>, cur: &Cursor<'_>, start: Location) -> Result<Token, ParseError> {
    match v {
        Some(v) if v <= i64::MAX as u64 => Ok(Token::Integer(v as i64)),
        Some(v) if v == i64::MAX as u64 + 1 => Ok(Token::IntegerMinMagnitude),
        _ => Err(err_at(
            ErrorKind::IntegerOverflow,
            format!(
                "Integer literal '{}' is too large for a 64-bit integer",
                &cur.src[start.offset..cur.loc.offset]
            ),
            start,
            cur.loc,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Token> {
        tokenize(s).unwrap().into_iter().map(|t| t.token).collect()
    }

    #[test]
    fn spans_have_line_and_column() {
        let t = tokenize("MATCH (n)\n  RETURN n").unwrap();
        assert_eq!(t[0].span.start.line, 1);
        assert_eq!(t[0].span.start.column, 1);
        let ret = &t[4];
        assert_eq!(ret.token, Token::Word("RETURN".into()));
        assert_eq!((ret.span.start.line, ret.span.start.column), (2, 3));
        assert_eq!(ret.span.end.column, 9);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("0x1F 0o17 .5 1e3 42"),
            vec![
                Token::Integer(31),
                Token::Integer(15),
                Token::Float(0.5),
                Token::Float(1000.0),
                Token::Integer(42),
                Token::Eof
            ]
        );
        assert_eq!(
            tokenize("9223372036854775809").unwrap_err().kind,
            ErrorKind::IntegerOverflow
        );
        assert_eq!(
            tokenize("0x").unwrap_err().kind,
            ErrorKind::InvalidNumberLiteral
        );
        assert_eq!(
            tokenize("1e").unwrap_err().kind,
            ErrorKind::InvalidNumberLiteral
        );
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            toks(r#"'a\'b' "c\"d" '\u0041\n'"#),
            vec![
                Token::Str("a'b".into()),
                Token::Str("c\"d".into()),
                Token::Str("A\n".into()),
                Token::Eof
            ]
        );
        assert_eq!(
            tokenize(r"'\q'").unwrap_err().kind,
            ErrorKind::InvalidStringLiteral
        );
        assert!(tokenize("'open").is_err());
    }

    #[test]
    fn comments_and_quoted_identifiers() {
        assert_eq!(
            toks("a // x\n /* y */ `we``ird` $p"),
            vec![
                Token::Word("a".into()),
                Token::Quoted("we`ird".into()),
                Token::Param("p".into()),
                Token::Eof
            ]
        );
    }

    #[test]
    fn arrows_are_single_characters() {
        assert_eq!(
            toks("<-->"),
            vec![Token::Lt, Token::Minus, Token::Minus, Token::Gt, Token::Eof]
        );
        assert_eq!(
            toks("<> != <= >= =~"),
            vec![
                Token::Neq,
                Token::Neq,
                Token::Le,
                Token::Ge,
                Token::RegexEq,
                Token::Eof
            ]
        );
    }

    #[test]
    fn comparisons_and_parameters() {
        let toks: Vec<Token> = tokenize("a =~ b <= <> >= != < > = $p $`x y`")
            .unwrap()
            .into_iter()
            .map(|t| t.token)
            .collect();
        assert_eq!(
            toks,
            [
                Token::Word("a".into()),
                Token::RegexEq,
                Token::Word("b".into()),
                Token::Le,
                Token::Neq,
                Token::Ge,
                Token::Neq,
                Token::Lt,
                Token::Gt,
                Token::Eq,
                Token::Param("p".into()),
                Token::Param("x y".into()),
                Token::Eof,
            ]
        );
        for bad in ["$", "$ x"] {
            assert!(tokenize(bad).is_err(), "{bad}");
        }
        // A lone `!` is label negation; the parser rejects it elsewhere.
        let toks: Vec<Token> = tokenize("!a")
            .unwrap()
            .into_iter()
            .map(|t| t.token)
            .collect();
        assert_eq!(toks[0], Token::Bang);
    }
}
