//! The `lance-csr` command line: demo, query, explain, shell, import, generate.

/// `print!` to standard output; a reader that went away (`| head -1`) ends the program
/// quietly instead of a panic.
macro_rules! out {
    ($($a:tt)*) => { $crate::cli::emit(&format!($($a)*)) };
}

/// `println!`, the same way.
macro_rules! outln {
    ($($a:tt)*) => { $crate::cli::emit(&(format!($($a)*) + "\n")) };
}

pub mod bench;
pub mod parse;
mod shell;
pub mod verify;

/// Writes `s` to standard output. A closed pipe exits with success (the reader has what it
/// wanted); any other write error exits with an error.
pub fn emit(s: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(s.as_bytes()).and_then(|_| o.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing the output: {e}");
        std::process::exit(1);
    }
}

use clap::{Args, Parser, Subcommand};
use lance_csr::Params;
use lance_csr::{import, NodeSpec, RelSpec};
use lance_csr::{render, Format};
use lance_csr::{Error, Result};
use lance_csr::{Graph, GraphOptions, Mode};
use parse::{parse_bytes, parse_duration, parse_params};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "lance-csr",
    version,
    about = "Cypher (a read-only subset) over Lance datasets, on DataFusion"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct QueryArgs {
    /// The graph.toml describing the graph (or the folder holding it).
    #[arg(long, short)]
    pub graph: PathBuf,
    /// A query parameter as NAME=VALUE, VALUE a Cypher literal (`id=42`, `name="'Ann'"`, `xs=[1,2]`).
    #[arg(long = "param", short = 'p')]
    pub params: Vec<String>,
    /// Read the query from this file.
    #[arg(long, short)]
    pub file: Option<PathBuf>,
    /// The query text; read from --file or standard input when absent.
    pub query: Option<String>,
    /// `csr` (hops on CSR indexes, our rules on) or `join` (hops as joins, our rules off).
    #[arg(long, default_value = "csr")]
    pub mode: Mode,
    /// Switch an optimizer rule or rewrite off (repeatable).
    #[arg(long = "disable", value_name = "RULE", value_parser = parse::rule())]
    pub disable: Vec<lance_csr::Rule>,
    /// Run on the Ballista cluster whose scheduler is at this address (`df://host:port`;
    /// build with `--features distributed`).
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
    #[command(flatten)]
    pub limits: Limits,
}

/// Resource limits, the plan cache and the state of the data of a query command.
#[derive(Args, Debug, Clone, Default)]
pub struct Limits {
    /// Read the graph as it was: a dataset version number (`3`), a tag (`release-1`), or a
    /// time (`2026-12-01T10:00:00Z`, `2026-12-01`: each dataset's latest version committed
    /// then).
    #[arg(long, value_name = "VERSION|TAG|TIME")]
    pub as_of: Option<lance_csr::AsOf>,
    /// Plan every query anew instead of reusing cached plans (for comparison).
    #[arg(long)]
    pub no_cache: bool,
    /// Stop a query that runs longer than this (`30s`, `500ms`, `2m`; a bare number is
    /// seconds) with a "limit exceeded" error.
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Most memory a query's sorts, aggregations, joins and traversals may hold (`512MB`,
    /// `2GB`); past it they spill to disk where they can, else the query fails naming the limit.
    #[arg(long, value_parser = parse_bytes)]
    pub memory_limit: Option<usize>,
}

impl Limits {
    fn apply(&self, options: GraphOptions) -> GraphOptions {
        options
            .with_timeout(self.timeout)
            .with_memory_limit(self.memory_limit)
            .with_plan_cache(!self.no_cache)
            .with_as_of(self.as_of.clone())
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build the sample graph in a temporary folder and run example queries on it.
    Demo,
    /// Run a query and print its result.
    Query {
        #[command(flatten)]
        args: QueryArgs,
        /// Output format.
        #[arg(long, default_value = "table")]
        format: Format,
    },
    /// Show the logical and physical plans of a query.
    Explain {
        #[command(flatten)]
        args: QueryArgs,
        /// Also run the query and show each operator's metrics (rows, edges scanned, ...).
        #[arg(long)]
        analyze: bool,
    },
    /// Interactive shell (end a query with `;`; `:help` lists commands).
    Shell {
        #[arg(long, short)]
        graph: PathBuf,
        #[command(flatten)]
        limits: Limits,
    },
    /// Tag every dataset of a graph at its current version, so that `--as-of TAG` reads the
    /// graph as it is now.
    Tag {
        #[arg(long, short)]
        graph: PathBuf,
        /// The tag (not a number, which `--as-of` reads as a version).
        name: String,
    },
    /// Build or inspect the CSR indexes of a graph.
    Index {
        #[command(subcommand)]
        action: IndexAction,
    },
    /// Run a suite of .cypher files in both modes and report medians and the join/CSR ratio.
    Bench {
        #[arg(long, short)]
        graph: PathBuf,
        /// Folder of .cypher files (one query each).
        #[arg(long)]
        queries: PathBuf,
        /// Timed runs per query and mode (after one warm-up run).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        #[arg(long = "param", short = 'p')]
        params: Vec<String>,
        /// table, or csv (`query,mode,median_ms,min_ms,max_ms,rows`).
        #[arg(long, default_value = "table")]
        format: Format,
        /// Run only this mode (default: both).
        #[arg(long)]
        mode: Option<Mode>,
        /// Switch an optimizer rule or rewrite off (repeatable).
        #[arg(long = "disable", value_name = "RULE", value_parser = parse::rule())]
        disable: Vec<lance_csr::Rule>,
        /// Also report where each query's time goes: medians of parse, bind + lower,
        /// optimize, physical planning, plan cache lookup and execution.
        #[arg(long)]
        phases: bool,
        /// Parameter bindings, one per line after a header of parameter names (`id` then
        /// `1007`, `1042`, ...); the runs take them in turn. Fields are Cypher literals
        /// (`42`, `'Ann'`) or else strings. A query's own `NAME.csv` beside `NAME.cypher` comes
        /// first.
        #[arg(long = "params", value_name = "FILE.csv")]
        params_file: Option<PathBuf>,
        /// Run each query from this many concurrent workers sharing one graph, for
        /// --duration, and report queries/s and p50/p99 latency instead of medians.
        #[arg(long)]
        concurrency: Option<usize>,
        /// How long a --concurrency run lasts (`10s`, `500ms`, `1m`).
        #[arg(long, value_parser = parse_duration, default_value = "10s")]
        duration: std::time::Duration,
        /// With --concurrency: the workers share one prepared query (as threads sharing a
        /// Python `PreparedQuery` do) instead of each call using the plan cache.
        #[arg(long, requires = "concurrency")]
        prepared: bool,
        /// Run on the Ballista cluster whose scheduler is at this address (`df://host:port`).
        #[arg(long, value_name = "URL")]
        cluster: Option<String>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Ballista cluster processes with the graph operators (build with `--features
    /// distributed`); queries run on them with `query --cluster df://HOST:PORT`.
    Cluster {
        #[command(subcommand)]
        process: ClusterProcess,
    },
    /// Serve the graph over Neo4j's Bolt protocol (drivers, cypher-shell) and, with `--http`,
    /// an HTTP endpoint in the shape of Neo4j's Query API; Ctrl-C stops it.
    Serve {
        #[arg(long, short)]
        graph: PathBuf,
        /// Where Bolt listens (port 0: any free port; the address is printed).
        #[arg(long, default_value = "127.0.0.1:7687")]
        bolt: std::net::SocketAddr,
        /// Where the HTTP endpoint listens (`POST /db/neo4j/query/v2`, `GET /metrics`).
        #[arg(long)]
        http: Option<std::net::SocketAddr>,
        /// Users who may connect: a file with one `name:password` per line.
        #[arg(long, conflicts_with = "no_auth", required_unless_present = "no_auth")]
        users: Option<PathBuf>,
        /// Anyone may connect (loopback addresses only).
        #[arg(long)]
        no_auth: bool,
        /// Most connections served at once; more are refused.
        #[arg(long, default_value_t = 256)]
        max_connections: usize,
        /// TLS certificate chain (PEM), with --tls-key.
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// TLS private key (PEM), with --tls-cert.
        #[arg(long, requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        /// Serve a non-loopback address without TLS.
        #[arg(long)]
        allow_insecure: bool,
        /// The database name clients address.
        #[arg(long, default_value = "neo4j")]
        database: String,
        /// Longest a connection may take through its TLS and Bolt handshakes and its
        /// authentication (HTTP: a request's headers); then it is closed.
        #[arg(long, value_parser = parse_duration, default_value = "30s")]
        auth_timeout: std::time::Duration,
        /// Longest a client may leave a result or a transaction open without a message, or
        /// leave what the server writes unread; then the connection is closed and its query
        /// stopped.
        #[arg(long, value_parser = parse_duration, default_value = "60s")]
        idle_timeout: std::time::Duration,
        /// The slowest an HTTP request body or a Bolt message may arrive, in bytes a second,
        /// once the authentication timeout has passed from its first byte (`64KB`, `1MB`).
        #[arg(long, value_parser = parse_bytes, default_value = "64KB")]
        min_body_rate: usize,
        /// How often the datasets are checked for new versions: queries answer from the
        /// latest state within this time of a write (indexes of changed tables are rebuilt
        /// beside the state being read).
        #[arg(long, value_parser = parse_duration, default_value = "1s")]
        refresh_interval: std::time::Duration,
        /// Answer from the datasets as they were when the server started (until a writer
        /// removes files of that state: then from their latest).
        #[arg(long, conflicts_with = "refresh_interval")]
        no_refresh: bool,
        #[command(flatten)]
        limits: Limits,
    },
    /// A users-file line for `serve --users`: NAME:HASH, the password (read from stdin, one
    /// line) hashed with argon2id. With --users FILE, the user's line in FILE is replaced or
    /// added (the file created readable by its owner only).
    Passwd {
        /// The user's name.
        name: String,
        /// The users file to update.
        #[arg(long)]
        users: Option<PathBuf>,
    },
    /// Turn CSV or Parquet files into Lance datasets plus a graph.toml.
    Import {
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
        /// A node file: LABEL[,LABEL..][:IDCOL]=FILE (id column defaults to a neo4j-admin header's `:ID` field, else `id`; the first label names the table, the others are labels its nodes carry too; `=FILE` alone where a `:LABEL` column or --node-label-column gives each row's labels).
        #[arg(long = "node")]
        nodes: Vec<String>,
        /// A relationship file: TYPE[:FROM:TO[:SRCCOL:DSTCOL]]=FILE (columns default to a neo4j-admin header's `:START_ID` / `:END_ID` fields, else `src`, `dst`; FROM and TO may be left out where the header names ID spaces, `:START_ID(Person)`; TYPE too, `=FILE`, where a `:TYPE` column gives each row's). An end whose label several node tables carry is split by the table holding each row's key.
        #[arg(long = "rel")]
        rels: Vec<String>,
        /// The field delimiter of every CSV file: one character (`\t` or TAB for a tab).
        #[arg(long, default_value = ",", value_parser = parse_delimiter)]
        delimiter: u8,
        /// The delimiter of the values of an array field (`tags:string[]`) and of the labels of a `:LABEL` field.
        #[arg(long, default_value = ";", value_parser = parse_array_delimiter)]
        array_delimiter: char,
        /// A column of the node files holding each row's label: a file that has it becomes one table per label (the labels of its --node added to each), the column dropped.
        #[arg(long, value_name = "COLUMN")]
        node_label_column: Option<String>,
        /// Skip building the CSR indexes.
        #[arg(long)]
        no_index: bool,
        /// Replace a non-empty output folder (as a whole, once the import succeeded).
        #[arg(long)]
        overwrite: bool,
    },
    /// Generate an LDBC-SNB-like social network (scale N = N x 1,000 persons).
    Generate {
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Skip building the CSR indexes.
        #[arg(long)]
        no_index: bool,
        /// Everything the LDBC SNB Interactive read queries use (organisations, STUDY_AT,
        /// WORK_AT, message locations, emails, languages, image posts; see benches/ldbc-snb).
        #[arg(long)]
        ldbc: bool,
        /// Add an `embedding` property of DIM floats (a Lance vector column) to persons and
        /// posts: deterministic, clustered, for `vector.similarity.*` and `vector_distance`.
        #[arg(long, value_name = "DIM", value_parser = clap::value_parser!(u16).range(1..=4096))]
        embeddings: Option<u16>,
    },
    /// Run random queries over the graph's schema with every rule on and all off; print each
    /// query whose results differ (with both results). Exits 1 if any differ.
    Verify {
        #[arg(long, short)]
        graph: PathBuf,
        /// How many queries.
        #[arg(long, default_value_t = 500)]
        random: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Which queries to generate.
        #[arg(long, value_enum, default_value_t = crate::cli::verify::Shapes::All)]
        shapes: crate::cli::verify::Shapes,
        /// The time limit of each query in each mode; a query past it is listed, not
        /// compared.
        #[arg(long, value_parser = parse_duration, default_value = "60s")]
        timeout: std::time::Duration,
    },
}

#[derive(Subcommand, Debug)]
pub enum ClusterProcess {
    /// Run a scheduler: it receives the plans, splits them into stages and hands out tasks.
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// Run an executor: it runs tasks, opening the graphs their plans name (every executor
    /// must be able to read the graph's files at the same path).
    Executor {
        /// The scheduler's address (`host:port`).
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// Address to listen on (its port for data, the next port for the scheduler).
        #[arg(long, default_value = "127.0.0.1:50051")]
        bind: std::net::SocketAddr,
        /// Tasks run at once.
        #[arg(long, default_value_t = 2)]
        slots: usize,
    },
}

#[derive(Subcommand, Debug)]
pub enum IndexAction {
    /// Build (or bring up to date) every index of the graph, with progress: the CSR
    /// indexes, and the vector and full-text indexes graph.toml declares (`[[indexes]]`).
    Build {
        #[arg(long, short)]
        graph: PathBuf,
        /// Rebuild every index, also those whose files look up to date.
        #[arg(long)]
        force: bool,
    },
    /// Show whether each index (CSR, vector, full-text) exists and is up to date.
    Status {
        #[arg(long, short)]
        graph: PathBuf,
    },
}

/// Runs the CLI; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match execute(cli).await {
        Ok(()) => 0,
        Err(CliError::Failed) => 1,
        Err(CliError::Query(query, e)) => {
            eprintln!("{}", e.render(&query));
            1
        }
        Err(CliError::Plain(e)) => {
            eprintln!("error: {e}");
            1
        }
    }
}

enum CliError {
    /// An error in a query, shown with the query line and a caret.
    Query(String, Error),
    Plain(Error),
    /// The command ran and reported a failure itself (`verify` found mismatches).
    Failed,
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Plain(e)
    }
}

/// `--delimiter`: one ASCII character, `\t` or TAB for a tab.
fn parse_delimiter(s: &str) -> std::result::Result<u8, String> {
    let c = match s {
        "\\t" | "TAB" | "tab" => '\t',
        _ => one_char(s)?,
    };
    match c.is_ascii() && !matches!(c, '"' | '\n' | '\r') {
        true => Ok(c as u8),
        false => Err(format!(
            "`{s}` can't delimit fields (one ASCII character other than a quote or a line break)"
        )),
    }
}

/// `--array-delimiter`: one character.
fn parse_array_delimiter(s: &str) -> std::result::Result<char, String> {
    one_char(s)
}

fn one_char(s: &str) -> std::result::Result<char, String> {
    let mut cs = s.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(format!("`{s}` is not one character")),
    }
}

fn read_query(args: &QueryArgs) -> Result<String> {
    match (&args.query, &args.file) {
        (Some(q), None) => Ok(q.clone()),
        (None, Some(f)) => std::fs::read_to_string(f).map_err(|e| Error::io("read", f, e)),
        (Some(_), Some(_)) => Err(Error::Other(
            "give the query either as an argument or with --file, not both".into(),
        )),
        (None, None) => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s)?;
            if s.trim().is_empty() {
                return Err(Error::Other(
                    "no query given (argument, --file or stdin)".into(),
                ));
            }
            Ok(s)
        }
    }
}

async fn execute(cli: Cli) -> std::result::Result<(), CliError> {
    match cli.command {
        Command::Demo => demo().await?,
        Command::Query { args, format } => {
            let query = read_query(&args)?;
            let params = parse_params(&args.params)?;
            let graph = open_args(&args).await?;
            let failed = |e| CliError::Query(query.clone(), e);
            let stream = graph.query_stream(&query, &params).await.map_err(failed)?;
            print_stream(stream, format).await.map_err(failed)?;
        }
        Command::Explain { args, analyze } => {
            let query = read_query(&args)?;
            let params = parse_params(&args.params)?;
            let graph = open_args(&args).await?;
            let text = if analyze {
                graph.explain_analyze(&query, &params).await
            } else {
                graph.explain(&query, &params).await
            }
            .map_err(|e| CliError::Query(query.clone(), e))?;
            outln!("{text}");
        }
        Command::Cluster { process } => cluster(process).await?,
        Command::Serve {
            graph,
            bolt,
            http,
            users,
            no_auth,
            max_connections,
            tls_cert,
            tls_key,
            allow_insecure,
            database,
            auth_timeout,
            idle_timeout,
            min_body_rate,
            refresh_interval,
            no_refresh,
            limits,
        } => {
            use lance_csr::server::{Auth, Server, ServerOptions, TlsFiles};
            let auth = match (users, no_auth) {
                (Some(f), _) => Auth::from_file(&f)?,
                (None, _) => Auth::None,
            };
            let tls = tls_cert
                .zip(tls_key)
                .map(|(cert, key)| TlsFiles { cert, key });
            let scheme = if tls.is_some() { "bolt+s" } else { "bolt" };
            let options = ServerOptions::new(bolt, auth)
                .with_http(http)
                .with_max_connections(max_connections)
                .with_tls(tls)
                .with_allow_insecure(allow_insecure)
                .with_database(database)
                .with_auth_timeout(auth_timeout)
                .with_idle_timeout(idle_timeout)
                .with_min_body_rate(min_body_rate)
                .with_refresh_interval((!no_refresh).then_some(refresh_interval));
            // A server's queries share one memory pool; without --memory-limit it is half of
            // what the process may have (its control group's and resource limits included),
            // so no query can take the memory every client needs.
            let mut limits = limits;
            let default_limit = limits.memory_limit.is_none();
            if default_limit {
                limits.memory_limit = lance_csr::available_memory().map(|b| b / 2);
            }
            let g = Graph::open_with(&graph, limits.apply(GraphOptions::default())).await?;
            let server = Server::bind(g, options).await?;
            outln!("lance-csr serving {}", graph.display());
            if let (true, Some(b)) = (default_limit, limits.memory_limit) {
                outln!(
                    "  memory limit: {} (half the memory this process may have; --memory-limit)",
                    lance_csr::human_bytes(b)
                );
            }
            outln!("  bolt: {scheme}://{}", server.bolt_addr());
            let web = if scheme == "bolt" { "http" } else { "https" };
            if let Some(a) = server.http_addr() {
                outln!("  http: {web}://{a}/db/{{name}}/query/v2, {web}://{a}/metrics");
            }
            use std::io::Write;
            let _ = std::io::stdout().flush();
            server
                .run(async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await?;
        }
        Command::Passwd { name, users } => passwd(&name, users.as_deref())?,
        Command::Shell { graph, limits } => {
            let g = Graph::open_with(&graph, limits.apply(GraphOptions::default())).await?;
            shell::run(&lance_csr::LiveGraph::new(g)).await?;
        }
        Command::Index { action } => match action {
            IndexAction::Build { graph, force } => {
                let t0 = Instant::now();
                if force {
                    lance_csr::remove_index_files(&graph)?;
                }
                let r =
                    Graph::build_indexes_with(&graph, force, &mut |l| eprintln!("  {l}")).await?;
                outln!(
                    "{} indexes built, {} read (already up to date), {} edges indexed in {:.2}s{}, {:.1} MB of CSR (mapped from its files where written)",
                    r.built,
                    r.read,
                    r.edges_indexed,
                    t0.elapsed().as_secs_f64(),
                    if r.build_seconds > 0.0 {
                        format!(" ({:.1}M edges/s CSR build)", r.edges_indexed as f64 / r.build_seconds / 1e6)
                    } else {
                        String::new()
                    },
                    r.csr_bytes as f64 / 1e6
                );
            }
            IndexAction::Status { graph } => {
                for l in lance_csr::index_status(&graph).await? {
                    outln!("{l}");
                }
            }
        },
        Command::Tag { graph, name } => {
            for (dataset, version) in lance_csr::tag_graph(&graph, &name).await? {
                outln!("tagged {dataset} at version {version} as {name:?}");
            }
        }
        Command::Bench {
            graph,
            queries,
            runs,
            params,
            format,
            mode,
            disable,
            phases,
            params_file,
            concurrency,
            duration,
            prepared,
            cluster,
            limits,
        } => {
            let params = parse_params(&params)?;
            // Each binding from the file, with the --param values added.
            let bindings = match &params_file {
                None => vec![params.clone()],
                Some(f) => crate::cli::bench::read_bindings(f)?
                    .into_iter()
                    .map(|mut b| {
                        b.extend(params.clone());
                        b
                    })
                    .collect(),
            };
            if concurrency == Some(0) {
                return Err(Error::Other("--concurrency must be at least 1".into()).into());
            }
            let mut rules = lance_csr::RuleSwitches::default();
            for r in &disable {
                rules.switch_off(*r);
            }
            let options = limits.apply(GraphOptions::default().with_rules(rules));
            let run = crate::cli::bench::Run {
                runs,
                bindings: &bindings,
                load: concurrency.map(|workers| crate::cli::bench::Load {
                    workers,
                    duration,
                    prepared,
                }),
                format,
                only: mode,
                options,
                phases,
                cluster,
            };
            crate::cli::bench::run(&graph, &queries, &run).await?;
        }
        Command::Import {
            out,
            nodes,
            rels,
            delimiter,
            array_delimiter,
            node_label_column,
            no_index,
            overwrite,
        } => {
            if array_delimiter == delimiter as char {
                return Err(Error::Other(format!(
                    "--array-delimiter `{array_delimiter}` is the field delimiter too"
                ))
                .into());
            }
            let nodes = nodes
                .iter()
                .map(|s| {
                    NodeSpec::parse(s).map(|n| {
                        n.with_csv(delimiter, array_delimiter)
                            .with_label_column(node_label_column.clone())
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let rels = rels
                .iter()
                .map(|s| RelSpec::parse(s).map(|r| r.with_csv(delimiter, array_delimiter)))
                .collect::<Result<Vec<_>>>()?;
            if nodes.is_empty() {
                return Err(Error::Other("import needs at least one --node".into()).into());
            }
            let path = import(&out, &nodes, &rels, overwrite, !no_index, &mut |l| {
                eprintln!("{l}")
            })
            .await?;
            // Check that the result opens.
            open_mode(&path, if no_index { Mode::Join } else { Mode::Csr }).await?;
            outln!("{}", path.display());
        }
        Command::Generate {
            scale,
            out,
            seed,
            no_index,
            ldbc,
            embeddings,
        } => generate(scale, &out, seed, !no_index, (ldbc, embeddings)).await?,
        Command::Verify {
            graph,
            random,
            seed,
            shapes,
            timeout,
        } => {
            let g = open_mode(&graph, Mode::Csr).await?;
            let g = g
                .with_options(g.options().clone().with_timeout(timeout))
                .await?;
            let watch = crate::cli::verify::Watch::start(random);
            let report =
                crate::cli::verify::run(&g, random, seed, shapes, &mut |p| watch.see(p)).await?;
            out!("{}", report.render());
            if !report.mismatches.is_empty() {
                return Err(CliError::Failed);
            }
        }
    }
    Ok(())
}

/// Prints a result as its batches come (the table format a page of rows at a time).
pub async fn print_stream(mut stream: lance_csr::ResultStream, format: Format) -> Result<()> {
    let mut w = lance_csr::RowWriter::new(format, &stream.columns);
    out!("{}", w.header());
    while let Some(b) = stream.next_batch().await? {
        out!("{}", w.batch(&b));
    }
    out!("{}", w.finish());
    Ok(())
}

/// The graph of a one-shot query command, in its mode and with its rules switched off; its
/// index files are read only as the query's plan needs them.
/// `graph` on the cluster at `url`, when given.
pub async fn on_cluster(graph: Graph, url: Option<&str>) -> Result<Graph> {
    match url {
        None => Ok(graph),
        #[cfg(feature = "distributed")]
        Some(url) => graph.with_cluster(url).await,
        #[cfg(not(feature = "distributed"))]
        Some(_) => Err(no_cluster()),
    }
}

#[cfg(not(feature = "distributed"))]
fn no_cluster() -> Error {
    Error::Other(
        "this lance-csr was built without cluster support: build it with `cargo build \
         --release --features distributed`"
            .into(),
    )
}

async fn cluster(process: ClusterProcess) -> Result<()> {
    #[cfg(feature = "distributed")]
    {
        // Ballista's warnings (an executor lost, a task failed) on standard error.
        let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
            .try_init();
        let failed = |e: datafusion::error::DataFusionError| Error::Other(e.to_string());
        match process {
            ClusterProcess::Scheduler { bind } => {
                eprintln!("lance-csr scheduler listening on {bind}");
                lance_csr::cluster::run_scheduler(bind)
                    .await
                    .map_err(failed)
            }
            ClusterProcess::Executor {
                scheduler,
                bind,
                slots,
            } => {
                eprintln!("lance-csr executor on {bind}, {slots} slots, scheduler {scheduler}");
                lance_csr::cluster::run_executor(&scheduler, bind, slots)
                    .await
                    .map_err(failed)
            }
        }
    }
    #[cfg(not(feature = "distributed"))]
    {
        let _ = process;
        Err(no_cluster())
    }
}

async fn open_args(args: &QueryArgs) -> Result<Graph> {
    let graph = open_local(args).await?;
    on_cluster(graph, args.cluster.as_deref()).await
}

async fn open_local(args: &QueryArgs) -> Result<Graph> {
    let mut rules = lance_csr::RuleSwitches::default();
    for r in &args.disable {
        rules.switch_off(*r);
    }
    Graph::open_with(
        &args.graph,
        args.limits.apply(
            GraphOptions::default()
                .with_mode(args.mode)
                .with_rules(rules)
                .with_deferred_indexes(true),
        ),
    )
    .await
}

async fn open_mode(path: &Path, mode: Mode) -> Result<Graph> {
    Graph::open_with(path, GraphOptions::default().with_mode(mode)).await
}

async fn generate(
    scale: f64,
    out: &Path,
    seed: u64,
    index: bool,
    (ldbc, embeddings): (bool, Option<u16>),
) -> Result<()> {
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(Error::Other(format!(
            "--scale must be positive, got {scale}"
        )));
    }
    let t0 = Instant::now();
    eprintln!(
        "generating scale {scale} ({} persons), seed {seed}",
        (scale * 1000.0).round()
    );
    let mut progress =
        |l: &str| eprintln!("  [{:>6.1}s] generated {l}", t0.elapsed().as_secs_f64());
    let mut tables = if ldbc {
        lance_csr_datasets::social::generate_ldbc(scale, seed, &mut progress)
    } else {
        lance_csr_datasets::social::generate(scale, seed, &mut progress)
    };
    if let Some(dim) = embeddings {
        lance_csr_datasets::social::with_embeddings(&mut tables, dim.into(), seed);
        progress(&format!("embeddings of {dim} dimensions"));
    }
    let edges: usize = tables
        .iter()
        .filter(|t| matches!(t.kind, lance_csr_datasets::TableKind::Rel { .. }))
        .map(|t| t.batch.num_rows())
        .sum();
    let path = lance_csr::write_graph(out, tables, &mut |l| {
        eprintln!("  [{:>6.1}s] {l}", t0.elapsed().as_secs_f64())
    })
    .await?;
    if index {
        let r = Graph::build_indexes(&path, &mut |l| {
            eprintln!("  [{:>6.1}s] {l}", t0.elapsed().as_secs_f64())
        })
        .await?;
        if r.build_seconds > 0.0 {
            eprintln!(
                "  CSR build: {} edges in {:.2}s ({:.1}M edges/s), {:.1} MB ({:.1} bytes/edge, both directions)",
                r.edges_indexed,
                r.build_seconds,
                r.edges_indexed as f64 / r.build_seconds / 1e6,
                r.csr_bytes as f64 / 1e6,
                r.csr_bytes as f64 / r.edges_indexed.max(1) as f64
            );
        }
    }
    eprintln!(
        "done in {:.1}s: {edges} relationships; graph config at {}",
        t0.elapsed().as_secs_f64(),
        path.display()
    );
    outln!("{}", path.display());
    Ok(())
}

pub const DEMO_QUERIES: &[(&str, &str)] = &[
    (
        "Who does Ann know?",
        "MATCH (a:Person {firstName: 'Ann'})-[:KNOWS]->(f:Person) RETURN f.firstName AS friend, f.age AS age ORDER BY friend",
    ),
    (
        "Friends of friends of Ann, not Ann herself",
        "MATCH (a:Person {id: 1})-[:KNOWS]->(:Person)-[:KNOWS]->(fof:Person) WHERE fof.id <> a.id RETURN DISTINCT fof.firstName AS name ORDER BY name",
    ),
    (
        "Members per forum",
        "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) RETURN f.title AS forum, count(*) AS members, collect(p.firstName) AS who ORDER BY members DESC",
    ),
    (
        "Who is known by nobody? (OPTIONAL MATCH)",
        "MATCH (p:Person) OPTIONAL MATCH (p)<-[:KNOWS]-(x:Person) WITH p, count(x) AS fans WHERE fans = 0 RETURN p.firstName AS name",
    ),
    (
        "Posts with their likes and the city of their author",
        "MATCH (post:Post)-[:HAS_CREATOR]->(author:Person)-[:IS_LOCATED_IN]->(c:City) OPTIONAL MATCH (post)<-[:LIKES]-(fan:Person) RETURN post.content AS post, author.firstName AS author, c.name AS city, count(fan) AS likes ORDER BY likes DESC, post",
    ),
    (
        "Every message Ann likes: posts and comments carry the label Message (one branch per table)",
        "MATCH (a:Person {firstName: 'Ann'})-[:LIKES]->(m:Message) RETURN labels(m) AS kind, m.content AS content ORDER BY content",
    ),
    (
        "What a comment replies to, within three hops (REPLY_OF has two tables)",
        "MATCH (c:Comment {id: 201})-[r:REPLY_OF*1..3]->(x) RETURN labels(x) AS kind, x.id AS id, size(r) AS hops ORDER BY hops",
    ),
];

/// `passwd`: the password from stdin (one line), hashed; the users-file line printed, or
/// put in `users` in place of the user's old one.
fn passwd(name: &str, users: Option<&Path>) -> Result<()> {
    if name.is_empty() || name.contains([':', '\n']) || name.starts_with('#') {
        return Err(Error::Other(format!(
            "a user name cannot be empty, contain `:` or start with `#`: `{name}`"
        )));
    }
    let mut password = String::new();
    std::io::stdin()
        .read_line(&mut password)
        .map_err(|e| Error::io("read", "stdin", e))?;
    let password = password.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err(Error::Other("no password on stdin".into()));
    }
    let line = format!("{name}:{}", lance_csr::server::hash_password(password)?);
    let Some(path) = users else {
        outln!("{line}");
        return Ok(());
    };
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let mut lines: Vec<&str> = old
        .lines()
        .filter(|l| l.trim().split_once(':').map(|(u, _)| u) != Some(name))
        .collect();
    lines.push(&line);
    let text = lines.join("\n") + "\n";
    // Written beside it readable by its owner only, then moved over it.
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))
        .map_err(|e| Error::io("write beside", path, e))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .map_err(|e| Error::io("write", path, e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("write", path, e.error))?;
    eprintln!("{name}: password set in {}", path.display());
    Ok(())
}

async fn demo() -> Result<()> {
    // A fresh folder of its own (private, never a fixed name that another user or a planted
    // link could own), kept for the next steps printed at the end.
    let mut folder = tempfile::Builder::new();
    folder.prefix("lance-csr-sample-");
    #[cfg(unix)]
    folder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let dir = folder.tempdir()?.keep();
    outln!(
        "lance-csr demo: writing the sample social network as Lance datasets to {}",
        dir.display()
    );
    let path =
        lance_csr::write_graph(&dir, lance_csr_datasets::sample::tables(), &mut |_| {}).await?;
    let graph = Graph::open(&path).await?;
    let schema = graph.schema();
    outln!(
        "graph: {} labels ({}), {} relationship tables\n",
        schema.labels.len(),
        schema.labels.keys().cloned().collect::<Vec<_>>().join(", "),
        schema.relationships.len()
    );
    for (title, q) in DEMO_QUERIES {
        outln!("-- {title}\n{q}");
        let t = Instant::now();
        match graph.query(q, &Params::new()).await {
            Ok(r) => out!("{}", render(&r, Format::Table)),
            Err(e) => outln!("{}", e.render(q)),
        }
        outln!("({:.1} ms)\n", t.elapsed().as_secs_f64() * 1e3);
    }
    let bad = "MATCH (p:Persn) RETURN p.name";
    outln!("-- Errors point at the culprit:\n{bad}");
    if let Err(e) = graph.query(bad, &Params::new()).await {
        outln!("{}\n", e.render(bad));
    }
    let kept = path;
    outln!("What to try next:");
    outln!("  the sample graph stays at {}", kept.display());
    outln!("  lance-csr query --graph {} \"MATCH (p:Person) RETURN p.firstName, p.age ORDER BY p.age\"", kept.display());
    outln!("  lance-csr explain --graph {} \"MATCH (p:Person {{id: 1}})-[:KNOWS]->(f) RETURN f.firstName\"", kept.display());
    outln!("  lance-csr shell --graph {}", kept.display());
    outln!("  lance-csr generate --scale 1 --out /tmp/snb   (1,000 persons, about 25k KNOWS)");
    Ok(())
}
