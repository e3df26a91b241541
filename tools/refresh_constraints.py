"""Rewrite constraints.txt from a pip resolution report (`make constraints`).

The report is `pip install --dry-run --ignore-installed --report FILE` of everything the
project's environments install: Kiln with its test extras (.venv: `make demo`, `make test`),
the peer tools of bench/requirements.txt (bench/.venv-peers) and pip itself. One resolution for
all of them, so that the pins agree where the environments share a package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HEADER = """\
# The exact versions of every Python package the project's environments install: .venv (`make
# setup`, `make demo`, `make test`: Kiln with its [test] extra) and bench/.venv-peers (the
# benchmark's peer tools, bench/requirements.txt). Every pip install of the Makefile and of
# bench/env.py uses it (-c). Refresh deliberately with `make constraints` (newest versions the
# registry serves, resolved together), then run `make test` and commit.
"""


def main(report: str, out: str) -> None:
    resolved = json.loads(Path(report).read_text())["install"]
    pins = sorted((item["metadata"]["name"], item["metadata"]["version"]) for item in resolved
                  if item["metadata"]["name"] != "kiln-mcu")
    lines = [f"{name}=={version}" for name, version in sorted(pins, key=lambda p: p[0].lower())]
    Path(out).write_text(HEADER + "\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} packages")


if __name__ == "__main__":
    main(*sys.argv[1:])
