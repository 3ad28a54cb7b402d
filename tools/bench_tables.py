#!/usr/bin/env python3
"""Regenerates the measured tables of a document from the commands above them.

    python3 tools/bench_tables.py docs/BENCHMARKS.md [FILTER ...]

A regenerated block in the document is a shell block followed by an output
block:

    ```sh
    cd benches/compare && cargo run --release -q -- kinds
    ```

    <!-- output -->
    ...whatever the commands printed...
    <!-- /output -->

Each shell block runs with bash (-e -o pipefail) from the repository's root,
and its standard output replaces what stands between the markers. With
FILTER arguments, only the blocks whose commands contain one of them run;
the others are kept as they are. Each block's wall time goes to standard
error. Run it on a machine with nothing else running: the figures are
timings.
"""
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"(```sh\n(?P<cmd>.*?)```\n\n<!-- output -->\n)(?P<out>.*?)(<!-- /output -->)",
    re.S,
)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = Path(sys.argv[1])
    filters = sys.argv[2:]
    text = path.read_text()

    def run(match):
        cmd = match.group("cmd")
        if filters and not any(f in cmd for f in filters):
            return match.group(0)
        start = time.monotonic()
        sys.stderr.write(f"running: {cmd.strip()}\n")
        out = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", cmd],
            cwd=ROOT,
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout
        sys.stderr.write(f"  {time.monotonic() - start:.0f} s\n")
        if not out.endswith("\n"):
            out += "\n"
        return match.group(1) + out + match.group(4)

    new = BLOCK.sub(run, text)
    path.write_text(new)


if __name__ == "__main__":
    main()
