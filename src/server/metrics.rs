//! Counters for `GET /metrics` (Prometheus' text format): connections, queries and failures
//! per protocol, a latency histogram (from a query's arrival to its last row sent), and the
//! connections the server closed and the logins it refused, by reason.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::time::Duration;

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0,
];

#[derive(Default)]
pub struct Counters {
    queries: AtomicU64,
    failures: AtomicU64,
    /// Per bucket of [`BUCKETS`], then one past the last.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    micros: AtomicU64,
}

#[derive(Default)]
pub struct Metrics {
    pub bolt: Counters,
    pub http: Counters,
    pub connections_open: AtomicU64,
    pub connections_total: AtomicU64,
    pub connections_refused: AtomicU64,
    /// Connections closed by the server, by [`Closed`].
    closed: [AtomicU64; Closed::ALL.len()],
    /// Logins refused: a wrong name or password, and while locked.
    pub logins_wrong: AtomicU64,
    pub logins_locked: AtomicU64,
}

/// Why the server closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// Its slot went to a newcomer before it authenticated.
    Evicted,
    /// It did not finish its handshakes and authentication in time (HTTP: its headers).
    AuthTimeout,
    /// It left a result or transaction open without a word, or read nothing of what the
    /// server wrote, for the idle timeout.
    Idle,
    /// Its HTTP request body came slower than the minimum rate.
    SlowBody,
}

impl Closed {
    const ALL: [Closed; 4] = [
        Closed::Evicted,
        Closed::AuthTimeout,
        Closed::Idle,
        Closed::SlowBody,
    ];

    fn label(self) -> &'static str {
        match self {
            Closed::Evicted => "evicted",
            Closed::AuthTimeout => "auth_timeout",
            Closed::Idle => "idle",
            Closed::SlowBody => "slow_body",
        }
    }
}

impl Counters {
    /// A query that ran to its end (or failed) after `took`.
    pub fn record(&self, took: Duration, ok: bool) {
        self.queries.fetch_add(1, Relaxed);
        if !ok {
            self.failures.fetch_add(1, Relaxed);
        }
        let secs = took.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        self.buckets[i].fetch_add(1, Relaxed);
        self.micros.fetch_add(took.as_micros() as u64, Relaxed);
    }

    fn write(&self, out: &mut String, protocol: &str) {
        use std::fmt::Write;
        let l = format!("protocol=\"{protocol}\"");
        let _ = writeln!(
            out,
            "lance_csr_queries_total{{{l}}} {}",
            self.queries.load(Relaxed)
        );
        let _ = writeln!(
            out,
            "lance_csr_query_failures_total{{{l}}} {}",
            self.failures.load(Relaxed)
        );
        let mut cumulative = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            cumulative += b.load(Relaxed);
            let le = BUCKETS.get(i).map_or("+Inf".to_string(), |x| x.to_string());
            let _ = writeln!(
                out,
                "lance_csr_query_duration_seconds_bucket{{{l},le=\"{le}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "lance_csr_query_duration_seconds_sum{{{l}}} {}",
            self.micros.load(Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            out,
            "lance_csr_query_duration_seconds_count{{{l}}} {cumulative}"
        );
    }
}

impl Metrics {
    /// A connection opened: counted open until [`Metrics::ended`].
    pub fn opened(&self) {
        self.connections_total.fetch_add(1, SeqCst);
        self.connections_open.fetch_add(1, SeqCst);
    }

    pub fn ended(&self) {
        self.connections_open.fetch_sub(1, SeqCst);
    }

    pub fn closed(&self, why: Closed) {
        self.closed[why as usize].fetch_add(1, Relaxed);
    }

    /// Everything in Prometheus' text exposition format, with the bytes of what clients sent
    /// that the server holds (`message_bytes`).
    pub fn render(&self, message_bytes: usize) -> String {
        let mut out = String::new();
        out.push_str("# TYPE lance_csr_queries_total counter\n");
        out.push_str("# TYPE lance_csr_query_failures_total counter\n");
        out.push_str("# TYPE lance_csr_query_duration_seconds histogram\n");
        self.bolt.write(&mut out, "bolt");
        self.http.write(&mut out, "http");
        out.push_str("# TYPE lance_csr_connections_open gauge\n");
        out.push_str(&format!(
            "lance_csr_connections_open {}\n",
            self.connections_open.load(Relaxed)
        ));
        out.push_str("# TYPE lance_csr_connections_total counter\n");
        out.push_str(&format!(
            "lance_csr_connections_total {}\n",
            self.connections_total.load(Relaxed)
        ));
        out.push_str("# TYPE lance_csr_connections_refused_total counter\n");
        out.push_str(&format!(
            "lance_csr_connections_refused_total {}\n",
            self.connections_refused.load(Relaxed)
        ));
        out.push_str("# TYPE lance_csr_connections_closed_total counter\n");
        for why in Closed::ALL {
            out.push_str(&format!(
                "lance_csr_connections_closed_total{{reason=\"{}\"}} {}\n",
                why.label(),
                self.closed[why as usize].load(Relaxed)
            ));
        }
        out.push_str("# TYPE lance_csr_logins_refused_total counter\n");
        for (reason, n) in [
            ("wrong", &self.logins_wrong),
            ("locked", &self.logins_locked),
        ] {
            out.push_str(&format!(
                "lance_csr_logins_refused_total{{reason=\"{reason}\"}} {}\n",
                n.load(Relaxed)
            ));
        }
        out.push_str("# TYPE lance_csr_message_bytes gauge\n");
        out.push_str(&format!("lance_csr_message_bytes {message_bytes}\n"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_cumulative_and_closings_are_counted_by_reason() {
        let m = Metrics::default();
        m.bolt.record(Duration::from_micros(50), true);
        m.bolt.record(Duration::from_millis(3), false);
        m.bolt.record(Duration::from_secs(60), true);
        m.closed(Closed::Idle);
        let text = m.render(12);
        for line in [
            "lance_csr_queries_total{protocol=\"bolt\"} 3",
            "lance_csr_query_failures_total{protocol=\"bolt\"} 1",
            "lance_csr_query_duration_seconds_bucket{protocol=\"bolt\",le=\"0.0001\"} 1",
            "lance_csr_query_duration_seconds_bucket{protocol=\"bolt\",le=\"0.005\"} 2",
            "lance_csr_query_duration_seconds_bucket{protocol=\"bolt\",le=\"30\"} 2",
            "lance_csr_query_duration_seconds_bucket{protocol=\"bolt\",le=\"+Inf\"} 3",
            "lance_csr_queries_total{protocol=\"http\"} 0",
            "lance_csr_connections_closed_total{reason=\"idle\"} 1",
            "lance_csr_connections_closed_total{reason=\"evicted\"} 0",
            "lance_csr_logins_refused_total{reason=\"locked\"} 0",
            "lance_csr_message_bytes 12",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
    }
}
