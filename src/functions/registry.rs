//! The scalar functions: a registry table from name to arity, argument kinds and lowering to
//! DataFusion. The binder checks names and arity against it, the planner lowers through it.
//! Functions on entities (`id`, `labels`, `type`, `keys`, `size` of a relationship list) read a
//! variable's binding instead of a value and are lowered in `planner/expr.rs`.

use super::CypherFn;
use crate::error::Result;
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::Span;
use datafusion::common::ScalarValue;
use datafusion::functions::expr_fn as f;
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{cast, lit, when, Expr};

/// `cypher_vector(measure, a, b)` of a call's two vectors.
fn vector(measure: Expr, c: &Call<'_>) -> Expr {
    crate::functions::CypherFn::Vector.call(vec![measure, c.x(0), c.x(1)])
}

/// The null literal.
pub(crate) fn null() -> Expr {
    lit(ScalarValue::Null)
}

/// An empty list literal of `elem`s.
pub(crate) fn empty_list(elem: &DataType) -> Expr {
    lit(ScalarValue::List(std::sync::Arc::new(
        ScalarValue::new_list_nullable(&[], elem).as_ref().clone(),
    )))
}

/// A node's labels from its label column (the labels joined by `:`, `""` for none).
pub(crate) fn labels_of_tag(tag: Expr) -> Result<Expr> {
    let split = nf::string_to_array(tag.clone(), lit(":"), lit(ScalarValue::Utf8(None)));
    Ok(when(tag.eq(lit("")), empty_list(&DataType::Utf8)).otherwise(split)?)
}

/// Fields of a path value (struct of its node and relationship lists).
pub(crate) const PATH_NODES: &str = "__nodes";
pub(crate) const PATH_RELS: &str = "__relationships";

/// A path value's type.
pub(crate) fn is_path(t: &DataType) -> bool {
    matches!(t, DataType::Struct(f) if f.len() == 2 && f[0].name() == PATH_NODES && f[1].name() == PATH_RELS)
}

pub(crate) fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

pub(crate) fn is_list(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _)
    )
}

/// What a value of type `t` is, as messages name it.
pub(crate) fn kind_name(t: &DataType) -> &'static str {
    match t {
        _ if is_path(t) => "a Path",
        DataType::Struct(f) => match f.first().map(|f| f.name().as_str()) {
            Some("__label") => "a Node",
            Some("__type") => "a Relationship",
            _ => "a Map",
        },
        _ if is_list(t) => "a List",
        _ if is_string(t) => "a String",
        DataType::Boolean => "a Boolean",
        _ if t.is_integer() => "an Integer",
        _ if t.is_floating() => "a Float",
        _ => "a value",
    }
}

/// The kinds of argument a scalar function takes.
#[derive(Clone, Copy)]
pub(crate) enum ArgKind {
    Any,
    Str,
    Num,
    Int,
    List,
    StrOrList,
}

impl ArgKind {
    pub fn accepts(self, t: &DataType) -> bool {
        match self {
            ArgKind::Any => true,
            ArgKind::Str => is_string(t),
            ArgKind::Num => t.is_numeric(),
            ArgKind::Int => t.is_integer(),
            ArgKind::List => is_list(t),
            ArgKind::StrOrList => is_string(t) || is_list(t),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ArgKind::Any => "a value",
            ArgKind::Str => "a string",
            ArgKind::Num => "a number",
            ArgKind::Int => "an integer",
            ArgKind::List => "a list",
            ArgKind::StrOrList => "a string or a list",
        }
    }
}

/// A call being lowered: the function's name as written, its lowered arguments, their types
/// and where each was written.
pub(crate) struct Call<'a> {
    pub name: &'a str,
    pub args: Vec<Expr>,
    pub types: Vec<DataType>,
    pub spans: Vec<Span>,
}

impl Call<'_> {
    fn x(&self, i: usize) -> Expr {
        self.args[i].clone()
    }

    fn f64(&self, i: usize) -> Expr {
        cast(self.x(i), DataType::Float64)
    }

    fn i64(&self, i: usize) -> Expr {
        cast(self.x(i), DataType::Int64)
    }
}

/// One entry of the registry.
pub(crate) struct ScalarFn {
    /// Lower-case names (aliases share an entry).
    pub names: &'static [&'static str],
    /// Fewest and most arguments.
    pub arity: (usize, usize),
    /// The kind of each argument, checked when a row evaluates the call (openCypher checks
    /// argument types at run time); a null argument is always accepted.
    pub kinds: &'static [ArgKind],
    /// Reads values of mixed kind (the others need one type).
    pub reads_mixed: bool,
    pub lower: fn(&Call<'_>) -> Result<Expr>,
}

impl ScalarFn {
    const fn new(
        names: &'static [&'static str],
        arity: (usize, usize),
        kinds: &'static [ArgKind],
        lower: fn(&Call<'_>) -> Result<Expr>,
    ) -> Self {
        ScalarFn {
            names,
            arity,
            kinds,
            reads_mixed: false,
            lower,
        }
    }

    /// The arity as written in messages: `1`, `2..3`.
    pub fn arity_text(&self) -> String {
        match self.arity {
            (a, b) if a == b => a.to_string(),
            (a, usize::MAX) => format!("{a} or more"),
            (a, b) => format!("{a}..{b}"),
        }
    }
}

/// The registry entry for a lower-case name.
pub(crate) fn lookup(lname: &str) -> Option<&'static ScalarFn> {
    SCALAR_FUNCTIONS.iter().find(|f| f.names.contains(&lname))
}

/// Whether the function named `name` gives a new value at every call (`rand()`): an
/// expression calling it means something else evaluated once per row of another pattern.
pub(crate) fn is_volatile(name: &str) -> bool {
    name.eq_ignore_ascii_case("rand")
}

/// A negative start or length is an error, not a count from the end.
fn non_negative(e: Expr) -> Expr {
    CypherFn::NonNegative.call(vec![cast(e, DataType::Int64)])
}

use ArgKind::{Any, Int, List, Num, Str, StrOrList};

static SCALAR_FUNCTIONS: &[ScalarFn] = &[
    ScalarFn::new(&["toupper", "upper"], (1, 1), &[Str], |c| {
        Ok(f::upper(c.x(0)))
    }),
    ScalarFn::new(&["tolower", "lower"], (1, 1), &[Str], |c| {
        Ok(f::lower(c.x(0)))
    }),
    ScalarFn::new(&["trim"], (1, 1), &[Str], |c| Ok(f::btrim(vec![c.x(0)]))),
    ScalarFn::new(&["ltrim"], (1, 1), &[Str], |c| Ok(f::ltrim(vec![c.x(0)]))),
    ScalarFn::new(&["rtrim"], (1, 1), &[Str], |c| Ok(f::rtrim(vec![c.x(0)]))),
    ScalarFn::new(&["replace"], (3, 3), &[Str, Str, Str], |c| {
        Ok(f::replace(c.x(0), c.x(1), c.x(2)))
    }),
    ScalarFn::new(&["substring"], (2, 3), &[Str, Int, Int], |c| {
        let start = non_negative(c.x(1)) + lit(1i64);
        Ok(match c.args.len() {
            3 => f::substring(c.x(0), start, non_negative(c.x(2))),
            _ => f::substr(c.x(0), start),
        })
    }),
    ScalarFn::new(&["left"], (2, 2), &[Str, Int], |c| {
        Ok(f::left(c.x(0), non_negative(c.x(1))))
    }),
    ScalarFn::new(&["right"], (2, 2), &[Str, Int], |c| {
        Ok(f::right(c.x(0), non_negative(c.x(1))))
    }),
    ScalarFn::new(&["split"], (2, 2), &[Str, Str], |c| {
        Ok(nf::string_to_array(c.x(0), c.x(1), null()))
    }),
    ScalarFn::new(&["reverse"], (1, 1), &[StrOrList], |c| {
        Ok(if is_list(&c.types[0]) {
            nf::array_reverse(c.x(0))
        } else {
            f::reverse(c.x(0))
        })
    }),
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["tostring"], (1, 1), &[Any], |c| {
            let t = &c.types[0];
            Ok(
                if crate::functions::any::is_any(t)
                    || crate::functions::temporal::is_temporal_type(t)
                {
                    CypherFn::ToText.call(vec![c.x(0)])
                } else if c.types[0] == DataType::Boolean {
                    when(c.x(0), lit("true")).otherwise(lit("false"))?
                } else if matches!(t, DataType::Struct(_)) || is_list(t) {
                    return sem_err!(
                        InvalidArgumentType,
                        c.spans[0],
                        "Type mismatch: {}() expects a boolean, number, string or temporal \
                         value, but was {}",
                        c.name,
                        kind_name(t)
                    );
                } else {
                    cast(c.x(0), DataType::Utf8)
                },
            )
        })
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["tointeger"], (1, 1), &[Any], |c| {
            Ok(CypherFn::ToInteger.call(vec![c.x(0)]))
        })
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["tofloat"], (1, 1), &[Any], |c| {
            Ok(CypherFn::ToFloat.call(vec![c.x(0)]))
        })
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["toboolean"], (1, 1), &[Any], |c| {
            Ok(CypherFn::ToBoolean.call(vec![c.x(0)]))
        })
    },
    ScalarFn::new(&["abs"], (1, 1), &[Num], |c| {
        Ok(if c.types[0].is_integer() {
            // abs(-2^63) overflows.
            CypherFn::Abs.call(vec![c.i64(0)])
        } else {
            f::abs(c.x(0))
        })
    }),
    ScalarFn::new(&["ceil"], (1, 1), &[Num], |c| Ok(f::ceil(c.f64(0)))),
    ScalarFn::new(&["floor"], (1, 1), &[Num], |c| Ok(f::floor(c.f64(0)))),
    ScalarFn::new(&["round"], (1, 3), &[Num, Int, Str], |c| {
        let precision = if c.args.len() > 1 {
            c.i64(1)
        } else {
            lit(0i64)
        };
        let mode = c.args.get(2).cloned().unwrap_or_else(null);
        Ok(CypherFn::Round.call(vec![c.f64(0), precision, mode]))
    }),
    ScalarFn::new(&["sqrt"], (1, 1), &[Num], |c| Ok(f::sqrt(c.f64(0)))),
    // Vectors: Neo4j's similarities, and Lance's distances (`l2` squared, `cosine`, `dot`).
    ScalarFn::new(&["vector.similarity.cosine"], (2, 2), &[List, List], |c| {
        Ok(vector(lit("cosine_similarity"), c))
    }),
    ScalarFn::new(
        &["vector.similarity.euclidean"],
        (2, 2),
        &[List, List],
        |c| Ok(vector(lit("euclidean_similarity"), c)),
    ),
    ScalarFn::new(&["vector_distance"], (2, 3), &[List, List, Str], |c| {
        let metric = c.args.get(2).cloned().unwrap_or_else(|| lit("l2"));
        Ok(vector(metric, c))
    }),
    ScalarFn::new(&["sign"], (1, 1), &[Num], |c| {
        Ok(cast(f::signum(c.f64(0)), DataType::Int64))
    }),
    ScalarFn::new(&["exp"], (1, 1), &[Num], |c| Ok(f::exp(c.f64(0)))),
    ScalarFn::new(&["log"], (1, 1), &[Num], |c| Ok(f::ln(c.f64(0)))),
    ScalarFn::new(&["log10"], (1, 1), &[Num], |c| Ok(f::log10(c.f64(0)))),
    ScalarFn::new(&["sin"], (1, 1), &[Num], |c| Ok(f::sin(c.f64(0)))),
    ScalarFn::new(&["cos"], (1, 1), &[Num], |c| Ok(f::cos(c.f64(0)))),
    ScalarFn::new(&["tan"], (1, 1), &[Num], |c| Ok(f::tan(c.f64(0)))),
    ScalarFn::new(&["asin"], (1, 1), &[Num], |c| Ok(f::asin(c.f64(0)))),
    ScalarFn::new(&["acos"], (1, 1), &[Num], |c| Ok(f::acos(c.f64(0)))),
    ScalarFn::new(&["atan"], (1, 1), &[Num], |c| Ok(f::atan(c.f64(0)))),
    ScalarFn::new(&["pi"], (0, 0), &[], |_| Ok(lit(std::f64::consts::PI))),
    ScalarFn::new(&["e"], (0, 0), &[], |_| Ok(lit(std::f64::consts::E))),
    ScalarFn::new(&["rand"], (0, 0), &[], |_| Ok(f::random())),
    ScalarFn::new(&["coalesce"], (1, usize::MAX), &[], |c| {
        Ok(f::coalesce(c.args.clone()))
    }),
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["size", "length"], (1, 1), &[], |c| {
            let t = &c.types[0];
            if c.name.eq_ignore_ascii_case("length") && is_path(t) {
                let rels = f::get_field(c.x(0), PATH_RELS);
                Ok(crate::functions::CypherFn::Size.call(vec![rels]))
            } else if is_list(t) {
                Ok(crate::functions::CypherFn::Size.call(vec![c.x(0)]))
            } else if is_string(t) {
                Ok(cast(f::character_length(c.x(0)), DataType::Int64))
            } else if *t == DataType::Null {
                Ok(null())
            } else if crate::functions::any::is_any(t) {
                Ok(crate::functions::CypherFn::Size.call(vec![c.x(0)]))
            } else {
                sem_err!(
                    InvalidArgumentType,
                    c.spans[0],
                    "{}() expects a list or string, got {t}",
                    c.name
                )
            }
        })
    },
    ScalarFn::new(&["nodes", "relationships"], (1, 1), &[], |c| {
        let t = &c.types[0];
        if is_path(t) {
            let field = if c.name.eq_ignore_ascii_case("nodes") {
                PATH_NODES
            } else {
                PATH_RELS
            };
            Ok(f::get_field(c.x(0), field))
        } else if *t == DataType::Null {
            Ok(null())
        } else {
            sem_err!(
                InvalidArgumentType,
                c.spans[0],
                "{}() expects a path, got {t}",
                c.name
            )
        }
    }),
    ScalarFn::new(&["head"], (1, 1), &[List], |c| {
        Ok(nf::array_element(c.x(0), lit(1i64)))
    }),
    ScalarFn::new(&["last"], (1, 1), &[List], |c| {
        Ok(nf::array_element(c.x(0), lit(-1i64)))
    }),
    ScalarFn::new(&["tail"], (1, 1), &[List], |c| {
        Ok(nf::array_slice(c.x(0), lit(2i64), lit(-1i64), None))
    }),
    ScalarFn::new(&["range"], (2, 3), &[Int, Int, Int], |c| {
        let step = if c.args.len() == 3 {
            c.i64(2)
        } else {
            lit(1i64)
        };
        Ok(CypherFn::Range.call(vec![c.i64(0), c.i64(1), step]))
    }),
    // A map's keys (null values included, as in a map literal); an entity's in `expr.rs`.
    ScalarFn::new(&["keys"], (1, 1), &[], |c| match &c.types[0] {
        // A node / relationship value: the properties it has (a null one is not stored).
        DataType::Struct(fields)
            if matches!(
                fields.first().map(|f| f.name().as_str()),
                Some("__label" | "__type")
            ) =>
        {
            let parts: Vec<Expr> = fields
                .iter()
                .filter(|f| !f.name().starts_with("__"))
                .map(|f| {
                    let v = f::get_field(c.x(0), f.name().as_str());
                    Ok(
                        when(v.is_not_null(), nf::make_array(vec![lit(f.name().clone())]))
                            .otherwise(empty_list(&DataType::Utf8))?,
                    )
                })
                .collect::<Result<_>>()?;
            let list = if parts.is_empty() {
                empty_list(&DataType::Utf8)
            } else {
                nf::flatten(nf::make_array(parts))
            };
            Ok(when(c.x(0).is_null(), null()).otherwise(list)?)
        }
        DataType::Struct(fields) => {
            let names: Vec<Expr> = fields.iter().map(|f| lit(f.name().clone())).collect();
            let list = if names.is_empty() {
                empty_list(&DataType::Utf8)
            } else {
                nf::make_array(names)
            };
            Ok(when(c.x(0).is_null(), null()).otherwise(list)?)
        }
        DataType::Null => Ok(null()),
        other => sem_err!(
            InvalidArgumentType,
            c.spans[0],
            "keys() expects a map, node or relationship, not {other}"
        ),
    }),
    // Given anything but an entity (those are lowered in `expr.rs`): null gives null, as
    // for an entity an OPTIONAL MATCH did not find.
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["id", "labels", "type", "properties"], (1, 1), &[], |c| {
            if c.types[0] == DataType::Null {
                return Ok(null());
            }
            // A value of mixed kind (an element of `[r, 1]`): decided per row.
            if crate::functions::any::is_any(&c.types[0]) {
                let name = c.name.to_lowercase();
                if name == "id" {
                    return sem_err!(
                        Unsupported,
                        c.spans[0],
                        "unsupported: id() of a value of mixed kind"
                    );
                }
                return Ok(CypherFn::Dynamic.call(vec![lit(name), c.x(0)]));
            }
            // A node / relationship as a value (from a list, a path).
            let tag = match &c.types[0] {
                DataType::Struct(f) => f.first().map(|f| f.name().clone()),
                _ => None,
            };
            let name = c.name.to_lowercase();
            match (name.as_str(), tag.as_deref()) {
                ("labels", Some("__label")) => {
                    let labels = labels_of_tag(f::get_field(c.x(0), "__label"))?;
                    return Ok(when(c.x(0).is_null(), null()).otherwise(labels)?);
                }
                ("type", Some("__type")) => return Ok(f::get_field(c.x(0), "__type")),
                ("properties", Some("__label" | "__type")) => {
                    return Ok(CypherFn::Properties.call(vec![c.x(0)]))
                }
                ("properties", _) if matches!(c.types[0], DataType::Struct(_)) => return Ok(c.x(0)),
                _ => {}
            }
            sem_err!(
                InvalidArgumentType,
                c.spans[0],
                "{}() expects a node or relationship",
                c.name
            )
        })
    },
    ScalarFn::new(&["exists"], (1, 1), &[], |c| Ok(c.x(0).is_not_null())),
    // Temporal values (`functions/temporal`): built per row, cells of mixed kind.
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(
            &["date", "localtime", "time", "localdatetime", "datetime"],
            (0, 1),
            &[],
            |c| {
                let name = c.name.to_lowercase();
                // No argument, or only a time zone: now.
                let zone_only = matches!(&c.types.first(), Some(DataType::Struct(f))
                    if f.len() == 1 && f[0].name().eq_ignore_ascii_case("timezone"));
                if c.args.is_empty() || zone_only {
                    return Ok(now(&name, c));
                }
                Ok(CypherFn::Dynamic.call(vec![lit(name), c.x(0)]))
            },
        )
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["duration"], (1, 1), &[], |c| {
            Ok(CypherFn::Dynamic.call(vec![lit("duration"), c.x(0)]))
        })
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(
            &[
                "date.transaction",
                "date.statement",
                "date.realtime",
                "localtime.transaction",
                "localtime.statement",
                "localtime.realtime",
                "time.transaction",
                "time.statement",
                "time.realtime",
                "localdatetime.transaction",
                "localdatetime.statement",
                "localdatetime.realtime",
                "datetime.transaction",
                "datetime.statement",
                "datetime.realtime",
            ],
            (0, 1),
            &[],
            |c| {
                let name = c.name.to_lowercase();
                Ok(now(name.split('.').next().unwrap_or("datetime"), c))
            },
        )
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(
            &[
                "date.truncate",
                "localtime.truncate",
                "time.truncate",
                "localdatetime.truncate",
                "datetime.truncate",
            ],
            (2, 3),
            &[Str],
            temporal_call,
        )
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(
            &[
                "duration.between",
                "duration.inmonths",
                "duration.indays",
                "duration.inseconds",
            ],
            (2, 2),
            &[],
            temporal_call,
        )
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["datetime.fromepoch"], (2, 2), &[Int, Int], temporal_call)
    },
    ScalarFn {
        reads_mixed: true,
        ..ScalarFn::new(&["datetime.fromepochmillis"], (1, 1), &[Int], temporal_call)
    },
];

/// The current value of temporal kind `kind` (`date()`, `datetime.statement({timezone: z})`):
/// the statement's start time (DataFusion's `now()`, one per query), in the zone given.
fn now(kind: &str, c: &Call<'_>) -> Expr {
    let zone = c.args.first().cloned().unwrap_or_else(null);
    CypherFn::Now.call(vec![lit(kind), lit(!c.args.is_empty()), zone, f::now()])
}

/// A temporal function by its lower-case name over its arguments.
fn temporal_call(c: &Call<'_>) -> Result<Expr> {
    let mut args = vec![lit(c.name.to_lowercase())];
    args.extend(c.args.iter().cloned());
    Ok(CypherFn::Dynamic.call(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_case_and_unique_and_kinds_fit_the_arity() {
        let mut seen = std::collections::HashSet::new();
        for f in SCALAR_FUNCTIONS {
            for n in f.names {
                assert_eq!(*n, n.to_lowercase(), "{n}");
                assert!(seen.insert(*n), "{n} registered twice");
                assert!(!cypher::ast::AGGREGATES.contains(n), "{n} is an aggregate");
            }
            assert!(f.arity.0 <= f.arity.1);
            assert!(f.kinds.len() <= f.arity.1, "{:?}", f.names);
        }
        assert!(lookup("toupper").is_some() && lookup("nope").is_none());
    }
}
