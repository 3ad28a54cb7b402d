"""The stubs match the module: every public name exists, and mypy --strict
accepts the package and a typical program against it (which also runs)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import compressed_bloom as cb

HERE = pathlib.Path(__file__).parent


def test_every_public_name_exists_and_has_a_docstring():
    for name in cb.__all__:
        obj = getattr(cb, name)
        assert obj.__doc__, name


def mypy(*args: str) -> None:
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", os.devnull, *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_accepts_the_package():
    mypy("-p", "compressed_bloom")


def test_mypy_strict_accepts_a_typical_program_which_runs():
    mypy(str(HERE / "typed_usage.py"))
    r = subprocess.run([sys.executable, str(HERE / "typed_usage.py")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
