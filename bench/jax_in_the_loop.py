"""What `check --trace` costs: a kernel file whose one test reaches a few launches, JAX in the loop.

Each repetition runs, interleaved (machine load hits all alike), fresh processes of
`pallas-lsp check --python .venvs/jax/bin/python kernels.py` (the rules only) and of the same with
`--trace` (the entry points run: a trace worker started, jax imported, the test run, each launch
lowered, the worker stopped), each with an empty analysis cache ("cold") and then again ("warm").
Then, in this process, `run_entry_points` on one `WorkerPool` (the language server's call): the first
run starts the worker, the next ones find it warm.

Then the language server's path (`lsp_path`): a real server over stdio with `traceEntryPoints:
"onSave"`, a kernel file whose test reaches 3 launches (the last one JAX rejects, where no rule
looks). Rounds, alternating: (a) the file edited and saved, and nothing typed: the time from the save
to the diagnostics of that version holding JAX's PAL100 (the run debounced, run, published); then
keystrokes with no run in progress; (b) the file saved and typed in at once: the keystrokes whose
edit and diagnostics both fall inside the run (its `$/progress` begin and end). Keystroke: an edit
of a number in a kernel body, 30 ms after the last one's diagnostics, timed from `didChange` to its
`publishDiagnostics`.

    .venvs/dev/bin/python bench/jax_in_the_loop.py [--runs 5] [--rounds 10] [--keystrokes 8] [--only cli|lsp] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from lsp_client import JAX_PYTHON, LspClient, emit, machine, pallas_command, summary  # noqa: E402

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


# The server's path: a test of 3 launches; the third JAX rejects (a broadcast no rule checks).
LSP_KERNELS = KERNELS.split("def test_kernels():")[0] + '''\
def _bad(x_ref, o_ref):
    o_ref[...] = x_ref[...] + jnp.ones((3,), jnp.float32) * SCALE


def bad(x):
    return pl.pallas_call(_bad, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


SCALE = 0.0


def test_kernels():
    x = jnp.ones((128,), jnp.float32)
    y = add_one(x)
    z = double(y)
    bad(z)
'''


KEYSTROKE_SECONDS = 0.03


class _Session:
    """What the server said, as it arrives: diagnostics per version, and the runs' progress."""

    def __init__(self, client: LspClient, uri: str) -> None:
        self.client, self.uri = client, uri
        self.published: dict[int, list[tuple[float, list]]] = {}
        self.begun: list[float] = []
        self.ended: list[float] = []

    def pump(self, done, timeout: float = 120.0) -> None:
        deadline = time.perf_counter() + timeout
        while not done():
            try:
                arrived, message = self.client.messages.get(timeout=max(0.0, deadline - time.perf_counter()))
            except Exception:  # noqa: BLE001 - queue.Empty
                raise TimeoutError("the server said nothing more") from None
            if message is None:
                raise RuntimeError("the server exited")
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == self.uri:
                self.published.setdefault(message["params"].get("version"), []).append(
                    (arrived, message["params"]["diagnostics"]))
            elif message.get("method") == "$/progress":
                kind = message["params"]["value"].get("kind")
                (self.begun if kind == "begin" else self.ended if kind == "end" else []).append(arrived)

    def with_jax(self, version: int) -> float | None:
        return next((t for t, ds in self.published.get(version, []) if any(d["code"] == "PAL100" for d in ds)), None)


def lsp_path(rounds: int, keystrokes: int) -> dict:
    """Save -> JAX's results published, and keystroke latency with and without a run in progress."""
    folder = tempfile.mkdtemp()
    path = Path(folder, "kernels.py")
    path.write_text(LSP_KERNELS)
    results = {"save_to_jax_results": [], "keystroke_idle": [], "keystroke_during_run": []}
    with LspClient() as client:
        client.initialize(folder, options={"traceEntryPoints": "onSave"},
                          capabilities={"window": {"workDoneProgress": True}})
        uri, _ = client.open(path)
        session = _Session(client, uri)
        session.pump(lambda: 1 in session.published)
        version, text = 1, LSP_KERNELS
        line = text.splitlines().index("    o_ref[...] = x_ref[...] * 2.0")

        def save(scale: int) -> float:
            nonlocal version, text
            version += 1
            text = re.sub(r"SCALE = [\d.]+", f"SCALE = {scale}.0", text)
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [{"text": text}]})
            path.write_text(text)
            return client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

        def keystroke(digit: int) -> tuple[float, float]:
            nonlocal version, text
            time.sleep(KEYSTROKE_SECONDS)  # a fast typist's pace: the run gets the CPU between keys, as it would
            version += 1
            column = len("    o_ref[...] = x_ref[...] * ")
            sent = client.change(uri, version, line, column, column + 1, str(digit))
            lines = text.split("\n")
            lines[line] = lines[line][:column] + str(digit) + lines[line][column + 1:]
            text = "\n".join(lines)
            wanted = version
            session.pump(lambda: wanted in session.published)
            return sent, session.published[wanted][0][0]

        for index in range(2 + 2 * rounds):  # two warm-up rounds, then (a) and (b) alternating
            ended = len(session.ended)
            sent = save(index + 1)
            saved = version
            if index % 2 == 0:  # (a): nothing typed until JAX's results are in, then idle keystrokes
                session.pump(lambda: session.with_jax(saved) is not None)
                if index >= 2:
                    results["save_to_jax_results"].append(session.with_jax(saved) - sent)
                for k in range(keystrokes):
                    began, arrived = keystroke(k % 10)
                    if index >= 2:
                        results["keystroke_idle"].append(arrived - began)
            else:  # (b): typing at once, while the run is on its way
                while len(session.ended) == ended:
                    began, arrived = keystroke(len(session.published) % 10)
                    run_began = session.begun[-1] if len(session.begun) > ended else None
                    if index >= 2 and run_began is not None and began >= run_began and len(session.ended) == ended:
                        results["keystroke_during_run"].append(arrived - began)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10, help="the server's path: rounds of each kind")
    parser.add_argument("--keystrokes", type=int, default=8, help="idle keystrokes per round")
    parser.add_argument("--only", choices=("cli", "lsp"))
    parser.add_argument("--json")
    args = parser.parse_args()
    result = {"machine": machine()}
    if args.only != "lsp":
        result.update(cli_and_api(args.runs))
    if args.only != "cli":
        lsp = lsp_path(args.rounds, args.keystrokes)
        result["server"] = {"save_to_jax_results_seconds": summary(lsp["save_to_jax_results"], 1.0),
                            "keystroke_ms": {name: summary(lsp[name]) for name in ("keystroke_idle", "keystroke_during_run")
                                             if lsp[name]}}
        idle, busy = (result["server"]["keystroke_ms"].get(n) for n in ("keystroke_idle", "keystroke_during_run"))
        if idle and busy:
            result["server"]["during_run_over_idle"] = {"median": busy["median"] / idle["median"], "p95": busy["p95"] / idle["p95"]}
    emit(result, args.json)


def cli_and_api(runs: int) -> dict:
    from pallas_lsp.trace.entry_points import run_entry_points
    from pallas_lsp.trace.worker import WorkerPool

    samples: dict[str, list[float]] = {name: [] for name in ("check_cold", "check_warm", "trace_cold", "trace_warm")}
    api: dict[str, list[float]] = {"cold_worker": [], "warm_worker": [], "lowering_warm": []}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "kernels.py").write_text(KERNELS)
        check_once(folder, True, tempfile.mkdtemp(dir=folder))  # the disk caches warm for all
        for _ in range(runs):
            for trace in (False, True):
                cache = tempfile.mkdtemp(dir=folder)
                name = "trace" if trace else "check"
                samples[f"{name}_cold"].append(check_once(folder, trace, cache))
                samples[f"{name}_warm"].append(check_once(folder, trace, cache))
        for _ in range(runs):
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
    return {"runs": runs, "launches": 4,
            "check_seconds": {name: summary(values, 1.0) for name, values in samples.items()},
            "run_entry_points_seconds": {name: summary(values, 1.0) for name, values in api.items()}}


if __name__ == "__main__":
    main()
