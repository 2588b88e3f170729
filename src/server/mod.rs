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
//! - `metrics.rs`: query counts and latencies.

mod bolt;
mod http;
mod metrics;
pub mod packstream;
mod procedures;
mod status;
pub mod values;

use crate::error::{Error, Result};
use crate::session::Graph;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::net::TcpListener;

/// Who may connect.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Anyone (loopback binds only).
    None,
    /// Basic auth against these user names and passwords.
    Users(HashMap<String, String>),
}

impl Auth {
    /// Users from a file with one `name:password` per line (`#` starts a comment).
    pub fn from_file(path: &Path) -> Result<Auth> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        let mut users = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((user, password)) = line.split_once(':') else {
                return Err(Error::Other(format!(
                    "{}:{}: expected `name:password`",
                    path.display(),
                    n + 1
                )));
            };
            users.insert(user.to_string(), password.to_string());
        }
        if users.is_empty() {
            return Err(Error::Other(format!("{}: no users", path.display())));
        }
        Ok(Auth::Users(users))
    }

    /// Whether `user` / `password` may connect; with [`Auth::None`] anyone may.
    fn allows(&self, user: Option<&str>, password: Option<&str>) -> bool {
        match self {
            Auth::None => true,
            Auth::Users(users) => match (user, password) {
                (Some(u), Some(p)) => users
                    .get(u)
                    .is_some_and(|want| constant_time_eq(want.as_bytes(), p.as_bytes())),
                _ => false,
            },
        }
    }
}

/// Compares secrets in time that does not depend on where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

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
        }
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
    pub graph: Graph,
    pub options: ServerOptions,
    pub metrics: metrics::Metrics,
    pub connections: Arc<tokio::sync::Semaphore>,
    pub next_connection: std::sync::atomic::AtomicU64,
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
        let connections = Arc::new(tokio::sync::Semaphore::new(options.max_connections));
        Ok(Server {
            shared: Arc::new(Shared {
                graph,
                options,
                metrics: metrics::Metrics::default(),
                connections,
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
    /// queries cancelled).
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
        let Server {
            shared,
            bolt,
            http,
            tls,
        } = self;
        let bolt_loop = accept_loop(bolt, shared.clone(), tls.clone(), Protocol::Bolt);
        let http_loop = async {
            match http {
                Some(l) => accept_loop(l, shared.clone(), tls.clone(), Protocol::Http).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown => Ok(()),
            r = bolt_loop => r,
            r = http_loop => r,
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
        let socket = match listener.accept().await {
            Ok((s, _)) => s,
            // Out of file descriptors and the like: wait, then keep serving.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        while tasks.try_join_next().is_some() {}
        let _ = socket.set_nodelay(true);
        let local = socket.local_addr().ok();
        let permit = shared.connections.clone().try_acquire_owned().ok();
        let shared = shared.clone();
        let tls = tls.clone();
        tasks.spawn(async move {
            let io: Box<dyn IoBox> = match tls {
                Some(acceptor) => match acceptor.accept(socket).await {
                    Ok(s) => Box::new(s),
                    Err(_) => return,
                },
                None => Box::new(socket),
            };
            match protocol {
                Protocol::Bolt => bolt::serve(io, shared, permit, local).await,
                Protocol::Http => http::serve(io, shared, permit).await,
            }
        });
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
