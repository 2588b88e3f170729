#!/usr/bin/env bash
# The cluster path's overhead: starts a Ballista scheduler and two executors as separate
# processes on localhost, then runs the bench suite in process and on the cluster (CSR mode)
# and prints both medians per query. Needs a build with the `distributed` feature:
#   cargo build --release --features distributed
#   benches/cluster.sh [path to lance-csr] [graph.toml] [runs]
# (default graph: /tmp/snb100, generated when missing). Logs stay in the printed folder.
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-${CARGO_TARGET_DIR:-target}/release/lance-csr}"
G="${2:-/tmp/snb100/graph.toml}"
RUNS="${3:-5}"
if [ ! -f "$G" ]; then
  "$B" generate --scale 100 --out "$(dirname "$G")"
fi
"$B" index build --graph "$G" > /dev/null
LOGS=$(mktemp -d)
echo "logs in $LOGS"
pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT
"$B" cluster scheduler --bind 127.0.0.1:50050 > "$LOGS/scheduler.log" 2>&1 &
pids+=($!)
sleep 1
"$B" cluster executor --scheduler 127.0.0.1:50050 --bind 127.0.0.1:50051 --slots 2 \
  > "$LOGS/executor1.log" 2>&1 &
pids+=($!)
"$B" cluster executor --scheduler 127.0.0.1:50050 --bind 127.0.0.1:50061 --slots 2 \
  > "$LOGS/executor2.log" 2>&1 &
pids+=($!)
sleep 3
common=(--graph "$G" --queries benches/queries --runs "$RUNS" --mode csr --format csv --timeout 120s)
"$B" bench "${common[@]}" > "$LOGS/local.csv"
"$B" bench "${common[@]}" --cluster df://127.0.0.1:50050 > "$LOGS/cluster.csv"
# Rows each query's stages shuffle (explain --analyze on the cluster).
for f in benches/queries/*.cypher; do
  n=$("$B" explain --analyze --graph "$G" --cluster df://127.0.0.1:50050 --file "$f" --timeout 120s |
      sed -n 's/.*rows shuffled between stages: \([0-9]*\).*/\1/p')
  echo "$(basename "$f" .cypher),${n:-?}"
done | sort > "$LOGS/shuffled.csv"
# query,mode,median_ms,min_ms,max_ms,rows
echo "| query | in process (ms) | cluster (ms) | overhead (ms) | rows | rows shuffled |"
echo "| --- | --- | --- | --- | --- | --- |"
join -t, <(tail -n +2 "$LOGS/local.csv" | cut -d, -f1,3,6 | sort) \
         <(tail -n +2 "$LOGS/cluster.csv" | cut -d, -f1,3,6 | sort) |
  join -t, - "$LOGS/shuffled.csv" |
  awk -F, '{ same = ($3 == $5) ? "" : " (differs: " $5 ")";
             printf "| %s | %.2f | %.2f | %.2f | %s%s | %s |\n", $1, $2, $4, $4 - $2, $3, same, $6 }'
