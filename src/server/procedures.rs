//! The catalog procedures drivers, shells and graph browsers call when they connect
//! (`CALL db.labels()`, `CALL dbms.components()`, ...), answered from the graph's schema. The
//! engine's own procedures (the vector and full-text searches) run as queries; any other
//! procedure is refused with Neo4j's code for an unknown procedure.

use super::status::{Failure, PROCEDURE_NOT_FOUND};
use crate::catalog::GraphSchema;
use crate::functions::value::Value;

/// A procedure's answer: its columns and rows.
pub struct Answer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// `query` as a call of a catalog procedure, answered from the schema `schema` gives (asked
/// for only then); `None` when it is not a CALL.
pub fn call(query: &str, schema: impl FnOnce() -> GraphSchema) -> Option<Result<Answer, Failure>> {
    let (name, yields) = parse_call(query)?;
    let schema = &schema();
    let s = |x: &str| Value::Str(x.to_string());
    // Names as one-column rows, sorted, each once.
    let list = |xs: &mut dyn Iterator<Item = &String>| {
        let set: std::collections::BTreeSet<&String> = xs.collect();
        set.into_iter()
            .map(|x| vec![Value::Str(x.clone())])
            .collect()
    };
    let (columns, rows): (Vec<&str>, Vec<Vec<Value>>) = match name.as_str() {
        "db.labels" => {
            let mut labels = schema.labels.values().flat_map(|l| l.labels.iter());
            (vec!["label"], list(&mut labels))
        }
        "db.relationshipTypes" => {
            let mut types = schema.relationships.iter().map(|r| &r.rel_type);
            (vec!["relationshipType"], list(&mut types))
        }
        "db.propertyKeys" => {
            let mut keys = schema
                .labels
                .values()
                .flat_map(|l| &l.properties)
                .chain(schema.relationships.iter().flat_map(|r| &r.properties))
                .map(|(k, _)| k);
            (vec!["propertyKey"], list(&mut keys))
        }
        "dbms.components" => (
            vec!["name", "versions", "edition"],
            vec![vec![
                s("lance-csr"),
                Value::List(vec![s(env!("CARGO_PKG_VERSION"))]),
                s("community"),
            ]],
        ),
        // The engine's own: a search runs as a query.
        other if crate::functions::procedures::Procedure::lookup(other).is_some() => return None,
        other => {
            return Some(Err(Failure::new(
                PROCEDURE_NOT_FOUND,
                format!(
                    "There is no procedure with the name `{other}` (lance-csr answers \
                     db.labels, db.relationshipTypes, db.propertyKeys, dbms.components and \
                     the db.index.vector / db.index.fulltext queryNodes and queryRelationships)"
                ),
            )))
        }
    };
    let columns: Vec<String> = columns.into_iter().map(str::to_string).collect();
    let Some(yields) = yields else {
        return Some(Ok(Answer { columns, rows }));
    };
    // YIELD picks columns, in its order.
    let mut picks = Vec::new();
    for y in &yields {
        match columns.iter().position(|c| c == y) {
            Some(i) => picks.push(i),
            None => {
                return Some(Err(Failure::new(
                    "Neo.ClientError.Statement.SyntaxError",
                    format!("Unknown procedure output: `{y}`"),
                )))
            }
        }
    }
    Some(Ok(Answer {
        rows: rows
            .into_iter()
            .map(|r| picks.iter().map(|&i| r[i].clone()).collect())
            .collect(),
        columns: yields,
    }))
}

/// `CALL name()` or `CALL name() YIELD a, b` (keywords in any case, a `;` allowed): the
/// procedure's name and the columns yielded.
fn parse_call(query: &str) -> Option<(String, Option<Vec<String>>)> {
    let q = query.trim().trim_end_matches(';').trim();
    let rest = strip_keyword(q, "CALL")?;
    let open = rest.find('(')?;
    let name = rest[..open].trim();
    let valid = |s: &str| {
        !s.is_empty()
            && s.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    };
    if !valid(name) {
        return None;
    }
    let after = rest[open + 1..].trim_start();
    let after = after.strip_prefix(')')?.trim();
    if after.is_empty() {
        return Some((name.to_string(), None));
    }
    let cols = strip_keyword(after, "YIELD")?;
    let cols: Vec<String> = cols.split(',').map(|c| c.trim().to_string()).collect();
    cols.iter()
        .all(|c| valid(c) && !c.contains('.'))
        .then_some((name.to_string(), Some(cols)))
}

/// `s` past keyword `kw` (any case) and the whitespace after it.
fn strip_keyword<'a>(s: &'a str, kw: &str) -> Option<&'a str> {
    let head = s.get(..kw.len())?;
    let rest = &s[kw.len()..];
    (head.eq_ignore_ascii_case(kw) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_recognised_with_their_yields() {
        assert_eq!(
            parse_call("call db.labels()"),
            Some(("db.labels".into(), None))
        );
        assert_eq!(
            parse_call(" CALL dbms.components() YIELD name, edition;"),
            Some((
                "dbms.components".into(),
                Some(vec!["name".into(), "edition".into()])
            ))
        );
        for q in [
            "MATCH (n) RETURN n",
            "CALL db.labels(1)",
            "CALLdb.labels()",
            "CALL ()",
        ] {
            assert_eq!(parse_call(q), None, "{q}");
        }
    }

    #[tokio::test]
    async fn the_catalog_procedures_answer_from_the_schema() {
        let g = crate::session::Graph::sample().await.unwrap();
        let schema = || g.schema();
        let a = call("CALL db.labels()", schema).unwrap().unwrap();
        assert_eq!(a.columns, ["label"]);
        assert!(a.rows.contains(&vec![Value::Str("Person".into())]));
        let a = call("CALL dbms.components() YIELD edition", schema)
            .unwrap()
            .unwrap();
        assert_eq!(a.rows, [[Value::Str("community".into())]]);
        let f = call("CALL db.nope()", schema).unwrap().err().unwrap();
        assert_eq!(f.code, PROCEDURE_NOT_FOUND);
        // The searches are the engine's: they run as queries.
        assert!(call("CALL db.index.fulltext.queryNodes()", schema).is_none());
        assert!(call("RETURN 1", schema).is_none());
    }
}
