"""`check`'s CPU and wall time with `--jobs 1`, the default `--jobs`, and a forced number of workers, interleaved
tree by tree, each run in a fresh `PALLAS_LSP_CACHE_DIR`: what a worker costs beyond the work it takes over.

CPU seconds are those of the process tree, jedi's interpreters included (`real_file_latency.run_tree`: this
process becomes the subreaper of the orphans). The trees are `real_file_latency.py --check`'s, already unpacked
in its cache (run that once first). Each MODE is CHECKOUT:JOBS[:WORKERS]; JOBS 0 is the default `--jobs`:

    .venvs/dev/bin/python bench/check_workers.py tokamax,maxtext,jax,tpu-inference \\
        $PWD:2:1,$PWD:1,$PWD:0,/path/to/main:2:1
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_client import JAX_PYTHON  # noqa: E402
from real_file_latency import DEFAULT_CACHE, become_subreaper, run_tree  # noqa: E402

TREES = {"maxtext": ["maxtext-0.2.5"], "tpu-inference": ["tpu-inference-0.32.0"], "tokamax": ["tokamax-0.0.17"],
         "jax": ["src/jax-cec06d116c/tests/pallas", "src/jax-cec06d116c/jax/experimental/pallas"]}


def main() -> None:
    trees, modes = sys.argv[1].split(","), sys.argv[2].split(",")
    become_subreaper()
    for tree in trees:
        for mode in modes:
            checkout, jobs, *workers = mode.split(":")
            env = dict(os.environ, PYTHONPATH=f"{checkout}/server", PALLAS_LSP_CACHE_DIR=tempfile.mkdtemp())
            env.pop("PALLAS_LSP_CHECK_WORKERS", None)
            if workers:
                env["PALLAS_LSP_CHECK_WORKERS"] = workers[0]
            command = [sys.executable, "-m", "pallas_lsp", "check", "--format", "json",
                       *(["-j", jobs] if jobs != "0" else []), "--python", JAX_PYTHON,
                       *(str(DEFAULT_CACHE / part) for part in TREES[tree])]
            load = os.getloadavg()[0]
            wall, cpu, status, out = run_tree(command, env)
            print(f"{tree:14} {mode:40} CPU {cpu:6.2f} s  wall {wall:6.1f} s  exit {status}  "
                  f"output {hashlib.md5(out).hexdigest()[:8]}  load {load:.1f}", flush=True)


if __name__ == "__main__":
    main()
