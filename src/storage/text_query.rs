//! Full-text queries in Lucene's syntax (what Neo4j's `db.index.fulltext.queryNodes` takes)
//! as Lance's query tree: words, `"phrases"`, `AND` / `OR` / `NOT` (also `&&`, `||`, `!`),
//! `+word` (required) and `-word` (excluded), parentheses. Read as Lucene's classic parser
//! reads them: juxtaposed terms are alternatives (its default operator, OR), and `AND` makes
//! the terms on both its sides required (no precedence between AND and OR).

use lance_index::scalar::inverted::query::{BooleanQuery, FtsQuery, MatchQuery, PhraseQuery};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Phrase(String),
    And,
    Or,
    Not,
    Plus,
    Minus,
    Open,
    Close,
}

/// Parses `text`; the error says what is wrong, and where (a character offset).
pub fn parse(text: &str) -> Result<FtsQuery, String> {
    let toks = tokens(text)?;
    let mut p = Parser {
        toks,
        at: 0,
        depth: 0,
    };
    let q = p.or()?;
    match p.toks.get(p.at) {
        None => Ok(q),
        Some(t) => Err(format!("unexpected {t:?} in the full-text query")),
    }
}

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | '+' | '-' | '!' => {
                chars.next();
                out.push(match c {
                    '(' => Tok::Open,
                    ')' => Tok::Close,
                    '+' => Tok::Plus,
                    '-' => Tok::Minus,
                    _ => Tok::Not,
                });
            }
            '"' => {
                chars.next();
                let mut phrase = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, c)) => phrase.push(c),
                        None => return Err(format!("the quote at {i} is not closed")),
                    }
                }
                out.push(Tok::Phrase(phrase));
            }
            '&' | '|' => {
                chars.next();
                if chars.next().map(|(_, d)| d) != Some(c) {
                    return Err(format!("`{c}` at {i}: write `{c}{c}`, AND or OR"));
                }
                out.push(if c == '&' { Tok::And } else { Tok::Or });
            }
            _ => {
                let mut word = String::new();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_whitespace() || "()\"".contains(d) {
                        break;
                    }
                    if "*?~:^[]{}\\".contains(d) {
                        return Err(format!(
                            "`{d}` at {j}: wildcards, fuzzy terms, fields, boosts and ranges \
                             are not supported (words, \"phrases\", AND, OR, NOT, +, -, \
                             parentheses are)"
                        ));
                    }
                    word.push(d);
                    chars.next();
                }
                out.push(match word.as_str() {
                    "AND" => Tok::And,
                    "OR" => Tok::Or,
                    "NOT" => Tok::Not,
                    _ => Tok::Word(word),
                });
            }
        }
    }
    if out.is_empty() {
        return Err("the full-text query is empty".into());
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    /// Parentheses open around the clause being read.
    depth: usize,
}

/// Most parentheses one inside another.
const MAX_DEPTH: usize = 64;

/// How a clause takes part (Lance's `Occur`, comparable).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Occur {
    Must,
    MustNot,
    Should,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    /// Clauses up to `)` or the end, as Lucene's classic parser reads them: each optional
    /// (SHOULD) unless `+` (MUST) or `-` / NOT (MUST_NOT); `AND` makes both its sides
    /// required, `OR` leaves them optional.
    fn or(&mut self) -> Result<FtsQuery, String> {
        let mut items: Vec<(Occur, FtsQuery)> = Vec::new();
        let mut and_next = false;
        loop {
            let (mut occur, q) = self.unit()?;
            if and_next && occur == Occur::Should {
                occur = Occur::Must;
            }
            items.push((occur, q));
            match self.peek() {
                Some(Tok::And) => {
                    self.at += 1;
                    if let Some(last) = items.last_mut().filter(|(o, _)| *o == Occur::Should) {
                        last.0 = Occur::Must;
                    }
                    and_next = true;
                }
                Some(Tok::Or) => {
                    self.at += 1;
                    and_next = false;
                }
                Some(Tok::Close) | None => break,
                Some(_) => and_next = false,
            }
        }
        if items.iter().all(|(o, _)| *o == Occur::MustNot) {
            return Err("a query of only excluded terms matches nothing".into());
        }
        if items.len() == 1 {
            return Ok(items.pop().expect("one").1);
        }
        use lance_index::scalar::inverted::query::Occur as O;
        Ok(BooleanQuery::new(items.into_iter().map(|(o, q)| {
            let o = match o {
                Occur::Must => O::Must,
                Occur::MustNot => O::MustNot,
                Occur::Should => O::Should,
            };
            (o, q)
        }))
        .into())
    }

    /// `[+|-|NOT] (word | "phrase" | ( query ))`.
    fn unit(&mut self) -> Result<(Occur, FtsQuery), String> {
        let occur = match self.peek() {
            Some(Tok::Plus) => Occur::Must,
            Some(Tok::Minus | Tok::Not) => Occur::MustNot,
            _ => Occur::Should,
        };
        if !matches!(occur, Occur::Should) {
            self.at += 1;
        }
        let q: FtsQuery = match self.toks.get(self.at).cloned() {
            Some(Tok::Word(w)) => MatchQuery::new(w).into(),
            Some(Tok::Phrase(p)) => PhraseQuery::new(p).into(),
            Some(Tok::Open) => {
                self.at += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!(
                        "more than {MAX_DEPTH} parentheses one inside another"
                    ));
                }
                let q = self.or()?;
                self.depth -= 1;
                if self.peek() != Some(&Tok::Close) {
                    return Err("a parenthesis is not closed".into());
                }
                q
            }
            Some(t) => return Err(format!("expected a word, a phrase or `(`, got {t:?}")),
            None => return Err("the full-text query ends after an operator".into()),
        };
        self.at += 1;
        Ok((occur, q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(q: &str) -> String {
        match parse(q) {
            Ok(q) => q.to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn lucene_operators_become_lance_queries() {
        assert_eq!(show("graph"), parse("(graph)").unwrap().to_string());
        let and = show("graph AND rust");
        assert!(and.starts_with("Boolean"), "{and}");
        assert!(
            and.contains("must=[Match") && and.contains("\"rust\""),
            "{and}"
        );
        let or = show("graph rust");
        assert!(or.contains("should=[Match"), "{or}");
        assert_eq!(show("graph OR rust"), or);
        assert_eq!(show("graph || rust"), or);
        let not = show("graph -java");
        assert!(not.contains("must_not=[Match"), "{not}");
        assert!(show("\"graph engine\"").starts_with("Phrase"));
    }

    #[test]
    fn malformed_queries_are_errors() {
        for q in [
            "",
            "graph AND",
            "(graph",
            "gra*",
            "\"open",
            "-java",
            "a & b",
            "a)",
            &format!("{}graph{}", "(".repeat(100_000), ")".repeat(100_000)),
        ] {
            assert!(show(q).starts_with("error: "), "{q}: {}", show(q));
        }
    }
}
