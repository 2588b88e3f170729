//! Parsers of the command line's values: `--param NAME=VALUE`, `--memory-limit`, `--timeout`.
//! (The integration tests compile this file too.)

use lance_csr::{Error, Params, Result, Value};

/// Parses `NAME=VALUE` (the CLI's `--param`): VALUE is a Cypher literal.
pub fn parse_param(kv: &str) -> Result<(String, Value)> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| Error::Other(format!("--param {kv}: expected NAME=VALUE")))?;
    let k = k.trim().trim_start_matches('$');
    if k.is_empty() {
        return Err(Error::Other(format!("--param {kv}: empty name")));
    }
    let value = Value::parse(v).map_err(|e| match e {
        Error::Other(m) => Error::Other(format!("--param {k}: {m}")),
        e => e,
    })?;
    Ok((k.to_string(), value))
}

/// `--disable RULE`: one of the rules' names (clap lists them in help and errors).
pub fn rule() -> impl clap::builder::TypedValueParser<Value = lance_csr::Rule> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(lance_csr::RuleSwitches::NAMES)
        .map(|name| name.parse::<lance_csr::Rule>().expect("a listed name"))
}

/// `NAME=VALUE` parameters (repeated `--param`s).
pub fn parse_params(kvs: &[String]) -> Result<Params> {
    let mut p = Params::new();
    for kv in kvs {
        let (k, v) = parse_param(kv)?;
        p.insert(k, v);
    }
    Ok(p)
}

/// A size as `--memory-limit` takes it: bytes, or a number with KB, MB, GB (powers of 1024;
/// case and a space before the unit don't matter).
pub fn parse_bytes(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = [
        ("GB", 1usize << 30),
        ("MB", 1 << 20),
        ("KB", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((t.clone(), 1));
    let x: f64 = num
        .parse()
        .map_err(|_| format!("expected a size like 512MB or 2GB, got `{s}`"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("a memory limit must be positive, got `{s}`"));
    }
    Ok((x * mult as f64) as usize)
}

/// A duration as `--timeout` takes it: seconds, or a number with `ms`, `s`, `m` or `h`.
pub fn parse_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, secs) = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *k)))
        .unwrap_or((t.clone(), 1.0));
    let x: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration like 30s, 500ms or 2m, got `{s}`"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("a time limit must be positive, got `{s}`"));
    }
    Ok(std::time::Duration::from_secs_f64(x * secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn limits_parse_as_written() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
        assert_eq!(parse_bytes("512MB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("2 gb").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("0").is_err());
    }

    #[test]
    fn params_are_literals_with_positioned_errors() {
        let (k, v) = parse_param("$n=[1, 'a']").unwrap();
        assert_eq!(k, "n");
        assert_eq!(v, Value::List(vec![Value::Int(1), Value::Str("a".into())]));
        assert!(parse_param("n")
            .unwrap_err()
            .to_string()
            .contains("expected NAME=VALUE"));
        assert!(parse_param("=1")
            .unwrap_err()
            .to_string()
            .contains("empty name"));
        let e = parse_param("n=1 +").unwrap_err().to_string();
        assert!(
            e.contains("--param n: value is not a Cypher literal"),
            "{e}"
        );
        let e = parse_param("n=a.b").unwrap_err().to_string();
        assert!(e.contains("--param n: value must be a literal"), "{e}");
    }
}
