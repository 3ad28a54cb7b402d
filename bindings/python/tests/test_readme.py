"""The README's Python example runs and prints what the README shows."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_the_readme_example_prints_what_the_readme_says():
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"prints\n\n```text\n(.*?)```", section, re.S).group(1)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == shown
