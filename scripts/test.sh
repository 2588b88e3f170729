#!/usr/bin/env bash
# The project's test command (README): every crate's unit, integration, doc and TCK tests, with
# the `distributed` feature (the cluster tests run an in-process Ballista cluster). The demo
# command builds the same features, so the two share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --workspace --features distributed "$@"
