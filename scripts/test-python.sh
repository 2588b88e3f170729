#!/usr/bin/env bash
# The Python package's tests: builds `lance_csr` into a virtual environment kept in the target
# folder (dev profile and the `distributed` feature, as the Rust tests: the build reuses theirs)
# and runs its pytest suite, which compares against the `lance-csr` binary of the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/python-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  "maturin>=1.5,<2" "pytest>=7" "pyarrow>=14" "polars>=0.20" "pandas>=1.5" "pylance>=0.20" "duckdb>=1.1" \
  "neo4j>=5.26" "trustme>=1.1"
# A second Bolt client for the server's tests: the neo4j driver's 4.4 line, kept apart (it has
# the same module name as the current driver).
old_driver="$target/neo4j-4.4"
if [ ! -d "$old_driver/neo4j" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --target "$old_driver" "neo4j==4.4.13"
fi
cargo build --features distributed --bin lance-csr
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet)
NEO4J_44_PATH="$old_driver" LANCE_CSR_BIN="$target/debug/lance-csr" "$venv/bin/python" -m pytest -q python/tests
