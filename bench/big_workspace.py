"""A kernel file among ~6,000 unrelated modules, against the same file alone: first diagnostics and `check`.

The tree comes from bench/make_big_workspace.py (`example.py` + vendored copies of installed
modules). The same kernel file alone is a copy in a folder of its own (with a pyproject.toml too).
Each repetition, interleaved, in fresh processes:

- the server: process start -> initialize (root: the tree's folder) -> didOpen example.py -> first
  publishDiagnostics, in the big workspace and alone;
- `pallas-lsp check example.py` in the big workspace and alone.

Cache states: each repetition first runs with an empty cache folder (`PALLAS_LSP_CACHE_DIR`, as the
very first run on a machine), then with the cache that run left (every later run). jedi's own parse
cache (parso's, under `$XDG_CACHE_HOME/jedi`) is the user's, as it is for any jedi user; `--empty-jedi-cache`
gives every empty-cache run an empty one too.

`--source CHECKOUT` also runs another checkout's `server/` (the tree before a change) in every repetition,
interleaved with this one (series `before_*`, ratios `before_ratio_*`); its findings must be the same.
`paired_ratio_*`: the median of each repetition's big/alone ratio (the two run back to back).

    .venvs/dev/bin/python bench/big_workspace.py [--runs 5] [--files 6000] [--out DIR] [--json OUT] [--source CHECKOUT]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_workspace  # noqa: E402
from lsp_client import JAX_PYTHON, LspClient, emit, machine, pallas_command, summary  # noqa: E402


def first_diagnostics(kernel: Path, root: Path, python: str, source: str | None = None) -> tuple[float, int]:
    client = LspClient(source)
    try:
        client.initialize(str(root), python=python, debounce_ms=0)
        uri, _ = client.open(kernel)
        arrived, diagnostics = client.wait_published(uri, 1)
        return arrived - client.started, len(diagnostics)
    finally:
        client.close()


def check(kernel: Path, python: str, source: str | None = None) -> tuple[float, str]:
    command, env = pallas_command("check", source)
    started = time.perf_counter()
    run = subprocess.run([*command, "--format", "json", "--python", python, str(kernel)], capture_output=True,
                         text=True, env=env, timeout=1800, cwd=kernel.parent)
    if run.returncode not in (0, 1):
        raise SystemExit(f"pallas-lsp check failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return time.perf_counter() - started, run.stdout


@contextlib.contextmanager
def _empty_caches(jedi_too: bool):
    """An empty pallas-lsp cache folder (and jedi's, with `jedi_too`) for the "cold" run and the "warm" one after it."""
    saved = {name: os.environ.get(name) for name in ("PALLAS_LSP_CACHE_DIR", "XDG_CACHE_HOME")}
    folder = Path(tempfile.mkdtemp(prefix="pallas-cache-"))
    os.environ["PALLAS_LSP_CACHE_DIR"] = str(folder / "pallas-lsp")
    if jedi_too:
        os.environ["XDG_CACHE_HOME"] = str(folder)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--json")
    parser.add_argument("--out", default=str(make_big_workspace.DEFAULT_OUT), help="where the tree is built")
    parser.add_argument("--source", help="also run another checkout's server/ (before/after), interleaved")
    parser.add_argument("--empty-jedi-cache", action="store_true",
                        help="empty-cache runs also start with an empty jedi/parso cache ($XDG_CACHE_HOME)")
    args = parser.parse_args(argv)
    big_kernel = make_big_workspace.write(args.files, Path(args.out))
    files = sum(1 for _ in big_kernel.parent.rglob("*.py"))
    alone_root = Path(tempfile.mkdtemp(prefix="pallas-alone-"))
    shutil.copyfile(big_kernel, alone_root / "example.py")
    shutil.copyfile(big_kernel.parent / "pyproject.toml", alone_root / "pyproject.toml")
    cases = {"big": (big_kernel, big_kernel.parent), "alone": (alone_root / "example.py", alone_root)}
    trees = {"": None, **({"before_": args.source} if args.source else {})}
    series = {f"{tree}{what}_{case}_{cache}": [] for tree in trees for what in ("server", "check") for case in cases
              for cache in ("cold", "warm")}
    outputs = {}
    counts = set()
    for _ in range(args.runs):  # interleaved, so load changes hit every series alike
        for tree, source in trees.items():
            for case, (kernel, root) in cases.items():
                for what in ("server", "check"):
                    with _empty_caches(args.empty_jedi_cache):
                        for state in ("cold", "warm"):
                            if what == "server":
                                seconds, count = first_diagnostics(kernel, root, args.python, source)
                                counts.add(count)
                            else:
                                seconds, output = check(kernel, args.python, source)
                                outputs[tree + case] = output.replace(str(root), "ROOT")
                            series[f"{tree}{what}_{case}_{state}"].append(seconds)
    shutil.rmtree(alone_root)
    if len(set(outputs.values())) != 1 or len(counts) != 1:
        raise SystemExit(f"different findings in the big workspace and alone, or between trees: {outputs} {counts}")
    result = {"benchmark": "big_workspace", "machine": machine(), "workspace_py_files": files,
              "source": args.source, "empty_jedi_cache": args.empty_jedi_cache,
              "diagnostics": counts.pop(), **{name: summary(values, 1.0) for name, values in series.items()}}
    for tree in trees:
        for what in ("server", "check"):
            for state in ("cold", "warm"):
                big, alone = series[f"{tree}{what}_big_{state}"], series[f"{tree}{what}_alone_{state}"]
                result[f"{tree}ratio_{what}_{state}"] = (result[f"{tree}{what}_big_{state}"]["median"]
                                                         / result[f"{tree}{what}_alone_{state}"]["median"])
                # Each repetition's big and alone runs are back to back: their ratio moves less with
                # the load of other processes than the ratio of medians.
                result[f"{tree}paired_ratio_{what}_{state}"] = statistics.median(b / a for b, a in zip(big, alone))
    result["samples"] = series
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
