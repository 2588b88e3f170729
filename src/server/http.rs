//! HTTP for tools that cannot speak Bolt: `POST /db/{name}/query/v2` in the shape of Neo4j's
//! Query API (`{"statement", "parameters"}` in; `{"data": {"fields", "values"}}` out, as
//! plain JSON or, for `Accept: application/vnd.neo4j.query`, typed JSON that keeps every
//! value's type), `GET /metrics` (Prometheus), and `GET /` (where Bolt listens).
//!
//! Rows are written into the response as the query produces them, so a large result is not
//! held; an error after the first rows ends the response with an `errors` entry.

use super::auth::Login;
use super::messages::Messages;
use super::running::Running;
use super::status::{self, Failure};
use super::{Conn, IoBox, Shared};
use crate::functions::temporal::Temporal;
use crate::functions::value::{value_at, Entity, Value};
use bytes::Bytes;
use datafusion::execution::memory_pool::MemoryReservation;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Map as JsonMap, Value as Json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

type Body = BoxBody<Bytes, Infallible>;

const TYPED: &str = "application/vnd.neo4j.query";

pub(super) async fn serve(io: Box<dyn IoBox>, shared: Arc<Shared>, conn: Conn) {
    let full = conn.slot.is_none();
    if full {
        shared
            .metrics
            .connections_refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let conn = Arc::new(conn);
    let svc = {
        let (shared, conn) = (shared.clone(), conn.clone());
        hyper::service::service_fn(move |req| {
            let (shared, conn) = (shared.clone(), conn.clone());
            async move { Ok::<_, Infallible>(handle(req, shared, &conn, full).await) }
        })
    };
    let io = hyper_util::rt::TokioIo::new(io);
    // A client that never finishes its headers does not hold a connection forever.
    let serving = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(shared.options.auth_timeout)
        .serve_connection(io, svc);
    // Until a request authenticates, the slot may go to a newer connection.
    tokio::select! {
        _ = serving => {}
        _ = conn.evicted() => shared.metrics.closed(super::metrics::Closed::Evicted),
    }
}

fn reply(code: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = code;
    r.headers_mut().insert(
        "content-type",
        content_type.parse().expect("a header value"),
    );
    r
}

fn error_reply(code: StatusCode, f: &Failure) -> Response<Body> {
    let body = json!({"errors": [{"code": f.code, "message": f.message}]});
    reply(code, "application/json", body.to_string())
}

async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    conn: &Conn,
    full: bool,
) -> Response<Body> {
    if full {
        let f = Failure::new(
            status::TOO_MANY_CONNECTIONS,
            "the server serves no more connections at once (--max-connections)",
        );
        return closing(error_reply(StatusCode::SERVICE_UNAVAILABLE, &f));
    }
    let path = req.uri().path().to_string();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method(), parts.as_slice()) {
        (&Method::GET, ["metrics"]) => reply(
            StatusCode::OK,
            "text/plain; version=0.0.4",
            shared.metrics.render(shared.messages.held()),
        ),
        (&Method::GET, [""]) => {
            // The address bound (port 0 resolved).
            let bolt = format!("bolt://{}", shared.options.bolt);
            let body = json!({
                "bolt_direct": bolt,
                "bolt_routing": format!("neo4j://{}", shared.options.bolt),
                "neo4j_version": env!("CARGO_PKG_VERSION"),
                "neo4j_edition": "lance-csr",
            });
            reply(StatusCode::OK, "application/json", body.to_string())
        }
        (&Method::POST, ["db", db, "query", "v2"]) => {
            let db = db.to_string();
            query(req, shared, conn, &db).await
        }
        _ => error_reply(
            StatusCode::NOT_FOUND,
            &Failure::new(
                "Neo.ClientError.Request.Invalid",
                format!("no endpoint {} {path}", req.method()),
            ),
        ),
    }
}

/// The Basic credentials of `req`, checked (failures counted per user and address).
async fn login(req: &Request<Incoming>, shared: &Arc<Shared>, conn: &Conn) -> Login {
    use base64::Engine;
    if matches!(shared.options.auth, super::Auth::None) {
        return Login::Allowed;
    }
    let header = req
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok());
    let Some(encoded) = header.and_then(|h| h.strip_prefix("Basic ")) else {
        return Login::Refused;
    };
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return Login::Refused;
    };
    let text = String::from_utf8_lossy(&decoded);
    let (user, password) = text.split_once(':').unwrap_or((&text, ""));
    shared
        .login(
            conn.peer,
            Some(user.to_string()),
            Some(password.to_string()),
        )
        .await
}

/// A request's body, as fast as it must come: within the authentication timeout plus a
/// second for each `min_body_rate` bytes received, and no larger than the server accepts;
/// held in `held` as it is read (the body is not read while there is no room for it).
async fn read_body(
    body: Incoming,
    shared: &Shared,
    held: &MemoryReservation,
) -> Result<Bytes, Response<Body>> {
    let (limit, rate) = (
        shared.options.max_message_bytes,
        shared.options.min_body_rate.max(1),
    );
    let started = tokio::time::Instant::now();
    // The time spent waiting for room does not count.
    let mut waited = std::time::Duration::ZERO;
    let mut body = body;
    let mut buf = bytes::BytesMut::new();
    loop {
        let allowed = shared.options.auth_timeout
            + waited
            + std::time::Duration::from_secs_f64(buf.len() as f64 / rate as f64);
        let frame = match tokio::time::timeout_at(started + allowed, body.frame()).await {
            Ok(Some(Ok(f))) => f,
            Ok(None) => return Ok(buf.freeze()),
            Ok(Some(Err(_))) => {
                let f = Failure::invalid("the request body was cut");
                return Err(closing(error_reply(StatusCode::BAD_REQUEST, &f)));
            }
            Err(_) => {
                let f = Failure::invalid(format!(
                    "the request body came slower than the server accepts ({rate} bytes a \
                     second after the first {} s)",
                    shared.options.auth_timeout.as_secs_f64()
                ));
                shared.metrics.closed(super::metrics::Closed::SlowBody);
                return Err(closing(error_reply(StatusCode::REQUEST_TIMEOUT, &f)));
            }
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                let f = Failure::invalid(format!(
                    "the request is larger than the server accepts ({limit} bytes)"
                ));
                return Err(closing(error_reply(StatusCode::PAYLOAD_TOO_LARGE, &f)));
            }
            buf.reserve(data.len());
            let waiting = tokio::time::Instant::now();
            let room = shared.messages.cover(held, buf.capacity()).await;
            waited += waiting.elapsed();
            if !room {
                let f = shared.messages.no_room(buf.len() + data.len());
                return Err(closing(error_reply(StatusCode::SERVICE_UNAVAILABLE, &f)));
            }
            buf.extend_from_slice(&data);
        }
    }
}

/// `r`, closing the connection after it (the rest of the request is not read).
fn closing(mut r: Response<Body>) -> Response<Body> {
    r.headers_mut()
        .insert("connection", "close".parse().expect("a header value"));
    r
}

async fn query(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    conn: &Conn,
    db: &str,
) -> Response<Body> {
    let started = Instant::now();
    let login = login(&req, &shared, conn).await;
    if login != Login::Allowed {
        let counter = match login {
            Login::Locked => &shared.metrics.logins_locked,
            _ => &shared.metrics.logins_wrong,
        };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let f = match login {
            Login::Locked => status::locked_out(),
            _ => Failure::new(status::UNAUTHORIZED, "Invalid username or password."),
        };
        let mut r = error_reply(StatusCode::UNAUTHORIZED, &f);
        r.headers_mut().insert(
            "www-authenticate",
            "Basic realm=\"lance-csr\"".parse().expect("a header value"),
        );
        return r;
    }
    if conn.slot.as_ref().is_some_and(|s| !s.authenticated()) {
        return closing(error_reply(
            StatusCode::SERVICE_UNAVAILABLE,
            &status::evicted(),
        ));
    }
    if db != shared.options.database {
        let f = Failure::new(
            status::DATABASE_NOT_FOUND,
            format!("Database does not exist. Database name: '{db}'"),
        );
        return error_reply(StatusCode::NOT_FOUND, &f);
    }
    let typed = req
        .headers()
        .get("accept")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.contains(TYPED));
    // The body, then what it decodes to, held from the server's room for messages until
    // the response ends.
    let messages = &shared.messages;
    let held = messages.reservation(format!("http connection {}", conn.id));
    let body = match read_body(req.into_body(), &shared, &held).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let fail = |f: Failure| {
        shared.metrics.http.record(started.elapsed(), false);
        error_reply(StatusCode::BAD_REQUEST, &f)
    };
    let no_room = |bytes: usize| {
        shared.metrics.http.record(started.elapsed(), false);
        error_reply(StatusCode::SERVICE_UNAVAILABLE, &messages.no_room(bytes))
    };
    let request = match parse_request(&body, messages.budget) {
        Ok(r) => r,
        Err(Refused::Invalid(f)) => return fail(f),
        Err(Refused::TooLarge) => {
            shared.metrics.http.record(started.elapsed(), false);
            return error_reply(StatusCode::PAYLOAD_TOO_LARGE, &messages.too_large());
        }
    };
    drop(body);
    held.free();
    let cost = Messages::query_cost(request.decoded, request.copied);
    if !messages.grow(&held, cost, || false).await {
        return no_room(cost);
    }
    let (statement, params, decoded) = (request.statement, request.params, request.decoded);
    let (columns, first, rest) =
        match super::procedures::call(&statement, || shared.graph.current().schema()) {
            Some(Ok(a)) => (a.columns, a.rows, None),
            Some(Err(f)) => return fail(f),
            None => match Running::start(&shared, None, statement.clone(), params).await {
                Ok(mut stream) => match stream.next_batch().await {
                    Ok(b) => (stream.columns.clone(), rows(b.as_ref()), Some(stream)),
                    Err(e) => return fail(status::failure(&e, &statement)),
                },
                Err(e) => return fail(status::failure(&e, &statement)),
            },
        };
    // Started: what planning copied of the parameters is let go.
    held.shrink(held.size().saturating_sub(decoded));
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let head = format!(
        "{{\"data\":{{\"fields\":{},\"values\":[",
        Json::from(columns.clone())
    );
    tokio::spawn(async move {
        let _held = held;
        let ok = send_rows(&tx, head, (first, rest), typed, &statement).await;
        if let Some(ok) = ok {
            shared.metrics.http.record(started.elapsed(), ok);
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    *r.status_mut() = StatusCode::ACCEPTED;
    let ct = if typed { TYPED } else { "application/json" };
    r.headers_mut()
        .insert("content-type", ct.parse().expect("a header value"));
    r
}

/// The first integer of a JSON text (outside its strings) that a 64-bit signed integer does
/// not hold: JSON's parser would read it as a float near it.
fn oversized_integer(body: &[u8]) -> Option<String> {
    let (mut in_string, mut escaped) = (false, false);
    let mut token = String::new();
    let oversized = |t: &str| {
        let integer = !t.is_empty() && !t.contains(['.', 'e', 'E']);
        (integer && t.parse::<i64>().is_err()).then(|| t.to_string())
    };
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E') {
            token.push(b as char);
            continue;
        }
        if let Some(t) = oversized(&token) {
            return Some(t);
        }
        token.clear();
        in_string = b == b'"';
    }
    oversized(&token)
}

/// The body of a query request: its statement and parameters (decoded into at most
/// `budget` bytes), and the memory they take.
fn parse_request(body: &[u8], budget: usize) -> std::result::Result<super::json::Request, Refused> {
    if let Some(n) = oversized_integer(body) {
        return Err(Refused::Invalid(Failure::new(
            "Neo.ClientError.Request.Invalid",
            format!(
                "the integer {n} is out of range (a 64-bit signed integer's largest is {})",
                i64::MAX
            ),
        )));
    }
    super::json::request(body, budget).map_err(|e| match e {
        super::json::Refused::TooLarge => Refused::TooLarge,
        super::json::Refused::Invalid(why) => Refused::Invalid(Failure::invalid(format!(
            "the body is not a request: {why}"
        ))),
    })
}

/// Why a request body was refused.
enum Refused {
    Invalid(Failure),
    /// It decodes to more than one request may.
    TooLarge,
}

/// Writes a result's rows to `tx` as the JSON the Query API returns, after `head`, in
/// pieces of about 64 KiB: the rows already fetched, then the rest of the stream. Whether
/// the query succeeded; `None` when the client left.
async fn send_rows(
    tx: &tokio::sync::mpsc::Sender<Bytes>,
    head: String,
    rows_so_far: (Vec<Vec<Value>>, Option<Running>),
    typed: bool,
    statement: &str,
) -> Option<bool> {
    let mut buf = head;
    let (first, rest) = rows_so_far;
    let mut n = 0usize;
    let encode = |buf: &mut String, n: &mut usize, row: &[Value]| {
        if *n > 0 {
            buf.push(',');
        }
        *n += 1;
        let cells: Vec<Json> = row.iter().map(|v| to_json(v, typed)).collect();
        buf.push_str(&Json::from(cells).to_string());
    };
    for row in &first {
        encode(&mut buf, &mut n, row);
    }
    let mut error = None;
    if let Some(mut stream) = rest {
        loop {
            if buf.len() >= 64 << 10
                && tx
                    .send(Bytes::from(std::mem::take(&mut buf)))
                    .await
                    .is_err()
            {
                // The client left: dropping the stream stops the query.
                return None;
            }
            // The client may leave while the query computes: then it stops at once.
            let next = tokio::select! {
                next = stream.next_batch() => next,
                _ = tx.closed() => return None,
            };
            match next {
                Ok(Some(b)) => {
                    for row in rows(Some(&b)) {
                        encode(&mut buf, &mut n, &row);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(status::failure(&e, statement));
                    break;
                }
            }
        }
    }
    buf.push_str("]}");
    match &error {
        // `,"errors":[...]}` after the data.
        Some(f) => {
            let e = json!({"errors": [{"code": f.code, "message": f.message}]}).to_string();
            buf.push(',');
            buf.push_str(&e[1..]);
        }
        None => buf.push_str(",\"bookmarks\":[]}"),
    }
    let _ = tx.send(Bytes::from(buf)).await;
    Some(error.is_none())
}

fn rows(b: Option<&arrow::array::RecordBatch>) -> Vec<Vec<Value>> {
    let Some(b) = b else { return vec![] };
    (0..b.num_rows())
        .map(|r| {
            (0..b.num_columns())
                .map(|c| value_at(b.column(c).as_ref(), r))
                .collect()
        })
        .collect()
}

/// A result value as plain JSON (`typed`: as the Query API's typed JSON).
pub fn to_json(v: &Value, typed: bool) -> Json {
    let wrap = |t: &str, x: Json| {
        if typed {
            json!({"$type": t, "_value": x})
        } else {
            x
        }
    };
    match v {
        Value::Null => wrap("Null", Json::Null),
        Value::Bool(b) => wrap("Boolean", Json::Bool(*b)),
        Value::Int(i) if typed => wrap("Integer", Json::String(i.to_string())),
        Value::Int(i) => Json::from(*i),
        Value::Float(x) if typed => wrap("Float", Json::String(crate::fmt_float(*x))),
        // JSON has no NaN or infinities: those travel as text.
        Value::Float(x) => serde_json::Number::from_f64(*x)
            .map_or(Json::String(crate::fmt_float(*x)), Json::Number),
        Value::Str(s) => wrap("String", Json::String(s.clone())),
        Value::List(xs) => wrap("List", xs.iter().map(|x| to_json(x, typed)).collect()),
        Value::Map(es) => match v.entity() {
            Some(e) => entity_json(e, typed),
            None => wrap(
                "Map",
                Json::Object(
                    es.iter()
                        .map(|(k, x)| (k.clone(), to_json(x, typed)))
                        .collect(),
                ),
            ),
        },
        Value::Temporal(t) => {
            let name = match t {
                Temporal::Date(_) => "Date",
                Temporal::LocalTime(_) => "LocalTime",
                Temporal::Time(..) => "Time",
                Temporal::LocalDateTime(_) => "LocalDateTime",
                Temporal::DateTime(_, _, Some(_)) => "ZonedDateTime",
                Temporal::DateTime(..) => "OffsetDateTime",
                Temporal::Duration(_) => "Duration",
            };
            wrap(name, Json::String(t.to_string()))
        }
        Value::Other(s) => {
            use datafusion::common::ScalarValue as S;
            match s {
                S::Binary(Some(b)) | S::LargeBinary(Some(b)) | S::BinaryView(Some(b)) => {
                    use base64::Engine;
                    let text = base64::engine::general_purpose::STANDARD.encode(b);
                    wrap("Base64", Json::String(text))
                }
                other if other.is_null() => wrap("Null", Json::Null),
                other => wrap("String", Json::String(other.to_string())),
            }
        }
    }
}

/// A node or relationship as the Query API writes it (typed JSON prefixes its keys with `_`);
/// a path as its elements in order: node, relationship, node, ...
fn entity_json(e: Entity<'_>, typed: bool) -> Json {
    let p = if typed { "_" } else { "" };
    let props = |ps: Vec<(&str, &Value)>| {
        Json::Object(
            ps.into_iter()
                .map(|(k, v)| (k.to_string(), to_json(v, typed)))
                .collect::<JsonMap<_, _>>(),
        )
    };
    let (name, body) = match e {
        Entity::Node {
            labels,
            element_id,
            properties,
        } => (
            "Node",
            json!({
                format!("{p}elementId"): element_id.map(super::values::shown_id),
                format!("{p}labels"): labels,
                format!("{p}properties"): props(properties),
            }),
        ),
        Entity::Relationship {
            rel_type,
            element_id,
            start,
            end,
            properties,
        } => (
            "Relationship",
            json!({
                format!("{p}elementId"): element_id.map(super::values::shown_id),
                format!("{p}startNodeElementId"): start.map(super::values::shown_id),
                format!("{p}endNodeElementId"): end.map(super::values::shown_id),
                format!("{p}type"): rel_type,
                format!("{p}properties"): props(properties),
            }),
        ),
        Entity::Path {
            nodes,
            relationships,
        } => {
            let mut items = Vec::new();
            for (i, n) in nodes.iter().enumerate() {
                if let Some(r) = i.checked_sub(1).and_then(|j| relationships.get(j)) {
                    items.push(to_json(r, typed));
                }
                items.push(to_json(n, typed));
            }
            ("Path", Json::Array(items))
        }
    };
    if typed {
        json!({"$type": name, "_value": body})
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_plain_and_typed_json() {
        let node = Value::Map(vec![
            ("__label".into(), Value::Str("Person".into())),
            ("name".into(), Value::Str("Ann".into())),
            ("__nid".into(), Value::Str("Person\u{1f}1".into())),
        ]);
        assert_eq!(
            to_json(&node, false),
            json!({"elementId": "Person:1", "labels": ["Person"], "properties": {"name": "Ann"}})
        );
        assert_eq!(
            to_json(&Value::Int(7), true),
            json!({"$type": "Integer", "_value": "7"})
        );
        assert_eq!(to_json(&Value::Float(f64::NAN), false), json!("NaN"));
        // A date read from typed JSON is written back as it was.
        let typed = json!({"$type": "Date", "_value": "2024-02-29"});
        let body = json!({"statement": "RETURN $d", "parameters": {"d": typed}}).to_string();
        let r = super::super::json::request(body.as_bytes(), 1 << 20).unwrap();
        let Value::Temporal(d) = r.params["d"].clone() else {
            panic!("not a date")
        };
        assert_eq!(to_json(&Value::Temporal(d), true), typed);
        // Past what any JSON number type of the parser holds: found in the text.
        for (body, found) in [
            (
                r#"{"statement": "RETURN $x", "parameters": {"x": 123456789012345678901234}}"#,
                Some("123456789012345678901234"),
            ),
            (
                r#"{"statement": "RETURN 99999999999999999999", "parameters": {"x": [1, -9223372036854775809]}}"#,
                Some("-9223372036854775809"),
            ),
            (
                r#"{"statement": "x", "parameters": {"x": 1e300, "y": 9223372036854775807, "s": "1\"99999999999999999999"}}"#,
                None,
            ),
        ] {
            assert_eq!(
                oversized_integer(body.as_bytes()).as_deref(),
                found,
                "{body}"
            );
        }
    }
}
