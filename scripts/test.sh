#!/usr/bin/env bash
# The project's test command (README): every crate's unit, integration, doc and TCK tests, with
# the `distributed` feature (the cluster tests run an in-process Ballista cluster), then the
# Python package's tests (scripts/test-python.sh). The demo command builds the same features,
# so the three share one build. Arguments go to `cargo test` (and skip the Python tests).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --features distributed "$@"
if [ $# -eq 0 ]; then
  ./scripts/test-python.sh
fi
