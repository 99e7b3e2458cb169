"""Cold start: process start -> first publishDiagnostics for a kernel file, through the real server over stdio.

Each repetition starts a fresh `pallas-lsp serve` process, initializes it (the analysed interpreter is
.venvs/jax, so jedi's environment starts too), opens the file and waits for its diagnostics. The
baselines, measured in the same run: a bare `python -c pass` of the same interpreter, and
`python -c "import pallas_lsp.server"` (what importing the server and its libraries costs).

    .venvs/dev/bin/python bench/cold_start.py [--runs 10] [--file PATH --root DIR]... [--json OUT]

Default files: examples/kernels/bad_global_buffer.py (a user project) and jax's
ops/gpu/collective_matmul_mgpu.py (workspace: the jax package).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, REPO, LspClient, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402

TARGET_MS = 1500.0


def cold_start(path: Path, root: Path, python: str, server: dict) -> tuple[float, float, int]:
    """Seconds from process start to the initialize answer and to the first diagnostics, and their count."""
    client = LspClient(**server)
    try:
        client.initialize(str(root), python=python, debounce_ms=0)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--compare-source", help="also time another checkout, interleaved (before/after)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    server = {"source": args.source}
    if args.file:
        roots = args.root or [str(Path(f).parent) for f in args.file]
        targets = [(Path(f).resolve(), Path(r).resolve()) for f, r in zip(args.file, roots)]
    else:
        jax_dir = jax_package_dir(args.python)
        targets = [(REPO / "examples" / "kernels" / "bad_global_buffer.py", REPO / "examples"),
                   (jax_dir / "experimental" / "pallas" / "ops" / "gpu" / "collective_matmul_mgpu.py", jax_dir)]
    results = []
    baseline, imports = [], []
    samples: dict[Path, list[float]] = {path: [] for path, _ in targets}
    initialized: dict[Path, list[float]] = {path: [] for path, _ in targets}
    counts: dict[Path, set] = {path: set() for path, _ in targets}
    compared: dict[Path, list[float]] = {path: [] for path, _ in targets}
    other = {"source": args.compare_source}
    for _ in range(args.runs):  # interleaved, so load changes hit every series alike
        baseline.append(python_run("pass"))
        imports.append(python_run("import pallas_lsp.server", pallas_command("serve", args.source)[1]))
        for path, root in targets:
            ready, seconds, count = cold_start(path, root, args.python, server)
            samples[path].append(seconds)
            initialized[path].append(ready)
            counts[path].add(count)
            if args.compare_source:
                compared[path].append(cold_start(path, root, args.python, other)[1])
    base = summary(baseline)
    for path, root in targets:
        stats = summary(samples[path])
        results.append({"file": str(path), "root": str(root), "cold_start_ms": stats,
                        "initialize_answered_ms": summary(initialized[path]), "diagnostics": sorted(counts[path]),
                        "ratio_to_python_startup": stats["median"] / base["median"],
                        "target_ms": TARGET_MS, "target_met": stats["median"] <= TARGET_MS})
        if args.compare_source:
            results[-1]["compare_source"] = args.compare_source
            results[-1]["compare_source_cold_start_ms"] = summary(compared[path])
    emit({"benchmark": "cold_start", "machine": machine(),
          "python_startup_ms": base, "import_server_ms": summary(imports), "files": results}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
