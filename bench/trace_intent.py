"""What reading a trace request through the kernel model costs (issue 22: a body's launch, the
platform a kernel runs on), against the whole `pallas-lsp trace` it precedes, measured in the same run.

- cold plan: a fresh process imports pallas-lsp, builds the project (jedi on the analysed
  interpreter) and plans the request, as `pallas-lsp trace` now does before it starts a worker;
- warm plan: the same project plans the request again after an edit (a new text, so no model is
  reused), as the language server does for `pallas.trace` after a save;
- no plan: the same fresh process without planning (imports, reading the file): the cold plan
  minus this is what the plan adds to `pallas-lsp trace`;
- baseline: the whole `pallas-lsp trace` command (fresh process, cold worker, lowering), which
  includes one cold plan.

    .venvs/dev/bin/python bench/trace_intent.py [--python .venvs/jax/bin/python] [--repeat 5]
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

TARGETS = ["tests/fixtures/trace/kernels.py::add_one", "examples/kernels/good_semaphore_ordering.py:30",
           "examples/kernels/pal002_interpret_semaphore.py::ordered_double"]

PLAN = """
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {server!r})
from pallas_lsp.analysis import Project
from pallas_lsp.trace.intent import plan_trace
from pallas_lsp.trace.targets import split_target
path, where = split_target({target!r})
text = open(path).read()
if {plan!r}:
    plan = plan_trace(Project(root={repo!r}, python={python!r}), path, text, where)
    print(time.perf_counter() - t0, plan.function, plan.platform.name)
else:
    print(time.perf_counter() - t0, where, "-")
"""


def cold_plan(python: str, target: str, plan: bool = True) -> tuple[float, str]:
    code = PLAN.format(server=os.path.join(REPO, "server"), target=target, repo=REPO, python=python, plan=plan)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    _, function, platform = out.stdout.split()
    return time.perf_counter() - start, f"{function} on {platform}"


def whole_trace(python: str, target: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", target, "--python", python], capture_output=True,
                   cwd=REPO, env={**os.environ, "PYTHONPATH": os.path.join(REPO, "server")})
    return time.perf_counter() - start


def warm_plans(python: str, target: str, repeat: int) -> list[float]:
    from pallas_lsp.analysis import Project
    from pallas_lsp.trace.intent import plan_trace
    from pallas_lsp.trace.targets import split_target

    path, where = split_target(target)
    path = os.path.join(REPO, path)
    project = Project(root=REPO, python=python)
    text = open(path).read()
    plan_trace(project, path, text, where)  # jedi's first answers
    times = []
    for number in range(repeat):
        edited = text + f"\n# edit {number}\n"
        start = time.perf_counter()
        plan_trace(project, path, edited, where)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=os.path.join(REPO, ".venvs", "jax", "bin", "python"))
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    rows = []
    for target in TARGETS:
        cold, bare, whole, planned = [], [], [], ""
        for _ in range(options.repeat):  # interleaved
            seconds, planned = cold_plan(options.python, target)
            cold.append(seconds)
            bare.append(cold_plan(options.python, target, plan=False)[0])
            whole.append(whole_trace(options.python, target))
        warm = warm_plans(options.python, target, options.repeat)
        row = {"target": target, "traced": planned, "cold_plan_s": statistics.median(cold),
               "no_plan_s": statistics.median(bare),
               "warm_plan_s": statistics.median(warm), "whole_trace_s": statistics.median(whole)}
        row["added_over_trace"] = (row["cold_plan_s"] - row["no_plan_s"]) / row["whole_trace_s"]
        rows.append(row)
        print(f"{target}: traces {planned}; cold plan {row['cold_plan_s']:.3f} s (no plan "
              f"{row['no_plan_s']:.3f} s), warm plan {row['warm_plan_s'] * 1000:.1f} ms, whole trace "
              f"{row['whole_trace_s']:.3f} s (added / trace {row['added_over_trace']:.2f})", flush=True)
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
