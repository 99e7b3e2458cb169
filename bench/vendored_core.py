"""`pallas-lsp check core.py` against the same kernel file named `kern.py`, in a workspace that vendors
a copy of the jax package (issue 24): a module named like one of jax's own (`core`) must not make the
importer search model jax's files that import *their* `core`.

Builds the workspace in a temporary folder (the jax package of .venvs/jax copied to `jax/`, beside
the two kernel files), then runs fresh processes of `pallas-lsp check --python .venvs/jax/bin/python
FILE` from the workspace, the two files interleaved so machine load hits both alike: on a first run
(an empty cache folder per process) and on later runs (one cache folder, warmed first). Reports the
medians and the ratio core.py / kern.py for each.

    .venvs/dev/bin/python bench/vendored_core.py [--runs 7] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402

KERNEL = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(o_ref):
    s = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(s)
    pl.semaphore_wait(s)


k = plgpu.kernel(body, out_type=(), interpret=True)


def run():
    return k()
"""


def check_once(workspace: Path, name: str, cache: str) -> tuple[float, str]:
    command, env = pallas_command("check")
    env["PALLAS_LSP_CACHE_DIR"] = cache
    started = time.perf_counter()
    run = subprocess.run([*command, "--verbose", "--python", JAX_PYTHON, name], capture_output=True, text=True,
                         cwd=workspace, env=env, timeout=600)
    elapsed = time.perf_counter() - started
    if run.returncode != 1 or "PAL002" not in run.stdout:
        raise SystemExit(f"check {name}: expected its PAL002, got {run.returncode}: {run.stdout[-1000:]}{run.stderr[-2000:]}")
    importers = [line for line in run.stderr.splitlines() if "importers of" in line]
    return elapsed, importers[0] if importers else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "ws"
        shutil.copytree(jax_package_dir(), workspace / "jax", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("core.py", "kern.py"):
            (workspace / name).write_text(KERNEL)
        vendored = sum(1 for _ in (workspace / "jax").rglob("*.py"))
        warm = os.path.join(folder, "warm-cache")
        samples = {kind: {"core.py": [], "kern.py": []} for kind in ("first run", "later runs")}
        lines = {}
        for name in ("core.py", "kern.py"):
            check_once(workspace, name, warm)  # warm the shared cache for the later runs
        for index in range(args.runs):
            for name in ("core.py", "kern.py"):
                elapsed, line = check_once(workspace, name, os.path.join(folder, f"cold-{index}-{name}"))
                samples["first run"][name].append(elapsed)
                lines[name] = line
                samples["later runs"][name].append(check_once(workspace, name, warm)[0])
    result = {"machine": machine(), "vendored_python_files": vendored, "runs": args.runs,
              "importer_search (--verbose, first run)": lines}
    for kind, found in samples.items():
        core, kern = statistics.median(found["core.py"]), statistics.median(found["kern.py"])
        result[kind] = {"core.py": summary(found["core.py"]), "kern.py": summary(found["kern.py"]),
                        "ratio core/kern (medians)": round(core / kern, 2)}
    emit(result, args.json)


if __name__ == "__main__":
    main()
