"""A kernel file among ~6,000 unrelated modules, against the same file alone: first diagnostics and `check`.

The tree comes from bench/make_big_workspace.py (`example.py` + vendored copies of installed
modules). The same kernel file alone is a copy in a folder of its own (with a pyproject.toml too).
Each repetition, interleaved, in fresh processes:

- the server: process start -> initialize (root: the tree's folder) -> didOpen example.py -> first
  publishDiagnostics, in the big workspace and alone;
- `pallas-lsp check example.py` in the big workspace and alone.

Cache states: each repetition first runs with an empty cache folder (`PALLAS_LSP_CACHE_DIR`, as the
very first run on a machine), then with the cache that run left (every later run).

    .venvs/dev/bin/python bench/big_workspace.py [--runs 5] [--files 6000] [--out DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_workspace  # noqa: E402
from lsp_client import JAX_PYTHON, LspClient, emit, machine, pallas_command, summary  # noqa: E402


def first_diagnostics(kernel: Path, root: Path, python: str) -> tuple[float, int]:
    client = LspClient()
    try:
        client.initialize(str(root), python=python, debounce_ms=0)
        uri, _ = client.open(kernel)
        arrived, diagnostics = client.wait_published(uri, 1)
        return arrived - client.started, len(diagnostics)
    finally:
        client.close()


def check(kernel: Path, python: str) -> tuple[float, str]:
    command, env = pallas_command("check")
    started = time.perf_counter()
    run = subprocess.run([*command, "--format", "json", "--python", python, str(kernel)], capture_output=True,
                         text=True, env=env, timeout=1800, cwd=kernel.parent)
    if run.returncode not in (0, 1):
        raise SystemExit(f"pallas-lsp check failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return time.perf_counter() - started, run.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--json")
    parser.add_argument("--out", default=str(make_big_workspace.DEFAULT_OUT), help="where the tree is built")
    args = parser.parse_args(argv)
    big_kernel = make_big_workspace.write(args.files, Path(args.out))
    files = sum(1 for _ in big_kernel.parent.rglob("*.py"))
    alone_root = Path(tempfile.mkdtemp(prefix="pallas-alone-"))
    shutil.copyfile(big_kernel, alone_root / "example.py")
    shutil.copyfile(big_kernel.parent / "pyproject.toml", alone_root / "pyproject.toml")
    cases = {"big": (big_kernel, big_kernel.parent), "alone": (alone_root / "example.py", alone_root)}
    series = {f"{what}_{case}_{cache}": [] for what in ("server", "check") for case in cases for cache in ("cold", "warm")}
    outputs = {}
    counts = set()
    for _ in range(args.runs):  # interleaved, so load changes hit every series alike
        for case, (kernel, root) in cases.items():
            cache = tempfile.mkdtemp(prefix="pallas-cache-")
            os.environ["PALLAS_LSP_CACHE_DIR"] = cache
            for state in ("cold", "warm"):
                seconds, count = first_diagnostics(kernel, root, args.python)
                series[f"server_{case}_{state}"].append(seconds)
                counts.add(count)
            shutil.rmtree(cache)
            cache = tempfile.mkdtemp(prefix="pallas-cache-")
            os.environ["PALLAS_LSP_CACHE_DIR"] = cache
            for state in ("cold", "warm"):
                seconds, output = check(kernel, args.python)
                series[f"check_{case}_{state}"].append(seconds)
                outputs[case] = output.replace(str(root), "ROOT")
            shutil.rmtree(cache)
    shutil.rmtree(alone_root)
    if outputs["big"] != outputs["alone"] or len(counts) != 1:
        raise SystemExit(f"different findings in the big workspace and alone: {outputs} {counts}")
    result = {"benchmark": "big_workspace", "machine": machine(), "workspace_py_files": files,
              "diagnostics": counts.pop(), **{name: summary(values, 1.0) for name, values in series.items()}}
    for what in ("server", "check"):
        for state in ("cold", "warm"):
            result[f"ratio_{what}_{state}"] = (result[f"{what}_big_{state}"]["median"]
                                               / result[f"{what}_alone_{state}"]["median"])
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
