"""What exclusion globs cost: a folder walk with a real project's `.gitignore`, and one hostile pattern.

- walk: `Exclusions.walk` over a generated tree (FILES `*.py` files, 4 levels) under a `.gitignore`
  of the usual Python project (github/gitignore's Python.gitignore patterns); median seconds.
- hostile: `*a*a*a*a*a*a*a*a*a*a*a*a*b` against names of n letters `a` (no match), one process per
  length, stopped after LIMIT seconds; seconds per match.

`--source CHECKOUT` measures another checkout's `server/` (the tree before a change) too, in its own
processes (export one with `git archive REV server | tar -x -C DIR`).

    .venvs/dev/bin/python bench/glob_match.py [--files 20000] [--runs 5] [--limit 20] [--source CHECKOUT] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOSTILE = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
GITIGNORE = """\
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib/
lib64/
parts/
sdist/
var/
wheels/
share/python-wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
pip-delete-this-directory.txt
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
*.py,cover
.hypothesis/
.pytest_cache/
cover/
*.mo
*.pot
*.log
local_settings.py
db.sqlite3
db.sqlite3-journal
instance/
.webassets-cache
.scrapy
docs/_build/
.pybuilder/
target/
.ipynb_checkpoints
profile_default/
ipython_config.py
.pdm.toml
__pypackages__/
celerybeat-schedule
celerybeat.pid
*.sage.py
.env
.venv
env/
venv/
ENV/
env.bak/
venv.bak/
.spyderproject
.spyproject
.ropeproject
/site
.mypy_cache/
.dmypy.json
dmypy.json
.pyre/
.pytype/
cython_debug/
**/generated/**
"""

WALK = """
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
from pallas_lsp.analysis.exclusions import Exclusions
times, count = [], 0
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    count = sum(1 for _ in Exclusions.for_folder(sys.argv[2]).walk(sys.argv[2]))
    times.append(time.perf_counter() - started)
print(statistics.median(times), count)
"""

HOSTILE_MATCH = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pallas_lsp.analysis.exclusions import Rule
rule = Rule("/r", sys.argv[2])
started = time.perf_counter()
matched = rule.matches("/r/" + "a" * int(sys.argv[3]), False)
print(time.perf_counter() - started, matched)
"""


def make_tree(root: Path, files: int) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text(GITIGNORE)
    for index in range(files):
        folder = root / f"pkg{index % 10}" / f"sub{index // 10 % 10}" / f"mod{index // 100 % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module_{index}.py").write_text("")


def walk_seconds(server: str, root: Path, runs: int) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", WALK, server, str(root), str(runs)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def hostile_seconds(server: str, length: int, limit: float) -> float | None:
    """Seconds for one match, or None when it ran past `limit`."""
    try:
        out = subprocess.run([sys.executable, "-c", HOSTILE_MATCH, server, HOSTILE, str(length)],
                             capture_output=True, text=True, check=True, timeout=limit).stdout.split()
    except subprocess.TimeoutExpired:
        return None
    assert out[1] == "False"
    return float(out[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=float, default=20.0, help="seconds before a hostile match is given up")
    parser.add_argument("--lengths", type=int, nargs="+", default=[12, 16, 20, 24, 28, 60])
    parser.add_argument("--source")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    servers = {"now": str(REPO / "server")}
    if args.source:
        servers["before"] = str(Path(args.source) / "server")
    result: dict = {"files": args.files, "runs": args.runs, "limit_s": args.limit}
    with tempfile.TemporaryDirectory() as folder:
        make_tree(Path(folder), args.files)
        for name, server in servers.items():
            seconds, walked = walk_seconds(server, Path(folder), args.runs)
            result[f"{name}_walk_s"], result[f"{name}_walked"] = seconds, walked
    for name, server in servers.items():
        result[f"{name}_hostile_s"] = {}
        for length in args.lengths:
            seconds = hostile_seconds(server, length, args.limit)
            result[f"{name}_hostile_s"][length] = seconds
            if seconds is None:
                break  # longer names take longer still
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
