#!/usr/bin/env bash
# The graph aggregation figures (release build): scale 10 in both modes, scale 100 on the CSR
# path, each also with the counting rules off (the engine without them), one run per table.
# Usage: benches/aggregation.sh [path to lance-csr] (graphs in /tmp/snb10 and /tmp/snb100).
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-${CARGO_TARGET_DIR:-target}/release/lance-csr}"
Q=$(mktemp -d)
cp benches/queries/09_*.cypher benches/queries/13_*.cypher benches/queries/2[0-9]_*.cypher benches/queries/3[0-9]_*.cypher "$Q"
for s in 10 100; do
  [ -f /tmp/snb$s/graph.toml ] || "$B" generate --scale $s --out /tmp/snb$s
  "$B" index build --graph /tmp/snb$s/graph.toml > /dev/null
done
off=(--disable factorize_counts --disable push_csr_target_filters --disable intersect_cycles)
echo "== scale 10: CSR (rules on) vs join"
"$B" bench --graph /tmp/snb10/graph.toml --queries "$Q" --runs 3 --timeout 60s
echo "== scale 10: CSR, counting rules off"
"$B" bench --graph /tmp/snb10/graph.toml --queries "$Q" --runs 3 --mode csr "${off[@]}" --timeout 60s
echo "== scale 100: CSR (rules on)"
"$B" bench --graph /tmp/snb100/graph.toml --queries "$Q" --runs 3 --mode csr --timeout 60s
echo "== scale 100: CSR, counting rules off"
"$B" bench --graph /tmp/snb100/graph.toml --queries "$Q" --runs 3 --mode csr "${off[@]}" --timeout 60s
