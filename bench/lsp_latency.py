"""Warm re-analysis latency: didChange -> publishDiagnostics for that version, through the real server over stdio.

The server runs with `debounceMs: 0`, so the time is analysis plus the pipe, not the debounce delay.
Each file is opened (the first analysis is reported separately), edited a few times to warm up, then
edited `--edits` times: every edit rewrites a number on one line inside a kernel body (the line holding
the file's middle `get_global`), so each version is a new text and is fully re-analysed.

    .venvs/dev/bin/python bench/lsp_latency.py [--edits 30] [--warmup 3] [--file PATH --root DIR]... [--json OUT]

Default files: jax's ops/gpu/collective_matmul_mgpu.py (workspace: the jax package) and the generated
20k-line module (workspace: its folder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_file  # noqa: E402
from lsp_client import JAX_PYTHON, LspClient, emit, jax_package_dir, machine, summary  # noqa: E402

TARGETS = {"collective_matmul_mgpu.py": 50.0, "big_kernels.py": 300.0}  # p95 targets, ms


def edit_line(text: str) -> tuple[int, str]:
    """The line to edit: the middle `get_global(` of the file, else the middle `def` body; and its indentation."""
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if "get_global(" in line and not line.lstrip().startswith("#")]
    if not candidates:
        candidates = [i + 1 for i, line in enumerate(lines) if line.lstrip().startswith("def ") and line.rstrip().endswith(":")]
    line = candidates[len(candidates) // 2]
    indent = lines[line][: len(lines[line]) - len(lines[line].lstrip())]
    return line, indent


def measure_file(path: Path, root: Path, edits: int, warmup: int, python: str, server: dict) -> dict:
    text = path.read_text(encoding="utf-8")
    line, indent = edit_line(text)
    with LspClient(**server) as client:
        client.initialize(str(root), python=python, debounce_ms=0)
        uri, sent = client.open(path, text)
        arrived, diagnostics = client.wait_published(uri, 1)
        first = arrived - sent
        # Insert `<indent>_bench_edit = 0` above the chosen line, then keep rewriting its number.
        prefix = indent + "_bench_edit = "
        client.change(uri, 2, line, 0, 0, prefix + "0\n")
        client.wait_published(uri, 2)
        value, samples, counts = "0", [], set()
        for step in range(warmup + edits):
            version = step + 3
            new = str(version)
            sent = client.change(uri, version, line, len(prefix), len(prefix) + len(value), new)
            arrived, diagnostics = client.wait_published(uri, version)
            value = new
            counts.add(len(diagnostics))
            if step >= warmup:
                samples.append(arrived - sent)
    return {"file": str(path), "root": str(root), "lines": len(text.splitlines()), "edited_line": line + 1,
            "first_analysis_ms": first * 1000, "diagnostics": sorted(counts),
            "edit_ms": summary(samples), "target_p95_ms": TARGETS.get(path.name)}


def default_targets() -> list[tuple[Path, Path]]:
    jax_dir = jax_package_dir(JAX_PYTHON)
    big, _ = make_big_file.write()
    return [(jax_dir / "experimental" / "pallas" / "ops" / "gpu" / "collective_matmul_mgpu.py", jax_dir),
            (big, big.parent)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--file", action="append", default=[], help="file to edit (default: the two targets)")
    parser.add_argument("--root", action="append", default=[], help="workspace folder for each --file")
    parser.add_argument("--python", default=JAX_PYTHON, help="the analysed project's interpreter")
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    server = {"source": args.source}
    if args.file:
        roots = args.root or [str(Path(f).parent) for f in args.file]
        targets = [(Path(f).resolve(), Path(r).resolve()) for f, r in zip(args.file, roots)]
    else:
        targets = default_targets()
    results = [measure_file(f, r, args.edits, args.warmup, args.python, server) for f, r in targets]
    for result in results:
        target = result["target_p95_ms"]
        result["target_met"] = None if target is None else result["edit_ms"]["p95"] <= target
    emit({"benchmark": "lsp_latency", "machine": machine(), "files": results},
         args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
