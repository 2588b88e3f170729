//! The server (`lance-csr serve`): Neo4j's Bolt protocol for drivers and shells, and an HTTP
//! endpoint in the shape of Neo4j's Query API for tools that cannot speak Bolt, over one open
//! [`Graph`]. Read-only, so every connection reads the graph concurrently, without locks.
//!
//! - `packstream.rs`: Bolt's value format;
//! - `values.rs`: engine values as Bolt values (graph and temporal structures) and back;
//! - `bolt.rs`: a Bolt connection (handshake, framing, the message state machine, streaming
//!   results in the sizes PULL asks for);
//! - `status.rs`: engine errors as Neo4j status codes;
//! - `procedures.rs`: the few catalog procedures drivers and tools call (`db.labels()`, ...);
//! - `http.rs`: the Query API (`POST /db/{name}/query/v2`) and `GET /metrics`;
//! - `metrics.rs`: query counts and latencies;
//! - `admission.rs`: connection slots, of which unauthenticated connections hold a quarter;
//! - `auth.rs`: the users file, password hashes, failed logins locked out;
//! - `running.rs`: a query run on the query runtime, its batches handed to the connection.
//!
//! Accepting and serving connections runs on a runtime of its own (one thread); queries run
//! on the runtime that called [`Server::run`]. A query that computes for minutes without
//! yielding then holds query threads, never the acceptor, and every phase of a connection
//! has a deadline: a stalled or hostile client holds its slot for a bounded time.

mod admission;
mod auth;
mod bolt;
mod http;
mod json;
mod messages;
mod metrics;
pub mod packstream;
mod procedures;
mod running;
mod status;
pub mod values;

pub use auth::{hash_password, Auth, Password};

use crate::error::{Error, Result};
use crate::session::{Graph, LiveGraph};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// A certificate chain and private key, PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// How the server listens and whom it serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Where Bolt listens (port 0: any free port).
    pub bolt: SocketAddr,
    /// Where the HTTP endpoint listens, if anywhere.
    pub http: Option<SocketAddr>,
    pub auth: Auth,
    /// Most connections (Bolt and HTTP) served at once; more are refused.
    pub max_connections: usize,
    pub tls: Option<TlsFiles>,
    /// Serve without TLS on an address other than loopback.
    pub allow_insecure: bool,
    /// The database name clients address (`neo4j`, drivers' default).
    pub database: String,
    /// The largest request message accepted; a larger one fails, the connection stays.
    pub max_message_bytes: usize,
    /// Longest a connection may take from its first byte through its TLS handshake, Bolt's
    /// handshake and its authentication (HTTP: a request's headers).
    pub auth_timeout: Duration,
    /// Longest a connection may leave a result or a transaction open without sending a
    /// message, or leave what the server writes unread; then it is closed (its query stopped,
    /// its memory freed).
    pub idle_timeout: Duration,
    /// The slowest a request body or a Bolt message may arrive (bytes a second) once
    /// `auth_timeout` has passed: one sent a byte at a time does not hold its connection (or
    /// the room its bytes take).
    pub min_body_rate: usize,
    /// How often the datasets are checked for new versions (appends, deletes, compactions);
    /// `None`: the graph stays as it was opened.
    pub refresh_interval: Option<Duration>,
}

impl ServerOptions {
    pub fn new(bolt: SocketAddr, auth: Auth) -> Self {
        Self {
            bolt,
            http: None,
            auth,
            max_connections: 256,
            tls: None,
            allow_insecure: false,
            database: "neo4j".into(),
            max_message_bytes: 16 << 20,
            auth_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            min_body_rate: 64 << 10,
            refresh_interval: Some(Duration::from_secs(1)),
        }
    }

    pub fn with_refresh_interval(mut self, every: Option<Duration>) -> Self {
        self.refresh_interval = every;
        self
    }

    pub fn with_auth_timeout(mut self, t: Duration) -> Self {
        self.auth_timeout = t;
        self
    }

    pub fn with_idle_timeout(mut self, t: Duration) -> Self {
        self.idle_timeout = t;
        self
    }

    pub fn with_min_body_rate(mut self, bytes_per_second: usize) -> Self {
        self.min_body_rate = bytes_per_second.max(1);
        self
    }

    pub fn with_http(mut self, addr: Option<SocketAddr>) -> Self {
        self.http = addr;
        self
    }

    pub fn with_max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    pub fn with_tls(mut self, tls: Option<TlsFiles>) -> Self {
        self.tls = tls;
        self
    }

    pub fn with_allow_insecure(mut self, yes: bool) -> Self {
        self.allow_insecure = yes;
        self
    }

    pub fn with_database(mut self, name: impl Into<String>) -> Self {
        self.database = name.into();
        self
    }

    pub fn with_max_message_bytes(mut self, n: usize) -> Self {
        self.max_message_bytes = n;
        self
    }
}

/// What every connection shares.
pub(crate) struct Shared {
    pub graph: Arc<LiveGraph>,
    /// With the addresses bound (port 0 resolved).
    pub options: ServerOptions,
    pub metrics: metrics::Metrics,
    pub admission: Arc<admission::Admission>,
    pub lockout: auth::Lockout,
    /// Password hashes checked at once.
    pub hash_checks: Arc<tokio::sync::Semaphore>,
    /// Where queries run.
    pub queries: tokio::runtime::Handle,
    /// The memory of what clients sent (messages, bodies, parameters), within the limit.
    pub messages: messages::Messages,
    pub next_connection: std::sync::atomic::AtomicU64,
}

impl Shared {
    /// Checks a login, counting failures; off the protocol's thread where a hash is to be
    /// checked (milliseconds of CPU each).
    async fn login(
        self: &Arc<Self>,
        peer: Option<std::net::IpAddr>,
        user: Option<String>,
        password: Option<String>,
    ) -> auth::Login {
        let shared = self.clone();
        let check = move || {
            let auth = &shared.options.auth;
            shared
                .lockout
                .login(auth, peer, user.as_deref(), password.as_deref())
        };
        if !self.options.auth.hashed() {
            return check();
        }
        // As many checks at once as there are cores: a flood of logins queues here (each
        // connection's deadline still applies) rather than taking every thread.
        let Ok(permit) = self.hash_checks.clone().acquire_owned().await else {
            return auth::Login::Refused;
        };
        self.queries
            .spawn_blocking(move || {
                let _permit = permit;
                check()
            })
            .await
            .unwrap_or(auth::Login::Refused)
    }
}

/// A bound server: its addresses are known (port 0 resolved); [`Server::run`] serves.
pub struct Server {
    shared: Arc<Shared>,
    bolt: TcpListener,
    http: Option<TcpListener>,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

impl Server {
    /// Checks the options and binds the listeners.
    pub async fn bind(graph: Graph, options: ServerOptions) -> Result<Server> {
        let addrs = std::iter::once(options.bolt).chain(options.http);
        for addr in addrs {
            let loopback = addr.ip().is_loopback();
            if matches!(options.auth, Auth::None) && !loopback {
                return Err(Error::Other(format!(
                    "--no-auth serves loopback addresses only, not {addr}: give --users FILE"
                )));
            }
            if !loopback && options.tls.is_none() && !options.allow_insecure {
                return Err(Error::Other(format!(
                    "{addr} is not a loopback address: give --tls-cert and --tls-key, or \
                     --allow-insecure to serve it unencrypted"
                )));
            }
        }
        let tls = options.tls.as_ref().map(tls_acceptor).transpose()?;
        let listen = |addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|e| Error::io("listen on", addr.to_string(), e))
        };
        let bolt = listen(options.bolt).await?;
        let http = match options.http {
            Some(a) => Some(listen(a).await?),
            None => None,
        };
        let mut options = options;
        options.bolt = bolt.local_addr().unwrap_or(options.bolt);
        options.http = http.as_ref().and_then(|l| l.local_addr().ok());
        let messages = messages::Messages::new(graph.options().memory_limit);
        let graph = LiveGraph::new(graph);
        if let Some(every) = options.refresh_interval {
            // Writers append, delete and compact while the server runs: it answers from the
            // latest state within `every` (and at once for a query whose state is gone).
            graph.follow(every, |r| match r {
                Ok(built) => eprintln!("graph refreshed to its datasets' latest versions ({built} index structures rebuilt)"),
                Err(e) => eprintln!("cannot refresh the graph (queries read the state before; trying again): {e}"),
            });
        }
        Ok(Server {
            shared: Arc::new(Shared {
                graph,
                admission: Arc::new(admission::Admission::new(options.max_connections)),
                options,
                metrics: metrics::Metrics::default(),
                lockout: auth::Lockout::default(),
                hash_checks: Arc::new(tokio::sync::Semaphore::new(cores())),
                queries: tokio::runtime::Handle::current(),
                messages,
                next_connection: Default::default(),
            }),
            bolt,
            http,
            tls,
        })
    }

    /// The address Bolt listens on.
    pub fn bolt_addr(&self) -> SocketAddr {
        self.bolt.local_addr().expect("a bound listener")
    }

    /// The address the HTTP endpoint listens on.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http
            .as_ref()
            .map(|l| l.local_addr().expect("a bound listener"))
    }

    /// Serves until `shutdown` completes; connections still open are then dropped (their
    /// queries cancelled). Queries run on the runtime [`Server::bind`] was called on,
    /// connections on one of their own.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
        let Server {
            shared,
            bolt,
            http,
            tls,
        } = self;
        let io = Io::start()?;
        // Moved to the protocol's runtime: its own reactor sees new connections, whatever
        // the query runtime's threads are doing.
        let into_std = |l: TcpListener| {
            l.into_std()
                .map_err(|e| Error::io("listen on", "the server's address", e))
        };
        let bolt = into_std(bolt)?;
        let http = http.map(into_std).transpose()?;
        let serve = |listener: std::net::TcpListener, protocol| {
            let (shared, tls) = (shared.clone(), tls.clone());
            io.runtime().spawn(async move {
                let listener = TcpListener::from_std(listener)
                    .map_err(|e| Error::io("listen on", "the server's address", e))?;
                accept_loop(listener, shared, tls, protocol).await
            })
        };
        let bolt_loop = serve(bolt, Protocol::Bolt);
        let http_loop = http.map(|l| serve(l, Protocol::Http));
        let http_loop = async {
            match http_loop {
                Some(h) => h.await,
                None => std::future::pending().await,
            }
        };
        let ended = |r: std::result::Result<Result<()>, tokio::task::JoinError>| {
            r.unwrap_or_else(|e| Err(Error::Other(format!("the server stopped: {e}"))))
        };
        tokio::select! {
            _ = shutdown => Ok(()),
            r = bolt_loop => ended(r),
            r = http_loop => ended(r),
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The protocol's runtime; dropped, its tasks (every connection) are dropped with it.
struct Io(Option<tokio::runtime::Runtime>);

impl Io {
    fn start() -> Result<Io> {
        // Threads of their own, as many as the cores (the OS shares the cores between them
        // and the queries' threads): encoding results and decoding messages run here.
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores())
            .thread_name("lance-csr-serve")
            .enable_all()
            .build()
            .map(|rt| Io(Some(rt)))
            .map_err(|e| Error::Other(format!("cannot start the server's runtime: {e}")))
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().expect("a running runtime")
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        // Dropped from async code: a blocking shutdown would panic there.
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

#[derive(Clone, Copy)]
enum Protocol {
    Bolt,
    Http,
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    protocol: Protocol,
) -> Result<()> {
    // Connections run as tasks of their own; dropping the set (at shutdown) aborts them.
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(s) => s,
            // Out of file descriptors and the like: wait, then keep serving.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        while tasks.try_join_next().is_some() {}
        let _ = socket.set_nodelay(true);
        let id = shared
            .next_connection
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        let conn = Conn {
            id,
            local: socket.local_addr().ok(),
            peer: Some(peer.ip()),
            slot: shared.admission.admit(id),
            deadline: tokio::time::Instant::now() + shared.options.auth_timeout,
        };
        let shared = shared.clone();
        let tls = tls.clone();
        tasks.spawn(async move {
            // Counted from its first byte to its close, whatever its protocol and phase.
            let _open = Counted::new(&shared);
            let socket = WriteDeadline::new(socket, shared.clone());
            let io: Box<dyn IoBox> = match tls {
                Some(acceptor) => {
                    let handshake = tokio::time::timeout_at(conn.deadline, acceptor.accept(socket));
                    let stream = tokio::select! {
                        s = handshake => s,
                        _ = conn.evicted() => {
                            return shared.metrics.closed(metrics::Closed::Evicted)
                        }
                    };
                    match stream {
                        Ok(Ok(s)) => Box::new(s),
                        Err(_) => return shared.metrics.closed(metrics::Closed::AuthTimeout),
                        Ok(Err(_)) => return,
                    }
                }
                None => Box::new(socket),
            };
            match protocol {
                Protocol::Bolt => bolt::serve(io, shared, conn).await,
                Protocol::Http => http::serve(io, shared, conn).await,
            }
        });
    }
}

/// A connection counted open while this lives.
struct Counted(Arc<Shared>);

impl Counted {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.metrics.opened();
        Counted(shared.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.metrics.ended();
    }
}

/// What a connection knows of itself when it starts.
pub(crate) struct Conn {
    pub id: u64,
    pub local: Option<SocketAddr>,
    pub peer: Option<std::net::IpAddr>,
    /// `None`: past the connection limit, to be refused.
    pub slot: Option<admission::Admitted>,
    /// When it must have authenticated.
    pub deadline: tokio::time::Instant,
}

impl Conn {
    /// Completes when its slot is taken back for a newer connection (never for one refused).
    pub async fn evicted(&self) {
        match &self.slot {
            Some(s) => s.evicted().await,
            None => std::future::pending().await,
        }
    }
}

/// A socket whose writes fail once the client has read nothing for `limit`: a client that
/// asks for a large result and never reads it does not hold its connection (nor the query
/// behind it) forever.
struct WriteDeadline<T> {
    inner: T,
    /// Its idle timeout, and where the closing is counted.
    shared: Arc<Shared>,
    /// Since the first write the client did not take.
    stalled: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    /// The deadline passed: every write fails.
    given_up: bool,
}

impl<T> WriteDeadline<T> {
    fn new(inner: T, shared: Arc<Shared>) -> Self {
        Self {
            inner,
            shared,
            stalled: None,
            given_up: false,
        }
    }

    /// `Pending` from the socket: pending still, or an error once stalled for the idle
    /// timeout.
    fn stall<R>(&mut self, cx: &mut std::task::Context<'_>) -> Poll<std::io::Result<R>> {
        let limit = self.shared.options.idle_timeout;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                if !std::mem::replace(&mut self.given_up, true) {
                    self.shared.metrics.closed(metrics::Closed::Idle);
                }
                Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the client read nothing for the idle timeout",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

use std::future::Future;
use std::task::Poll;

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteDeadline<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match std::pin::Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.stall(cx),
            done => {
                self.stalled = None;
                done
            }
        }
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        match std::pin::Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.stall(cx),
            done => {
                self.stalled = None;
                done
            }
        }
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A connection's byte stream behind a box: plain or TLS sockets alike.
pub(crate) trait IoBox: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> IoBox for T {}

fn tls_acceptor(files: &TlsFiles) -> Result<tokio_rustls::TlsAcceptor> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    // The cause kept as the error's source.
    let bad = |what: &'static str, path: &Path, e: Box<dyn std::error::Error + Send + Sync>| {
        Error::io(what, path, std::io::Error::other(e))
    };
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| bad("read the certificates in", &files.cert, e.into()))?;
    if certs.is_empty() {
        return Err(Error::Other(format!(
            "no certificate in {}",
            files.cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| bad("read the private key in", &files.key, e.into()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| bad("use the certificate", &files.cert, e.into()))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
