//! neo4j-admin's CSV header, as LDBC, LSQB and Neo4j users publish files in it: `name:type`
//! fields (`value:int`, `tags:string[]`), a node file's id (`id:ID(Space)`), a relationship
//! file's ends (`:START_ID(Space)`, `:END_ID(Space)`), `:LABEL`, `:TYPE` and `:IGNORE`.

use super::csv_file::Declared;

/// One field of the header.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Field {
    /// A property, of its declared type (`None`: inferred; `true`: an array).
    Prop {
        name: String,
        declared: Option<(Declared, bool)>,
    },
    /// A node file's id, in an ID space (`""`: the global one).
    Id {
        name: String,
        space: String,
    },
    Start {
        name: String,
        space: String,
    },
    End {
        name: String,
        space: String,
    },
    Label,
    Type,
    Ignore,
}

/// `name:KIND(space)` split into the name, the kind and the ID space; `None`: no colon, a plain
/// name. The colon is the last one before the parenthesis, so names may hold colons.
fn split(field: &str) -> Option<(&str, &str, Option<&str>)> {
    let (head, space) = match field
        .strip_suffix(')')
        .and_then(|f| Some((f, f.rfind('(')?)))
    {
        Some((f, open)) => (&f[..open], Some(&f[open + 1..])),
        None => (field, None),
    };
    let colon = head.rfind(':')?;
    Some((&head[..colon], &head[colon + 1..], space))
}

/// Whether `header` is neo4j-admin's: a field is `:ID`, `:START_ID` or `:END_ID` (as
/// neo4j-admin writes them, in capitals), named or not, with an ID space or not. A plain
/// file's `user:id` column stays a column.
pub(super) fn is_neo4j(header: &[String]) -> bool {
    (header.iter())
        .filter_map(|f| split(f))
        .any(|(_, kind, _)| matches!(kind, "ID" | "START_ID" | "END_ID"))
}

/// One field of a neo4j-admin header (types in any case, as neo4j-admin reads them).
pub(super) fn parse(field: &str) -> Result<Field, String> {
    let Some((name, kind, space)) = split(field) else {
        return Ok(Field::Prop {
            name: field.to_string(),
            declared: None,
        });
    };
    let named = |default: &str| match name.is_empty() {
        true => default.to_string(),
        false => name.to_string(),
    };
    let id_space = || space.unwrap_or_default().to_string();
    let upper = kind.trim().to_ascii_uppercase();
    match upper.as_str() {
        "ID" => {
            return Ok(Field::Id {
                name: named("id"),
                space: id_space(),
            })
        }
        "START_ID" => {
            return Ok(Field::Start {
                name: named("src"),
                space: id_space(),
            })
        }
        "END_ID" => {
            return Ok(Field::End {
                name: named("dst"),
                space: id_space(),
            })
        }
        _ => {}
    }
    if space.is_some() {
        return Err(format!(
            "header field `{field}`: only :ID, :START_ID and :END_ID name an ID space"
        ));
    }
    Ok(match upper.as_str() {
        "LABEL" => Field::Label,
        "TYPE" => Field::Type,
        "IGNORE" => Field::Ignore,
        _ => {
            let (base, array) = match upper.strip_suffix("[]") {
                Some(b) => (b, true),
                None => (upper.as_str(), false),
            };
            let declared = match base {
                "INT" | "LONG" | "SHORT" | "BYTE" => Declared::Int,
                "FLOAT" | "DOUBLE" => Declared::Float,
                "BOOLEAN" => Declared::Bool,
                "STRING" | "CHAR" => Declared::Text,
                "DATE" => Declared::Date,
                "DATETIME" => Declared::DateTime,
                "LOCALDATETIME" => Declared::LocalDateTime,
                _ => {
                    return Err(format!(
                        "header field `{field}`: import reads no type `{kind}` (int, long, \
                         float, double, boolean, string, date, datetime, localdatetime, or an \
                         array of one: `int[]`); `:IGNORE` drops a column"
                    ))
                }
            };
            if name.is_empty() {
                return Err(format!(
                    "header field `{field}`: a property needs a name before the `:`"
                ));
            }
            Field::Prop {
                name: name.to_string(),
                declared: Some((declared, array)),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_as_neo4j_admin_writes_them() {
        let header: Vec<String> = ["id:ID(City)", "name"].map(String::from).to_vec();
        assert!(is_neo4j(&header));
        assert!(!is_neo4j(&["id".to_string(), "a:b".to_string()]));
        assert_eq!(
            parse("id:ID(City)"),
            Ok(Field::Id {
                name: "id".into(),
                space: "City".into()
            })
        );
        assert_eq!(
            parse(":START_ID(Person)"),
            Ok(Field::Start {
                name: "src".into(),
                space: "Person".into()
            })
        );
        assert_eq!(
            parse(":ID"),
            Ok(Field::Id {
                name: "id".into(),
                space: String::new()
            })
        );
        assert_eq!(
            parse("tags:string[]"),
            Ok(Field::Prop {
                name: "tags".into(),
                declared: Some((Declared::Text, true))
            })
        );
        assert_eq!(
            parse("creationDate:DATETIME"),
            Ok(Field::Prop {
                name: "creationDate".into(),
                declared: Some((Declared::DateTime, false))
            })
        );
        assert_eq!(
            parse("weight(kg)"),
            Ok(Field::Prop {
                name: "weight(kg)".into(),
                declared: None
            })
        );
        assert_eq!(parse(":LABEL"), Ok(Field::Label));
        assert_eq!(parse("note:IGNORE"), Ok(Field::Ignore));
        assert!(parse("p:point").is_err());
        assert!(parse(":int").is_err());
        assert!(parse("x:int(S)").is_err());
    }
}
