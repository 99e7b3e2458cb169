"""Cold start: process start -> first publishDiagnostics for a kernel file, through the real server over stdio.

Each repetition starts a fresh `pallas-lsp serve` process, initializes it (the analysed interpreter is
.venvs/jax), opens the file and waits for its diagnostics; twice per tree: with a cache folder that an
earlier start filled (every start after the first on a machine) and with an empty one
(`PALLAS_LSP_CACHE_DIR`: the very first start). Each tree gets its own cache folder, filled by one
untimed start per file before the timed ones, so a run neither reads nor disturbs the user's cache.
The baselines, measured in the same run: a bare `python -c pass` of the same interpreter, and
`python -c "import pallas_lsp.lsp.server"` (what importing the server and its libraries costs).

    .venvs/dev/bin/python bench/cold_start.py [--runs 10] [--file PATH --root DIR]... [--compile]
        [--compare-source OTHER_CHECKOUT] [--no-first-start] [--debounce-ms 150] [--json OUT]

`--compile` byte-compiles the trees first (`compileall`, as pip does when it installs the wheel and
scripts/setup.sh does for the editable install); without it they run as they are (a tree never run
with bytecode writing on has no `__pycache__`, and every start compiles its modules again).
`--debounce-ms` is the server's setting (default 150, the server's own default: what an editor runs
with; runs of this bench before 2026-12-01 10:00 UTC used 0).
Default files: examples/kernels/pal001_global_buffer.py (a user project) and jax's
ops/gpu/collective_matmul_mgpu.py (workspace: the jax package).
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, REPO, LspClient, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402

TARGET_MS = 1200.0


def cold_start(path: Path, root: Path, python: str, source: str | None, cache: str,
               debounce_ms: int) -> tuple[float, float, int]:
    """Seconds from process start to the initialize answer and to the first diagnostics, and their count,
    for a server whose cache folder is `cache`."""
    client = LspClient(source=source, env={"PALLAS_LSP_CACHE_DIR": cache})
    try:
        client.initialize(str(root), python=python, debounce_ms=debounce_ms)
        initialized = time.perf_counter()
        uri, _ = client.open(path)
        arrived, diagnostics = client.wait_published(uri, 1)
        return initialized - client.started, arrived - client.started, len(diagnostics)
    finally:
        client.close()


def python_run(code: str, env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - started


class Series:
    """One tree's timings of one file: with the filled cache and with an empty one."""

    def __init__(self):
        self.filled: list[float] = []
        self.initialized: list[float] = []
        self.first: list[float] = []
        self.counts: set[int] = set()

    def run(self, path: Path, root: Path, python: str, source: str | None, cache: str, first_start: bool,
            debounce_ms: int) -> None:
        ready, seconds, count = cold_start(path, root, python, source, cache, debounce_ms)
        self.filled.append(seconds)
        self.initialized.append(ready)
        self.counts.add(count)
        if first_start:
            with tempfile.TemporaryDirectory(prefix="pallas-cold-empty-") as empty:
                _, seconds, count = cold_start(path, root, python, source, empty, debounce_ms)
            self.first.append(seconds)
            self.counts.add(count)

    def report(self, prefix: str = "") -> dict:
        report = {f"{prefix}cold_start_ms": summary(self.filled),
                  f"{prefix}initialize_answered_ms": summary(self.initialized)}
        if self.first:
            report[f"{prefix}first_start_ms"] = summary(self.first)
        return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--compare-source", help="also time another checkout, interleaved (before/after)")
    parser.add_argument("--compile", action="store_true", help="byte-compile the trees' server/ folders first")
    parser.add_argument("--no-first-start", action="store_true", help="skip the starts with an empty cache folder")
    parser.add_argument("--debounce-ms", type=int, default=150,
                        help="the server's debounceMs (default 150: the server's own default, which editors run with)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    if args.file:
        roots = args.root or [str(Path(f).parent) for f in args.file]
        targets = [(Path(f).resolve(), Path(r).resolve()) for f, r in zip(args.file, roots)]
    else:
        jax_dir = jax_package_dir(args.python)
        targets = [(REPO / "examples" / "kernels" / "pal001_global_buffer.py", REPO / "examples"),
                   (jax_dir / "experimental" / "pallas" / "ops" / "gpu" / "collective_matmul_mgpu.py", jax_dir)]
    trees = [args.source] + ([args.compare_source] if args.compare_source else [])
    if args.compile:
        for tree in trees:
            compileall.compile_dir(str(Path(tree or REPO) / "server"), quiet=1)
    first_start = not args.no_first_start
    with tempfile.TemporaryDirectory(prefix="pallas-cold-cache-") as caches:
        cache_of = {tree: os.path.join(caches, str(i)) for i, tree in enumerate(trees)}
        for tree in trees:  # the start that fills each tree's cache (the machine's first), untimed
            for path, root in targets:
                cold_start(path, root, args.python, tree, cache_of[tree], args.debounce_ms)
        series = {(tree, path): Series() for tree in trees for path, _ in targets}
        baseline, imports = [], []
        for _ in range(args.runs):  # interleaved, so load changes hit every series alike
            baseline.append(python_run("pass"))
            imports.append(python_run("import pallas_lsp.lsp.server", {**pallas_command("serve", args.source)[1],
                                                                   "PALLAS_LSP_CACHE_DIR": cache_of[args.source]}))
            for path, root in targets:
                for tree in trees:
                    series[tree, path].run(path, root, args.python, tree, cache_of[tree], first_start, args.debounce_ms)
    base = summary(baseline)
    results = []
    for path, root in targets:
        ours = series[args.source, path]
        stats = summary(ours.filled)
        result = {"file": str(path), "root": str(root), **ours.report(), "diagnostics": sorted(ours.counts),
                  "ratio_to_python_startup": stats["median"] / base["median"],
                  "target_ms": TARGET_MS, "target_met": stats["median"] <= TARGET_MS}
        if args.compare_source:
            other = series[args.compare_source, path]
            result.update({"compare_source": args.compare_source, **other.report("compare_source_"),
                           "compare_source_diagnostics": sorted(other.counts)})
        results.append(result)
    emit({"benchmark": "cold_start", "machine": machine(), "compiled": args.compile, "debounce_ms": args.debounce_ms,
          "python_startup_ms": base, "import_server_ms": summary(imports), "files": results}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
