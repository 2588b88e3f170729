#!/usr/bin/env bash
# The Python package on a free-threaded CPython (3.13t or later, built with --disable-gil):
#   scripts/test-python-free-threaded.sh /opt/py313t/bin/python3.13t
# Builds `lance_csr` for that interpreter (a version-specific wheel: abi3 does not cover
# free-threaded builds), checks that importing it leaves the GIL off, and runs the pytest
# suite except the tests that need packages with no free-threaded wheels yet (polars,
# duckdb, pylance, trustme). Not part of the test command: a stock machine has no such
# interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:?usage: $0 PATH-TO-FREE-THREADED-PYTHON}"
if [ "$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("Py_GIL_DISABLED") or 0)')" != 1 ]; then
  echo "$python is not a free-threaded build (Py_GIL_DISABLED is not set)" >&2
  exit 2
fi
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/python-venv-$(basename "$python")"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# Wheels only: the newest release of a package may have no free-threaded wheel yet, and
# building pyarrow from its sources is not what this script is for.
"$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
  "maturin>=1.5,<2" "pytest>=7" "pyarrow>=14" "pandas>=1.5" "neo4j>=5.26"
old_driver="$target/neo4j-4.4"
if [ ! -d "$old_driver/neo4j" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --target "$old_driver" "neo4j==4.4.13"
fi
cargo build --features distributed --bin lance-csr
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet)
"$venv/bin/python" -c '
import sys, warnings
warnings.simplefilter("error")  # CPython warns when an extension turns the GIL back on
import lance_csr
assert not sys._is_gil_enabled(), "importing lance_csr turned the GIL on"
print("lance_csr", lance_csr.__version__, "imported; the GIL stays off")
'
NEO4J_44_PATH="$old_driver" LANCE_CSR_BIN="$target/debug/lance-csr" "$venv/bin/python" -m pytest -q python/tests \
  --ignore python/tests/test_time_travel.py \
  -k "not test_every_case_agrees_with_the_cli and not test_arrow_polars_and_pandas \
      and not test_query_stream_yields_batches_and_arrow_readers_take_it \
      and not test_a_graph_from_lance_datasets_written_by_pylance and not test_tls"
