"""Shared fixtures: the repository's golden vectors and the cbloom CLI.

The tests run against the installed package (bindings/python/test.sh
installs it into a fresh virtual environment), never the source tree.
"""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import settings

# Fixed examples, no database written into the tree: a failure reproduces
# from its printed example, and every run tries the same inputs.
settings.register_profile("repo", derandomize=True, database=None, deadline=None)
settings.load_profile("repo")

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTORS = REPO / "tests" / "vectors"


def keys(first: int, last: int) -> list[bytes]:
    """key-FIRST .. key-LAST, as the golden vectors' keys are named."""
    return [b"key-%d" % i for i in range(first, last + 1)]


def table(name: str) -> list[list[str]]:
    """The rows of a golden list (tests/vectors/NAME), comments left out."""
    rows = []
    for line in (VECTORS / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split())
    return rows


def vector(name: str) -> bytes:
    return (VECTORS / name).read_bytes()


@pytest.fixture(scope="session")
def cbloom() -> str:
    """The cbloom CLI that test.sh built (its path in $CBLOOM). A run without
    it fails here rather than skipping the tests that need it."""
    path = os.environ.get("CBLOOM")
    assert path, "set CBLOOM to the cbloom binary (bindings/python/test.sh does)"
    assert os.access(path, os.X_OK), f"CBLOOM={path} is not an executable"
    return path
