#!/usr/bin/env bash
# The project's test command (README): every crate's unit, integration, doc and TCK tests.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --workspace "$@"
