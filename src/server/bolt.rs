//! One Bolt connection: the handshake (versions 5.4 down to 5.0, and 4.4), chunked framing,
//! and the message state machine: HELLO / LOGON, RUN, PULL n and DISCARD in auto-commit or
//! explicit transactions (BEGIN / COMMIT / ROLLBACK), RESET, ROUTE (this server for every
//! role), TELEMETRY, GOODBYE.
//!
//! A task of its own reads the socket and hands decoded messages over a channel, so a RESET or
//! a disconnect is seen while a query runs: the query is then dropped, which cancels it. A
//! result is read from the engine's stream one batch at a time as PULLs ask for rows, and
//! records are written out as they are encoded: a large result is never held.

use super::auth::Login;
use super::messages::Messages;
use super::metrics::Closed;
use super::packstream::{PackValue, Packer, Unpacker};
use super::running::Running;
use super::status::{self, Failure};
use super::values::{self, Version};
use super::{procedures, Conn, IoBox, Shared};
use crate::functions::value::{value_at, Value};
use arrow::array::RecordBatch;
use datafusion::execution::memory_pool::MemoryReservation;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, Notify};

/// The versions served, most preferred first.
const SUPPORTED: [Version; 6] = [
    Version { major: 5, minor: 4 },
    Version { major: 5, minor: 3 },
    Version { major: 5, minor: 2 },
    Version { major: 5, minor: 1 },
    Version { major: 5, minor: 0 },
    Version { major: 4, minor: 4 },
];

const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];

/// The largest message accepted before the client authenticated (HELLO and LOGON are small):
/// an anonymous client cannot make the server decode megabytes.
const GREETING_BYTES: usize = 64 << 10;

/// Bytes of encoded records buffered before they are written to the socket.
const FLUSH_BYTES: usize = 64 << 10;

mod msg {
    pub const HELLO: u8 = 0x01;
    pub const GOODBYE: u8 = 0x02;
    pub const RESET: u8 = 0x0F;
    pub const RUN: u8 = 0x10;
    pub const BEGIN: u8 = 0x11;
    pub const COMMIT: u8 = 0x12;
    pub const ROLLBACK: u8 = 0x13;
    pub const DISCARD: u8 = 0x2F;
    pub const PULL: u8 = 0x3F;
    pub const TELEMETRY: u8 = 0x54;
    pub const ROUTE: u8 = 0x66;
    pub const LOGON: u8 = 0x6A;
    pub const LOGOFF: u8 = 0x6B;
    pub const SUCCESS: u8 = 0x70;
    pub const RECORD: u8 = 0x71;
    pub const IGNORED: u8 = 0x7E;
    pub const FAILURE: u8 = 0x7F;
}

/// The version to speak, from the client's four proposals (`[_, range, minor, major]`
/// each, in its order of preference); `None` when none is served.
pub fn negotiate(proposals: &[u8; 16]) -> Option<Version> {
    proposals.chunks_exact(4).find_map(|p| {
        let (range, minor, major) = (p[1], p[2], p[3]);
        SUPPORTED.iter().copied().find(|v| {
            v.major == major && v.minor <= minor && v.minor >= minor.saturating_sub(range)
        })
    })
}

/// Bytes of messages read and not yet handled (decoded), past which the reading task waits:
/// a client that pipelines large messages holds at most this much (and the message being
/// read).
const QUEUED_BYTES: usize = 16 << 20;

/// What the reading task hands the connection.
enum Incoming {
    /// A message: its tag, fields, and the memory they take (a RUN's, what its query copies
    /// too), held in the server's room for messages until it is handled, and what they
    /// decoded to (a RUN's result keeps that much while it is open).
    Message(u8, Vec<PackValue>, MemoryReservation, usize),
    /// A message that would decode to more than one may, or found no room: its failure.
    Refused(Failure),
    /// A message that is not a PackStream structure.
    Malformed(String),
    /// A message past the size limit (skipped).
    TooLarge(usize),
}

/// What the reading task tells a running query.
#[derive(Default)]
struct Signals {
    /// RESETs read and not yet handled.
    resets: AtomicU64,
    /// The client is gone.
    closed: AtomicBool,
    /// The client authenticated: its messages may be as large as the server accepts.
    authed: AtomicBool,
    notify: Notify,
    /// Messages handed over, and handled: before authentication, a message past the
    /// greeting's size waits for the ones before it (a LOGON may precede it).
    sent: AtomicU64,
    handled: AtomicU64,
    caught_up: Notify,
    /// Bytes of the messages handed over and not yet handled (decoded).
    queued: std::sync::atomic::AtomicUsize,
}

impl Signals {
    fn interrupted(&self) -> bool {
        self.resets.load(SeqCst) > 0 || self.closed.load(SeqCst)
    }

    /// Waits until the connection has handled enough messages for `done`.
    async fn handled_until(&self, done: impl Fn(&Self) -> bool) {
        loop {
            let caught_up = self.caught_up.notified();
            tokio::pin!(caught_up);
            caught_up.as_mut().enable();
            if done(self) {
                return;
            }
            caught_up.await;
        }
    }

    /// The largest message the client may send now: after the messages handed over before
    /// it are handled (a LOGON among them), to know whether it authenticated.
    async fn limit_after_earlier(&self, max_bytes: usize) -> usize {
        let sent = self.sent.load(SeqCst);
        self.handled_until(|s| s.handled.load(SeqCst) >= sent).await;
        if self.authed.load(SeqCst) {
            max_bytes
        } else {
            max_bytes.min(GREETING_BYTES)
        }
    }
}

/// Why a query stopped before its end.
enum Stop {
    Interrupted,
    TimedOut,
}

pub(super) async fn serve(mut io: Box<dyn IoBox>, shared: Arc<Shared>, conn: Conn) {
    let handshake = tokio::time::timeout_at(conn.deadline, handshake(&mut io));
    let version = tokio::select! {
        v = handshake => v,
        _ = conn.evicted() => return shared.metrics.closed(Closed::Evicted),
    };
    let version = match version {
        Ok(Ok(Some(v))) => v,
        Err(_) => return shared.metrics.closed(Closed::AuthTimeout),
        _ => return,
    };
    let (rd, wr) = tokio::io::split(io);
    let signals = Arc::new(Signals::default());
    let (tx, rx) = mpsc::channel(64);
    let room = shared
        .messages
        .reservation(format!("bolt connection {}", conn.id));
    let reader = tokio::spawn(read_messages(rd, tx, signals.clone(), shared.clone(), room));
    let refused = conn.slot.is_none();
    let mut conn = Connection {
        shared: shared.clone(),
        version,
        conn,
        wr,
        out: Packer::default(),
        signals,
        hello: false,
        authed: false,
        failed: false,
        tx: None,
        results: Vec::new(),
        next_qid: 0,
        handling: None,
    };
    if refused {
        shared.metrics.connections_refused.fetch_add(1, SeqCst);
        conn.refuse(rx).await;
    } else {
        conn.run(rx).await;
    }
    reader.abort();
}

/// Reads the magic and the proposals and answers with the version chosen (zeros and `None`
/// when there is none).
async fn handshake(io: &mut Box<dyn IoBox>) -> std::io::Result<Option<Version>> {
    let mut magic = [0u8; 4];
    io.read_exact(&mut magic).await?;
    if magic != MAGIC {
        return Ok(None);
    }
    let mut proposals = [0u8; 16];
    io.read_exact(&mut proposals).await?;
    let v = negotiate(&proposals);
    let answer = v.map_or([0; 4], |v| [0, 0, v.minor, v.major]);
    io.write_all(&answer).await?;
    io.flush().await?;
    Ok(v)
}

/// Reads messages until the client closes the connection (or the connection is dropped).
/// Each takes the memory it decodes to from `room` until it is handled (a RUN's in a
/// transaction, until its result is let go).
async fn read_messages(
    rd: ReadHalf<Box<dyn IoBox>>,
    tx: mpsc::Sender<Incoming>,
    signals: Arc<Signals>,
    shared: Arc<Shared>,
    room: MemoryReservation,
) {
    let max_bytes = shared.options.max_message_bytes;
    // Buffered: a message's header, body and end marker (and a pipelined RUN and PULL) in
    // one read.
    let mut rd = tokio::io::BufReader::with_capacity(64 << 10, rd);
    // The bytes of the message being read.
    let raw = room.new_empty();
    loop {
        signals
            .handled_until(|s| s.queued.load(SeqCst) < QUEUED_BYTES)
            .await;
        let limit = if signals.authed.load(SeqCst) {
            max_bytes
        } else {
            max_bytes.min(GREETING_BYTES)
        };
        let read = read_message(&mut rd, limit, &signals, &shared, &raw);
        let incoming = match read.await {
            Ok(Some(Read::Slow)) => {
                shared.metrics.closed(Closed::SlowBody);
                break;
            }
            Ok(Some(Read::Whole(bytes))) => {
                let incoming = decoded(&bytes, &raw, &shared.messages, &room, &signals).await;
                drop(bytes);
                incoming
            }
            Ok(Some(Read::TooLarge(size))) => Incoming::TooLarge(size),
            Ok(Some(Read::NoRoom(size))) if size > shared.messages.budget => {
                Incoming::Refused(shared.messages.too_large())
            }
            Ok(Some(Read::NoRoom(size))) => Incoming::Refused(shared.messages.no_room(size)),
            Ok(None) | Err(_) => break,
        };
        raw.free();
        if matches!(incoming, Incoming::Message(msg::RESET, ..)) {
            signals.resets.fetch_add(1, SeqCst);
            signals.notify.notify_one();
        }
        if let Incoming::Message(_, _, held, _) = &incoming {
            signals.queued.fetch_add(held.size(), SeqCst);
        }
        signals.sent.fetch_add(1, SeqCst);
        if tx.send(incoming).await.is_err() {
            break;
        }
    }
    signals.closed.store(true, SeqCst);
    signals.notify.notify_one();
}

/// Where a RUN's parameters stand in it: the message, its fields, the parameters' map.
const PARAMETER_DEPTH: usize = 2;

/// The message in `bytes`, holding room for what it takes: what it decodes to, and for a RUN
/// what its query copies of its parameters while it is planned and started. With no room, it
/// waits for this connection's earlier messages to be let go and then for others to let go of
/// theirs (holding only its bytes meanwhile), and is decoded again.
async fn decoded(
    bytes: &[u8],
    raw: &MemoryReservation,
    messages: &Messages,
    room: &MemoryReservation,
    signals: &Signals,
) -> Incoming {
    let decode = || {
        let mut u = Unpacker::with_budget(bytes, messages.budget).typed_at(PARAMETER_DEPTH);
        match u.value() {
            Ok(PackValue::Struct(tag, fields)) if u.at_end() => {
                let cost = match tag {
                    msg::RUN => Messages::query_cost(u.decoded(), u.copied()),
                    _ => u.decoded(),
                };
                Ok((tag, fields, cost, u.decoded()))
            }
            Ok(_) => Err(Incoming::Malformed(
                "a message must be one structure".into(),
            )),
            Err(_) if u.over_budget() => Err(Incoming::Refused(messages.too_large())),
            Err(e) => Err(Incoming::Malformed(e.to_string())),
        }
    };
    let (tag, fields, cost, decoded) = match decode() {
        Ok(m) => m,
        Err(refused) => return refused,
    };
    // These end what holds the room: they take none.
    if matches!(tag, msg::RESET | msg::GOODBYE) && fields.is_empty() {
        return Incoming::Message(tag, fields, room.new_empty(), 0);
    }
    if let Some(held) = Messages::take(room, cost) {
        return Incoming::Message(tag, fields, held, decoded);
    }
    drop(fields);
    // Waiting, its bytes let go of their room (that room and the message's cost together
    // might never fit).
    raw.free();
    signals.handled_until(|s| s.queued.load(SeqCst) == 0).await;
    let held = room.new_empty();
    if !messages
        .grow(&held, cost, || signals.closed.load(SeqCst))
        .await
    {
        return Incoming::Refused(messages.no_room(cost));
    }
    match decode() {
        Ok((tag, fields, _, decoded)) => Incoming::Message(tag, fields, held, decoded),
        Err(refused) => refused,
    }
}

/// A message read from the stream.
enum Read {
    Whole(Vec<u8>),
    /// Past the limit that applied: its size (its bytes were read and dropped).
    TooLarge(usize),
    /// No room for its bytes in time: its size (the rest was read and dropped).
    NoRoom(usize),
    /// Its bytes came slower than the server accepts.
    Slow,
}

/// The next message (bytes past `limit` are read and dropped; a message past it before
/// authentication waits for the earlier messages to be handled, and may be as large as
/// `max_bytes` if they authenticated the client); `None` at the end of the stream. Its bytes
/// are held in `raw` as they are read (the socket is not read while there is no room), and
/// must come as fast as a request body (`Slow` otherwise). Empty chunks between messages
/// (keep-alives) are skipped.
async fn read_message(
    rd: &mut (impl tokio::io::AsyncRead + Unpin),
    limit: usize,
    signals: &Signals,
    shared: &Shared,
    raw: &MemoryReservation,
) -> std::io::Result<Option<Read>> {
    let (messages, max_bytes) = (&shared.messages, shared.options.max_message_bytes);
    let (grace, rate) = (
        shared.options.auth_timeout,
        shared.options.min_body_rate.max(1) as f64,
    );
    // Set at a message's first chunk; the time spent waiting for room or for earlier
    // messages to be handled does not count.
    let mut started: Option<tokio::time::Instant> = None;
    let mut waited = Duration::ZERO;
    let deadline = |started: Option<tokio::time::Instant>, waited, size: usize| {
        started.map(|t| t + waited + grace + Duration::from_secs_f64(size as f64 / rate))
    };
    let mut max_bytes_now = limit;
    let mut rechecked = limit >= max_bytes;
    let mut no_room = false;
    let mut buf = Vec::new();
    let mut size = 0usize;
    loop {
        let mut header = [0u8; 2];
        match within(deadline(started, waited, size), rd.read_exact(&mut header)).await {
            Some(Ok(_)) => {}
            Some(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof && size == 0 => {
                return Ok(None)
            }
            Some(Err(e)) => return Err(e),
            None => return Ok(Some(Read::Slow)),
        }
        let n = u16::from_be_bytes(header) as usize;
        if n > 0 && started.is_none() {
            started = Some(tokio::time::Instant::now());
        }
        if n == 0 {
            if size == 0 {
                continue;
            }
            return Ok(Some(if size > max_bytes_now {
                Read::TooLarge(size)
            } else if no_room {
                Read::NoRoom(size)
            } else {
                Read::Whole(buf)
            }));
        }
        size += n;
        if size > max_bytes_now && !rechecked {
            rechecked = true;
            let waiting = tokio::time::Instant::now();
            max_bytes_now = signals.limit_after_earlier(max_bytes).await;
            waited += waiting.elapsed();
        }
        if size <= max_bytes_now && !no_room {
            let start = buf.len();
            buf.reserve(n);
            let waiting = tokio::time::Instant::now();
            no_room = size > messages.budget || !messages.cover(raw, buf.capacity()).await;
            waited += waiting.elapsed();
            if !no_room {
                buf.resize(start + n, 0);
                match within(
                    deadline(started, waited, size),
                    rd.read_exact(&mut buf[start..]),
                )
                .await
                {
                    Some(r) => r?,
                    None => return Ok(Some(Read::Slow)),
                };
                continue;
            }
        }
        buf = Vec::new();
        raw.free();
        let mut skip = [0u8; 4096];
        let mut left = n;
        while left > 0 {
            let k = left.min(skip.len());
            match within(
                deadline(started, waited, size),
                rd.read_exact(&mut skip[..k]),
            )
            .await
            {
                Some(r) => r?,
                None => return Ok(Some(Read::Slow)),
            };
            left -= k;
        }
    }
}

/// `f`'s output, or `None` if `deadline` passes first.
async fn within<T>(
    deadline: Option<tokio::time::Instant>,
    f: impl std::future::Future<Output = T>,
) -> Option<T> {
    match deadline {
        Some(d) => tokio::time::timeout_at(d, f).await.ok(),
        None => Some(f.await),
    }
}

/// An explicit transaction.
struct Tx {
    deadline: Option<Instant>,
    /// The graph's state at BEGIN: its queries read one state, while its files last.
    state: Arc<crate::session::Graph>,
}

/// A result being pulled.
struct Open {
    qid: i64,
    source: Source,
    started: Instant,
    deadline: Option<Instant>,
    query: String,
    /// An error met looking ahead, reported at the next PULL.
    error: Option<crate::Error>,
    /// The room its RUN's parameters take until the result is let go (what planning copied
    /// of them is let go once the query has started).
    _params: Option<MemoryReservation>,
}

enum Source {
    Stream {
        stream: Running,
        batch: Option<RecordBatch>,
        row: usize,
    },
    Rows(VecDeque<Vec<Value>>),
}

struct Connection {
    shared: Arc<Shared>,
    version: Version,
    conn: Conn,
    wr: WriteHalf<Box<dyn IoBox>>,
    /// Framed messages not yet written.
    out: Packer,
    signals: Arc<Signals>,
    hello: bool,
    authed: bool,
    /// A request failed: everything up to the next RESET is ignored.
    failed: bool,
    tx: Option<Tx>,
    results: Vec<Open>,
    next_qid: i64,
    /// The room the message being handled takes, and what it decoded to.
    handling: Option<(MemoryReservation, usize)>,
}

/// Whether the connection goes on after a message.
type Next = std::io::Result<bool>;

impl Connection {
    async fn run(&mut self, mut rx: mpsc::Receiver<Incoming>) {
        loop {
            // Answers to pipelined messages (RUN then PULL) go out together, once nothing
            // more is waiting.
            if rx.is_empty() && self.flush().await.is_err() {
                return;
            }
            let Some(incoming) = self.next_message(&mut rx).await else {
                return;
            };
            let next = match incoming {
                Incoming::Message(tag, fields, held, decoded) => {
                    let size = held.size();
                    self.handling = Some((held, decoded));
                    let next = self.handle(tag, fields).await;
                    self.handling = None;
                    self.signals.queued.fetch_sub(size, SeqCst);
                    next
                }
                // As any message after a failure, or before a RESET is handled.
                Incoming::Refused(_) if self.failed || self.signals.resets.load(SeqCst) > 0 => {
                    self.message(msg::IGNORED, |_| {});
                    Ok(true)
                }
                Incoming::Refused(f) => {
                    self.fail(f);
                    Ok(true)
                }
                Incoming::TooLarge(n) if self.authed => {
                    self.fail(Failure::invalid(format!(
                        "a message of {n} bytes is larger than the server accepts ({} bytes)",
                        self.shared.options.max_message_bytes
                    )));
                    Ok(true)
                }
                Incoming::TooLarge(n) => {
                    self.fail(Failure::invalid(format!(
                        "a message of {n} bytes before authentication"
                    )));
                    Ok(false)
                }
                Incoming::Malformed(why) => {
                    // The stream can no longer be trusted: say why, then close.
                    self.fail(Failure::invalid(why));
                    Ok(false)
                }
            };
            self.signals.handled.fetch_add(1, SeqCst);
            self.signals.caught_up.notify_waiters();
            match next {
                Ok(true) => {}
                Ok(false) => {
                    let _ = self.flush().await;
                    return;
                }
                Err(_) => return,
            }
        }
    }

    /// The client's next message; `None` when the connection is to close: the client left,
    /// it did not authenticate in time (or its slot went to a newer connection first), or it
    /// left a result or a transaction open without a word for the idle timeout.
    async fn next_message(&mut self, rx: &mut mpsc::Receiver<Incoming>) -> Option<Incoming> {
        if !self.authed {
            let why = tokio::select! {
                m = tokio::time::timeout_at(self.conn.deadline, rx.recv()) => match m {
                    Ok(m) => return m,
                    Err(_) => Closed::AuthTimeout,
                },
                _ = self.conn.evicted() => Closed::Evicted,
            };
            self.closed(why);
            let _ = self.flush().await;
            return None;
        }
        if self.results.is_empty() && self.tx.is_none() {
            return rx.recv().await;
        }
        // Nothing is said: the client is not reading, and its result is dropped.
        let idle = self.shared.options.idle_timeout;
        match tokio::time::timeout(idle, rx.recv()).await {
            Ok(m) => m,
            Err(_) => {
                self.shared.metrics.closed(Closed::Idle);
                None
            }
        }
    }

    /// Closes an unauthenticated connection for `why`, saying so.
    fn closed(&mut self, why: Closed) {
        self.shared.metrics.closed(why);
        self.fail(match why {
            Closed::Evicted => status::evicted(),
            _ => Failure::new(
                status::UNAUTHORIZED,
                "the client did not authenticate in time (--auth-timeout)",
            ),
        });
    }

    /// Past the connection limit: the first message is answered with a failure.
    async fn refuse(&mut self, mut rx: mpsc::Receiver<Incoming>) {
        let first = tokio::time::timeout_at(self.conn.deadline, rx.recv()).await;
        if let Ok(Some(_)) = first {
            self.fail(Failure::new(
                status::TOO_MANY_CONNECTIONS,
                format!(
                    "the server serves at most {} connections at once (--max-connections)",
                    self.shared.options.max_connections
                ),
            ));
            let _ = self.flush().await;
        }
    }

    async fn handle(&mut self, tag: u8, fields: Vec<PackValue>) -> Next {
        if !well_formed(tag, &fields) {
            self.fail(Failure::invalid(format!(
                "message 0x{tag:02X} with fields of the wrong number or types"
            )));
            return Ok(false);
        }
        match tag {
            msg::GOODBYE => return Ok(false),
            msg::RESET => {
                self.signals.resets.fetch_sub(1, SeqCst);
                self.results.clear();
                self.tx = None;
                self.failed = false;
                self.success(&[]);
                return Ok(true);
            }
            _ => {}
        }
        if self.signals.resets.load(SeqCst) > 0 || self.failed {
            self.message(msg::IGNORED, |_| {});
            return Ok(true);
        }
        let extra = |i: usize| fields.get(i).cloned().unwrap_or(PackValue::Map(vec![]));
        match tag {
            msg::HELLO if !self.hello => return self.hello(extra(0)).await,
            _ if !self.hello => {
                self.fail(Failure::invalid("the first message must be HELLO"));
                return Ok(false);
            }
            msg::LOGON if !self.authed && self.version >= V5_1 => {
                return self.logon(&extra(0)).await
            }
            msg::LOGOFF if self.authed && self.version >= V5_1 => {
                self.authed = false;
                self.signals.authed.store(false, SeqCst);
                if let Some(slot) = &self.conn.slot {
                    slot.logged_off();
                }
                self.conn.deadline = tokio::time::Instant::now() + self.shared.options.auth_timeout;
                self.results.clear();
                self.tx = None;
                self.success(&[]);
            }
            _ if !self.authed => {
                self.fail(Failure::new(
                    status::UNAUTHORIZED,
                    "authenticate (LOGON) before sending queries",
                ));
                return Ok(false);
            }
            msg::RUN => {
                let query = fields
                    .first()
                    .and_then(PackValue::as_str)
                    .map(str::to_string);
                let Some(query) = query else {
                    self.fail(Failure::invalid("RUN needs the query text"));
                    return Ok(true);
                };
                self.run_query(query, extra(1), &extra(2)).await;
            }
            msg::PULL | msg::DISCARD => {
                let e = extra(0);
                let n = e.get("n").and_then(PackValue::as_int).unwrap_or(-1);
                let qid = e.get("qid").and_then(PackValue::as_int).unwrap_or(-1);
                return self.pull(n, qid, tag == msg::DISCARD).await;
            }
            msg::BEGIN => {
                let e = extra(0);
                if let Err(f) = self.check_database(&e) {
                    self.fail(f);
                } else if self.tx.is_some() {
                    self.fail(Failure::invalid("a transaction is already open"));
                } else {
                    self.results.clear();
                    self.tx = Some(Tx {
                        deadline: tx_timeout(&e).map(|t| Instant::now() + t),
                        state: self.shared.graph.current(),
                    });
                    self.success(&[]);
                }
            }
            msg::COMMIT | msg::ROLLBACK => {
                if self.tx.take().is_none() {
                    self.fail(Failure::invalid("there is no open transaction"));
                } else {
                    self.results.clear();
                    if tag == msg::COMMIT {
                        self.success(&[("bookmark", PackValue::Str(BOOKMARK.into()))]);
                    } else {
                        self.success(&[]);
                    }
                }
            }
            msg::ROUTE => self.route(&extra(0), &extra(2)),
            msg::TELEMETRY => self.success(&[]),
            other => {
                self.fail(Failure::invalid(format!(
                    "message 0x{other:02X} is not part of Bolt {}",
                    self.version
                )));
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn hello(&mut self, extra: PackValue) -> Next {
        self.hello = true;
        // Before 5.1 the credentials come with HELLO.
        if self.version < V5_1 && !self.check_auth(&extra).await {
            return Ok(false);
        }
        // Drivers accept only agents that start with `Neo4j/` (the 4.x ones refuse the
        // connection otherwise), as other Bolt servers (Memgraph) also say.
        let agent = format!(
            "Neo4j/5.26.0 compatible graph database server - lance-csr/{}",
            env!("CARGO_PKG_VERSION")
        );
        self.success(&[
            ("server", PackValue::Str(agent)),
            (
                "connection_id",
                PackValue::Str(format!("bolt-{}", self.conn.id)),
            ),
            ("hints", PackValue::Map(vec![])),
        ]);
        Ok(true)
    }

    async fn logon(&mut self, auth: &PackValue) -> Next {
        if !self.check_auth(auth).await {
            return Ok(false);
        }
        self.success(&[]);
        Ok(true)
    }

    /// Checks the credentials of `auth` (scheme `basic`, or `none` where the server needs
    /// none); a failure is answered and the connection is to be closed.
    async fn check_auth(&mut self, auth: &PackValue) -> bool {
        let text = |k: &str| auth.get(k).and_then(PackValue::as_str).map(str::to_string);
        let login = match text("scheme").as_deref() {
            Some("basic") => {
                let (user, password) = (text("principal"), text("credentials"));
                let login = self.shared.login(self.conn.peer, user, password);
                // A check waiting for its turn still ends with the connection's deadline, and
                // when its slot goes to a newcomer.
                let deadline = self.conn.deadline;
                let cut = tokio::select! {
                    l = tokio::time::timeout_at(deadline, login) => l.map_err(|_| Closed::AuthTimeout),
                    _ = self.conn.evicted() => Err(Closed::Evicted),
                };
                match cut {
                    Ok(l) => l,
                    Err(why) => {
                        self.closed(why);
                        return false;
                    }
                }
            }
            None | Some("none") if matches!(self.shared.options.auth, super::Auth::None) => {
                Login::Allowed
            }
            _ => Login::Refused,
        };
        match login {
            Login::Allowed => {
                // Its slot may have gone to a newcomer while the password was checked.
                if self.conn.slot.as_ref().is_some_and(|s| !s.authenticated()) {
                    self.closed(Closed::Evicted);
                    return false;
                }
                self.authed = true;
                self.signals.authed.store(true, SeqCst);
            }
            Login::Refused => {
                self.shared.metrics.logins_wrong.fetch_add(1, SeqCst);
                self.fail(Failure::new(
                    status::UNAUTHORIZED,
                    "The client is unauthorized due to authentication failure.",
                ))
            }
            Login::Locked => {
                self.shared.metrics.logins_locked.fetch_add(1, SeqCst);
                self.fail(status::locked_out())
            }
        }
        self.authed
    }

    fn check_database(&self, extra: &PackValue) -> Result<(), Failure> {
        match extra.get("db").and_then(PackValue::as_str) {
            Some(db) if db != self.shared.options.database => Err(Failure::new(
                status::DATABASE_NOT_FOUND,
                format!(
                    "Database does not exist. Database name: '{db}' (this server serves '{}')",
                    self.shared.options.database
                ),
            )),
            _ => Ok(()),
        }
    }

    /// ROUTE: this server is the router, reader and writer of its one database.
    fn route(&mut self, routing: &PackValue, extra: &PackValue) {
        let db_extra = match extra {
            PackValue::Map(_) => extra.clone(),
            // 4.4 sends the database name itself.
            PackValue::Str(s) => PackValue::Map(vec![("db".into(), PackValue::Str(s.clone()))]),
            _ => PackValue::Map(vec![]),
        };
        if let Err(f) = self.check_database(&db_extra) {
            self.fail(f);
            return;
        }
        let address = routing
            .get("address")
            .and_then(PackValue::as_str)
            .map(str::to_string)
            .or_else(|| self.conn.local.map(|a| a.to_string()))
            .unwrap_or_default();
        let server = |role: &str| {
            PackValue::Map(vec![
                (
                    "addresses".into(),
                    PackValue::List(vec![PackValue::Str(address.clone())]),
                ),
                ("role".into(), PackValue::Str(role.into())),
            ])
        };
        let rt = PackValue::Map(vec![
            ("ttl".into(), PackValue::Int(300)),
            (
                "db".into(),
                PackValue::Str(self.shared.options.database.clone()),
            ),
            (
                "servers".into(),
                PackValue::List(vec![server("ROUTE"), server("READ"), server("WRITE")]),
            ),
        ]);
        self.success(&[("rt", rt)]);
    }

    async fn run_query(&mut self, query: String, params: PackValue, extra: &PackValue) {
        let started = Instant::now();
        if let Err(f) = self.check_database(extra) {
            return self.fail(f);
        }
        let (deadline, state) = match &self.tx {
            Some(tx) => (tx.deadline, Some(tx.state.clone())),
            None => (tx_timeout(extra).map(|t| started + t), None),
        };
        if self.tx.is_none() {
            // A new auto-commit query ends the one before.
            self.results.clear();
        }
        let schema = || match &state {
            Some(g) => g.schema(),
            None => self.shared.graph.current().schema(),
        };
        let answer = procedures::call(&query, schema);
        let (columns, source) = match answer {
            Some(Ok(a)) => (a.columns, Source::Rows(a.rows.into())),
            Some(Err(f)) => return self.query_failed(f, started),
            None => {
                let params = match params_of(params, self.version) {
                    Ok(p) => p,
                    Err(f) => return self.query_failed(f, started),
                };
                let shared = self.shared.clone();
                let start = Running::start(&shared, state, query.clone(), params);
                match self.wait(start, deadline).await {
                    Ok(Ok(stream)) => (
                        stream.columns.clone(),
                        Source::Stream {
                            stream,
                            batch: None,
                            row: 0,
                        },
                    ),
                    Ok(Err(e)) => return self.query_failed(status::failure(&e, &query), started),
                    Err(stop) => return self.stopped(stop, started),
                }
            }
        };
        let qid = self.next_qid;
        self.next_qid += 1;
        let fields = PackValue::List(columns.into_iter().map(PackValue::Str).collect());
        let t_first = PackValue::Int(started.elapsed().as_millis() as i64);
        if self.tx.is_some() {
            self.success(&[
                ("fields", fields),
                ("t_first", t_first),
                ("qid", PackValue::Int(qid)),
            ]);
        } else {
            self.success(&[("fields", fields), ("t_first", t_first)]);
        }
        self.results.push(Open {
            qid,
            source,
            started,
            deadline,
            query,
            error: None,
            _params: self.handling.take().map(|(room, decoded)| {
                room.shrink(room.size().saturating_sub(decoded));
                room
            }),
        });
    }

    /// PULL (or DISCARD) `n` rows (`-1`: all) of result `qid` (`-1`: the last one).
    async fn pull(&mut self, n: i64, qid: i64, discard: bool) -> Next {
        let at = match qid {
            -1 => self.results.len().checked_sub(1),
            q => self.results.iter().position(|o| o.qid == q),
        };
        let Some(at) = at else {
            self.fail(Failure::invalid("there is no result to pull"));
            return Ok(true);
        };
        let mut open = self.results.remove(at);
        let pull_started = Instant::now();
        let mut sent = 0i64;
        let more = loop {
            if discard || (n >= 0 && sent >= n) {
                break !discard && self.has_more(&mut open).await;
            }
            let row = match self.next_row(&mut open).await {
                Ok(Some(row)) => row,
                Ok(None) => break false,
                Err(Ok(stop)) => {
                    self.stopped(stop, open.started);
                    return Ok(!self.signals.closed.load(SeqCst));
                }
                Err(Err(e)) => {
                    let f = status::failure(&e, &open.query);
                    self.query_failed(f, open.started);
                    return Ok(true);
                }
            };
            let version = self.version;
            self.message(msg::RECORD, |p| {
                p.list_header(row.len());
                row.iter().for_each(|v| values::pack(p, v, version));
            });
            sent += 1;
            if self.out.buf.len() >= FLUSH_BYTES {
                self.flush().await?;
            }
        };
        if more {
            self.results.insert(at, open);
            self.success(&[("has_more", PackValue::Bool(true))]);
            return Ok(true);
        }
        self.shared
            .metrics
            .bolt
            .record(open.started.elapsed(), true);
        let mut meta = vec![
            (
                "t_last",
                PackValue::Int(pull_started.elapsed().as_millis() as i64),
            ),
            ("type", PackValue::Str("r".into())),
            ("db", PackValue::Str(self.shared.options.database.clone())),
        ];
        if self.tx.is_none() {
            meta.push(("bookmark", PackValue::Str(BOOKMARK.into())));
        }
        self.success(&meta);
        Ok(true)
    }

    /// `fut`, unless the client resets or leaves, or `deadline` passes first. Answers still
    /// in the buffer go out before any wait (a driver waits for RUN's answer before it reads
    /// rows), but not when `fut` is ready at once: then a pipelined RUN and PULL are answered
    /// in one write.
    async fn wait<T>(
        &mut self,
        fut: impl std::future::Future<Output = T>,
        deadline: Option<Instant>,
    ) -> Result<T, Stop> {
        let mut fut = std::pin::pin!(fut);
        if let std::task::Poll::Ready(v) = futures::poll!(fut.as_mut()) {
            return Ok(v);
        }
        if self.flush().await.is_err() {
            self.signals.closed.store(true, SeqCst);
            return Err(Stop::Interrupted);
        }
        let signals = self.signals.clone();
        interruptible(&signals, fut, deadline).await
    }

    /// The next row of `open`; `None` at its end.
    async fn next_row(&mut self, open: &mut Open) -> RowResult {
        if let Some(e) = open.error.take() {
            return Err(Err(e));
        }
        let deadline = open.deadline;
        match &mut open.source {
            Source::Rows(rows) => Ok(rows.pop_front()),
            Source::Stream { stream, batch, row } => loop {
                if let Some(b) = batch {
                    if *row < b.num_rows() {
                        let r = (0..b.num_columns())
                            .map(|c| value_at(b.column(c).as_ref(), *row))
                            .collect();
                        *row += 1;
                        return Ok(Some(r));
                    }
                }
                match self.wait(stream.next_batch(), deadline).await {
                    Ok(Ok(Some(b))) => {
                        *batch = Some(b);
                        *row = 0;
                    }
                    Ok(Ok(None)) => return Ok(None),
                    Ok(Err(e)) => return Err(Err(e)),
                    Err(stop) => return Err(Ok(stop)),
                }
            },
        }
    }

    /// Whether `open` has rows left (reading its next batch to know). An error reading it is
    /// kept for the next PULL.
    async fn has_more(&mut self, open: &mut Open) -> bool {
        let deadline = open.deadline;
        let error = match &mut open.source {
            Source::Rows(rows) => return !rows.is_empty(),
            Source::Stream { stream, batch, row } => loop {
                if batch.as_ref().is_some_and(|b| *row < b.num_rows()) {
                    return true;
                }
                match self.wait(stream.next_batch(), deadline).await {
                    Ok(Ok(Some(b))) => {
                        *batch = Some(b);
                        *row = 0;
                    }
                    // At the end, or stopped (which the RESET or the disconnect answers for).
                    Ok(Ok(None)) | Err(_) => return false,
                    Ok(Err(e)) => break e,
                }
            },
        };
        open.error = Some(error);
        true
    }

    fn query_failed(&mut self, f: Failure, started: Instant) {
        self.shared.metrics.bolt.record(started.elapsed(), false);
        self.fail(f);
    }

    /// A query stopped by a RESET, a disconnect or its transaction's time limit.
    fn stopped(&mut self, stop: Stop, started: Instant) {
        self.results.clear();
        match stop {
            // The RESET answers for it; the messages before it are ignored.
            Stop::Interrupted => {
                self.shared.metrics.bolt.record(started.elapsed(), false);
                self.message(msg::IGNORED, |_| {});
            }
            Stop::TimedOut => self.query_failed(
                Failure::new(
                    status::TIMED_OUT,
                    "The transaction has been terminated: it ran longer than the timeout the \
                     client configured (tx_timeout)",
                ),
                started,
            ),
        }
    }

    fn success(&mut self, meta: &[(&str, PackValue)]) {
        self.message(msg::SUCCESS, |p| {
            p.map_header(meta.len());
            for (k, v) in meta {
                p.string(k);
                p.value(v);
            }
        });
    }

    /// Answers with FAILURE; what follows is ignored until a RESET.
    fn fail(&mut self, f: Failure) {
        self.failed = true;
        self.results.clear();
        self.tx = None;
        self.message(msg::FAILURE, |p| {
            p.map_header(2);
            p.string("code");
            p.string(f.code);
            p.string("message");
            p.string(&f.message);
        });
    }

    /// Appends message `tag` (one structure, its fields written by `body`) to the output,
    /// framed in chunks.
    fn message(&mut self, tag: u8, body: impl FnOnce(&mut Packer)) {
        let fields = match tag {
            msg::IGNORED => 0,
            _ => 1,
        };
        let start = self.out.buf.len();
        self.out.buf.extend_from_slice(&[0, 0]);
        self.out.struct_header(tag, fields);
        body(&mut self.out);
        let len = self.out.buf.len() - start - 2;
        if len <= u16::MAX as usize {
            self.out.buf[start..start + 2].copy_from_slice(&(len as u16).to_be_bytes());
        } else {
            let body = self.out.buf.split_off(start + 2);
            self.out.buf.truncate(start);
            for chunk in body.chunks(u16::MAX as usize) {
                self.out
                    .buf
                    .extend_from_slice(&(chunk.len() as u16).to_be_bytes());
                self.out.buf.extend_from_slice(chunk);
            }
        }
        self.out.buf.extend_from_slice(&[0, 0]);
    }

    /// Writes what is buffered (failing once the client has read nothing for the idle
    /// timeout: the socket sees to it).
    async fn flush(&mut self) -> std::io::Result<()> {
        if self.out.buf.is_empty() {
            return Ok(());
        }
        self.wr.write_all(&self.out.buf).await?;
        self.wr.flush().await?;
        self.out.buf.clear();
        // A large result's buffer is not kept.
        self.out.buf.shrink_to(FLUSH_BYTES * 2);
        Ok(())
    }
}

/// Whether `fields` have the number and types message `tag` takes (unknown messages are
/// answered later).
fn well_formed(tag: u8, fields: &[PackValue]) -> bool {
    let map = |i: usize| matches!(fields.get(i), Some(PackValue::Map(_)));
    let map_or_none = |i: usize| matches!(fields.get(i), None | Some(PackValue::Map(_)));
    match tag {
        msg::HELLO | msg::LOGON => fields.len() == 1 && map(0),
        msg::RUN => {
            (2..=3).contains(&fields.len())
                && matches!(fields[0], PackValue::Str(_))
                && map(1)
                && map_or_none(2)
        }
        msg::BEGIN | msg::PULL | msg::DISCARD => fields.len() <= 1 && map_or_none(0),
        msg::TELEMETRY => fields.len() == 1 && matches!(fields[0], PackValue::Int(_)),
        msg::ROUTE => {
            fields.len() == 3
                && map(0)
                && matches!(
                    fields[1],
                    PackValue::List(_) | PackValue::Typed(_) | PackValue::Null
                )
                && matches!(
                    fields[2],
                    PackValue::Map(_) | PackValue::Str(_) | PackValue::Null
                )
        }
        msg::GOODBYE | msg::RESET | msg::COMMIT | msg::ROLLBACK | msg::LOGOFF => fields.is_empty(),
        _ => true,
    }
}

const V5_1: Version = Version { major: 5, minor: 1 };

/// What a finished auto-commit query or a commit reports as its bookmark: the server never
/// writes, so a bookmark has no write of its to wait for (each query reads the latest state
/// the server has read).
const BOOKMARK: &str = "lance-csr:read-only";

/// The client's time limit for a transaction (`tx_timeout`, milliseconds), if it set one.
fn tx_timeout(extra: &PackValue) -> Option<Duration> {
    let ms = extra.get("tx_timeout").and_then(PackValue::as_int)?;
    (ms > 0).then(|| Duration::from_millis(ms as u64))
}

fn params_of(params: PackValue, version: Version) -> Result<crate::planner::Params, Failure> {
    let PackValue::Map(entries) = params else {
        return Err(Failure::invalid("RUN's parameters must be a map"));
    };
    entries
        .into_iter()
        .map(|(k, v)| match values::unpack(v, version) {
            Ok(v) => Ok((k, v)),
            Err(why) => Err(Failure::new(
                "Neo.ClientError.Statement.TypeError",
                format!("parameter ${k}: {why}"),
            )),
        })
        .collect()
}

/// `fut`, unless the client resets or leaves, or `deadline` passes first.
async fn interruptible<T>(
    signals: &Signals,
    fut: impl std::future::Future<Output = T>,
    deadline: Option<Instant>,
) -> Result<T, Stop> {
    tokio::pin!(fut);
    let sleep = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep);
    loop {
        if signals.interrupted() {
            return Err(Stop::Interrupted);
        }
        tokio::select! {
            biased;
            _ = signals.notify.notified() => continue,
            _ = &mut sleep => return Err(Stop::TimedOut),
            v = &mut fut => return Ok(v),
        }
    }
}

type RowResult = Result<Option<Vec<Value>>, Result<Stop, crate::Error>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn proposals(ps: [[u8; 4]; 4]) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (i, p) in ps.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(p);
        }
        out
    }

    #[test]
    fn negotiation_takes_the_clients_first_proposal_served() {
        let v = |major, minor| Some(Version { major, minor });
        // Neo4j's Python driver 6: a manifest, 5.8 down to 5.0, 4.4 down to 4.2, 3.0.
        let driver6 = proposals([[0, 0, 1, 0xFF], [0, 8, 8, 5], [0, 2, 4, 4], [0, 0, 0, 3]]);
        assert_eq!(negotiate(&driver6), v(5, 4));
        let old = proposals([[0, 0, 4, 4], [0, 0, 3, 4], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&old), v(4, 4));
        let five_zero = proposals([[0, 0, 0, 5], [0; 4], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&five_zero), v(5, 0));
        let none = proposals([[0, 0, 0, 3], [0, 0, 3, 4], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&none), None);
    }
}
