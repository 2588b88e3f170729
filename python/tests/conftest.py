import os
import pathlib

import pytest

import lance_csr

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sample_path(tmp_path_factory):
    """The documentation's sample graph written as Lance datasets, with its indexes."""
    out = tmp_path_factory.mktemp("sample") / "g"
    return lance_csr.generate(out, sample=True)


@pytest.fixture(scope="session")
def sample(sample_path):
    g = lance_csr.Graph.open(sample_path)
    yield g
    g.close()


@pytest.fixture(scope="session")
def social_path(tmp_path_factory):
    """A generated social network big enough for queries that run a while (scale 1)."""
    out = tmp_path_factory.mktemp("social") / "g"
    return lance_csr.generate(out, scale=1.0)


@pytest.fixture(scope="session")
def cli():
    """The lance-csr binary of the same build (the test command builds it first)."""
    given = os.environ.get("LANCE_CSR_BIN")
    if given:
        path = pathlib.Path(given)
    else:
        target = pathlib.Path(
            os.environ.get("CARGO_TARGET_DIR", ROOT / "target")
        )
        path = target / "debug" / "lance-csr"
    assert path.exists(), f"no lance-csr binary at {path}: build it or set LANCE_CSR_BIN"
    return path
