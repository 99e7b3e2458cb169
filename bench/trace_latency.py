"""Trace latency: `pallas-lsp trace` (cold worker, warm worker) against doing the same by hand.

The baseline is the bare cost of the same work in one fresh Python process, measured in the same
run: `python -c "import jax; <import the module>; jax.jit(f).trace(*args).lower(...)"` (process
start included, as it is for a cold worker). Reports medians and ratios.

    .venvs/dev/bin/python bench/trace_latency.py [--python .venvs/jax/bin/python] [--repeat 5]
        [--target tests/fixtures/trace/kernels.py::add_one] [--args "f32[128]"] [--platform cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "server"))

from pallas_lsp.trace import trace_target  # noqa: E402
from pallas_lsp.trace.targets import resolve_args, split_target  # noqa: E402
from pallas_lsp.trace.worker import WorkerPool  # noqa: E402

BY_HAND = """
import importlib, os, sys, time
t0 = time.perf_counter()
import jax
sys.path.insert(0, os.path.dirname({path!r}))
module = importlib.import_module({module!r})
args = [jax.ShapeDtypeStruct(tuple(s), jax.numpy.dtype(d)) for d, s in {args!r}]
lowered = jax.jit(getattr(module, {function!r})).trace(*args).lower(lowering_platforms=({platform!r},))
if {compile!r}:
    lowered.compile()
print(time.perf_counter() - t0)
"""


def by_hand(python: str, path: str, function: str, specs, platform: str, compile_: bool) -> tuple[float, float]:
    code = BY_HAND.format(path=path, module=os.path.splitext(os.path.basename(path))[0], function=function,
                          args=[(s.dtype, list(s.shape)) for s in specs],
                          platform="cpu" if platform == "host" else platform, compile=compile_)
    start = time.perf_counter()
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=os.path.join(REPO, ".venvs", "jax", "bin", "python"))
    parser.add_argument("--target", default="tests/fixtures/trace/kernels.py::add_one")
    parser.add_argument("--args", default=None)
    parser.add_argument("--platform", default="cuda")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    path, function = split_target(options.target)
    path = os.path.realpath(os.path.join(REPO, path) if not os.path.isabs(path) else path)
    with open(path, encoding="utf-8") as f:
        specs = resolve_args(f.read(), function, options.args).specs

    cold, warm, hand, hand_in_process, compiled = [], [], [], [], None
    for _ in range(options.repeat):
        # Interleaved so that machine load drifts hit all three alike.
        wall, inside = by_hand(options.python, path, function, specs, options.platform, compile_=False)
        pool = WorkerPool()
        try:
            start = time.perf_counter()
            first = trace_target(pool, options.python, os.path.dirname(path), path, function,
                                 args=options.args, platform=options.platform)
            cold.append(time.perf_counter() - start)
            assert first["ok"], first["error"]
            assert first["worker"]["cold"], first["worker"]
            compiled = first["compiled"]
            if compiled:  # the bare baseline must do the same work
                wall, inside = by_hand(options.python, path, function, specs, options.platform, compile_=True)
            start = time.perf_counter()
            second = trace_target(pool, options.python, os.path.dirname(path), path, function,
                                  args=options.args, platform=options.platform)
            warm.append(time.perf_counter() - start)
            assert second["ok"] and not second["worker"]["cold"], second["worker"]
            assert second["kernels"] == first["kernels"], "the warm trace must report the same estimate"
        finally:
            pool.shutdown()
        hand.append(wall)
        hand_in_process.append(inside)

    med = {name: statistics.median(values) for name, values in
           (("cold", cold), ("warm", warm), ("by_hand", hand), ("by_hand_in_process", hand_in_process))}
    report = {"target": options.target, "platform": options.platform, "compiled": compiled,
              "repeat": options.repeat, "median_seconds": {k: round(v, 4) for k, v in med.items()},
              "ratios": {"cold/by_hand": round(med["cold"] / med["by_hand"], 3),
                         "warm/by_hand": round(med["warm"] / med["by_hand"], 3),
                         "warm/cold": round(med["warm"] / med["cold"], 3)},
              "samples": {"cold": cold, "warm": warm, "by_hand": hand}}
    if options.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"trace {options.target} ({options.platform}, compiled={compiled}), median of {options.repeat}:")
        print(f"  by hand, one fresh process (import jax + lower): {med['by_hand']:.3f} s "
              f"(of which in-process {med['by_hand_in_process']:.3f} s)")
        print(f"  pallas-lsp trace, cold worker:                   {med['cold']:.3f} s  "
              f"ratio {report['ratios']['cold/by_hand']:.2f}")
        print(f"  pallas-lsp trace, warm worker:                   {med['warm']:.3f} s  "
              f"ratio {report['ratios']['warm/by_hand']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
