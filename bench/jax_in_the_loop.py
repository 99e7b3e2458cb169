"""What `check --trace` costs: a kernel file whose one test reaches a few launches, JAX in the loop.

Each repetition runs, interleaved (machine load hits all alike), fresh processes of
`pallas-lsp check --python .venvs/jax/bin/python kernels.py` (the rules only) and of the same with
`--trace` (the entry points run: a trace worker started, jax imported, the test run, each launch
lowered, the worker stopped), each with an empty analysis cache ("cold") and then again ("warm").
Then, in this process, `run_entry_points` on one `WorkerPool` (the language server's call): the first
run starts the worker, the next ones find it warm.

    .venvs/dev/bin/python bench/jax_in_the_loop.py [--runs 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from lsp_client import JAX_PYTHON, emit, machine, pallas_command, summary  # noqa: E402

KERNELS = '''\
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@functools.partial(plgpu.kernel, out_type=X,
                   scratch_types=[plgpu.SMEM((128, 128), jnp.float32), plgpu.Barrier(num_arrivals=1)])
def add_one(x_ref, o_ref, tile, barrier):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...] + 1.0


def _double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def double(x):
    return pl.pallas_call(_double, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_kernels():
    x = jnp.ones((128,), jnp.float32)
    y = add_one(x)
    z = double(y)
    w = jax.jit(lambda v: add_one(double(v)))(z)
    assert w.shape == (128,)
'''


def check_once(folder: str, trace: bool, cache: str) -> float:
    command, env = pallas_command("check")
    env["PALLAS_LSP_CACHE_DIR"] = cache
    started = time.perf_counter()
    run = subprocess.run([*command, *(["--trace"] if trace else []), "--python", JAX_PYTHON, "kernels.py"],
                         capture_output=True, text=True, env=env, cwd=folder, timeout=600)
    elapsed = time.perf_counter() - started
    if run.returncode != 0 or (trace and "4 launches reached, 0 rejected" not in run.stderr):
        raise SystemExit(f"check failed ({run.returncode}): {run.stdout[-1000:]} {run.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    from pallas_lsp.trace.entry_points import run_entry_points
    from pallas_lsp.trace.worker import WorkerPool

    samples: dict[str, list[float]] = {name: [] for name in ("check_cold", "check_warm", "trace_cold", "trace_warm")}
    api: dict[str, list[float]] = {"cold_worker": [], "warm_worker": [], "lowering_warm": []}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "kernels.py").write_text(KERNELS)
        check_once(folder, True, tempfile.mkdtemp(dir=folder))  # the disk caches warm for all
        for _ in range(args.runs):
            for trace in (False, True):
                cache = tempfile.mkdtemp(dir=folder)
                name = "trace" if trace else "check"
                samples[f"{name}_cold"].append(check_once(folder, trace, cache))
                samples[f"{name}_warm"].append(check_once(folder, trace, cache))
        for _ in range(args.runs):
            pool = WorkerPool()
            try:
                for index in range(3):
                    started = time.perf_counter()
                    run = run_entry_points(pool, JAX_PYTHON, folder, [os.path.join(folder, "kernels.py")])
                    elapsed = time.perf_counter() - started
                    assert [r.outcome for r in run.results] == ["ok"] and len(run.launches()) == 4, run.results
                    if index == 0:
                        api["cold_worker"].append(elapsed)
                    else:
                        api["warm_worker"].append(elapsed)
                        api["lowering_warm"].append(sum(launch["seconds"] for _, launch in run.launches()))
            finally:
                pool.shutdown()
    emit({"machine": machine(), "runs": args.runs, "launches": 4,
          "check_seconds": {name: summary(values, 1.0) for name, values in samples.items()},
          "run_entry_points_seconds": {name: summary(values, 1.0) for name, values in api.items()}}, args.json)


if __name__ == "__main__":
    main()
