"""Where a server's first analysis of a real kernel file spends its time: a timeline of the real server.

A real `pallas-lsp serve` over stdio (bench/lsp_client.py, debounce 0, a fresh `PALLAS_LSP_CACHE_DIR`,
workspace: the unpacked wheel of bench/real_file_latency.py) opens the file; this same script, run as the
server (`--serve`), logs when the server takes `didOpen`, when the analysis thread starts and ends (its
own CPU), how long it waited for the analysed interpreter's `sys.path` (which a first analysis needs to
locate modules), when jedi's environment finished loading, and when the diagnostics went out, with the
whole process's CPU at each step. A server whose first pass left out the rules needing the kernels of the
file's importers (server/pallas_lsp/analysis/first_pass.py) analyses the file whole after it, and publishes
again if that adds something: when that is done is timed too ("settled"; the first publish where nothing
was left out). CPU figures hold on a
loaded machine; the wall times do not.

    .venvs/dev/bin/python bench/lsp_first_timeline.py [--only maxtext ...] [--source CHECKOUT] [--log-dir DIR]
        [--cache DIR] [--python JAX_PYTHON]

(`--source`: another checkout's server/, as in real_file_latency.py.)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

STARTED = time.perf_counter()


def serve(log_path: str) -> int:
    """The server, its steps logged to `log_path` (a line each: seconds since start, process CPU, thread, step)."""
    log = open(log_path, "w")

    def mark(step: str) -> None:
        log.write(f"{time.perf_counter() - STARTED:.3f} {time.process_time():.3f} "
                  f"{threading.current_thread().name} {step}\n")
        log.flush()

    from pallas_lsp.analysis import project as project_module, resolver, workspace_imports
    from pallas_lsp.lsp import server as server_module, session

    findings = session.Session._findings
    asked = {"jedi": [0, 0.0, 0.0], "gc": [0, 0.0], "probe": False}  # this analysis's: count, wall, thread CPU

    def timed_findings(self, *args, **kwargs):
        mark("analysis-start")
        asked["jedi"], asked["gc"] = [0, 0.0, 0.0], [0, 0.0]
        started = time.thread_time()
        found = None
        try:
            found = findings(self, *args, **kwargs)
            return found
        finally:
            mark(f"analysis-end {time.thread_time() - started:.3f}")
            mark("jedi-asked {} {:.3f} {:.3f}".format(*asked["jedi"]))
            mark("collected {} {:.3f}".format(*asked["gc"]))
            if not isinstance(found, tuple) or not found[1]:  # a checkout without a first pass: a list, all
                mark("analysis-complete")

    session.Session._findings = timed_findings
    # The import answers that asked jedi (its probe script, created or kept), with the wall and CPU of the
    # analysis thread meanwhile: the difference is the wait for jedi's environment and process.
    import_targets = getattr(resolver.Resolver, "_import_targets", None)
    probe_script = getattr(resolver.Resolver, "_probe_script", None)

    def counted_probe(self, *args):
        asked["probe"] = True
        return probe_script(self, *args)

    def timed_import_targets(self, *args):
        asked["probe"], wall, cpu = False, time.perf_counter(), time.thread_time()
        try:
            return import_targets(self, *args)
        finally:
            if asked["probe"]:
                jedi = asked["jedi"]
                jedi[0] += 1
                jedi[1] += time.perf_counter() - wall
                jedi[2] += time.thread_time() - cpu

    if import_targets is not None and probe_script is not None:  # an older checkout (`--source`) may lack them
        resolver.Resolver._probe_script, resolver.Resolver._import_targets = counted_probe, timed_import_targets

    def collecting(phase, info, started=[0.0]):  # noqa: B006 - the start of the collection under way
        if phase == "start":  # the CPU of the thread collecting (the one that allocated past the threshold)
            started[0] = time.thread_time()
        else:
            asked["gc"][0] += 1
            spent = time.thread_time() - started[0]
            asked["gc"][1] += spent
            if spent > 0.005:  # a long one (an older generation's), wherever it falls
                mark(f"collection {info['generation']} {spent:.3f}")

    gc.callbacks.append(collecting)

    def threads_now(step: str) -> None:
        """Each live thread's CPU and run-queue wait so far (/proc/self/task/*/schedstat, Linux)."""
        found = {}
        for thread in threading.enumerate():
            try:
                with open(f"/proc/self/task/{thread.native_id}/schedstat") as stat:
                    running, waiting, _ = stat.read().split()
            except (OSError, ValueError):
                continue
            found[thread.name] = [int(running) / 1e9, int(waiting) / 1e9]
        mark(f"{step} {json.dumps(found, separators=(',', ':'))}")
    sys_path = workspace_imports._interpreter_sys_path

    def timed_sys_path(project):
        mark("sys-path-asked")
        try:
            return sys_path(project)
        finally:
            mark("sys-path-known")

    workspace_imports._interpreter_sys_path = timed_sys_path
    load_soon = project_module.Project.load_environment_soon
    project_module.Project.load_environment_soon = lambda self, done, **kwargs: load_soon(
        self, lambda env, error: (mark("jedi-environment-loaded"), threads_now("environment-threads"),
                                  done(env, error)), **kwargs)
    server = server_module.server
    opened = server.protocol.fm.features["textDocument/didOpen"]
    server.protocol.fm.features["textDocument/didOpen"] = lambda *a: (mark("didOpen"), threads_now("threads-opened"),
                                                                     opened(*a))[1]
    publish = server.text_document_publish_diagnostics
    server.text_document_publish_diagnostics = lambda params: (threads_now("threads-published"), mark("published"),
                                                               publish(params))[1]
    return server_module.main([])


def steps_of(log_path: str) -> list[tuple[str, float, float, str]]:
    """(step, wall, process CPU, the rest of its line) for each line of a server's log."""
    found = []
    for line in Path(log_path).read_text().splitlines():
        wall, cpu, _, step = line.split(" ", 3)
        name, _, rest = step.partition(" ")
        found.append((name, float(wall), float(cpu), rest))
    return found


def settled(log_path: str) -> bool:
    """Whether an analysis that left no rule out ended, and diagnostics went out (a first pass may leave
    rules out: the whole analysis follows, and its diagnostics if they differ)."""
    names = [name for name, *_ in steps_of(log_path)] if os.path.exists(log_path) else []
    return "analysis-complete" in names and "published" in names


def timeline(log_path: str) -> dict:
    steps: dict[str, tuple[float, float, str]] = {}
    found = steps_of(log_path)
    for name, wall, cpu, rest in found:
        steps.setdefault(name, (wall, cpu, rest))
    opened, published = steps["didOpen"], steps["published"]
    last = max(steps["analysis-complete"][:2], max(step[1:3] for step in found if step[0] == "published"))
    asked, known = steps.get("sys-path-asked"), steps.get("sys-path-known")
    loaded = steps.get("jedi-environment-loaded")
    return {"wall_s": published[0] - opened[0], "server_cpu_s": published[1] - opened[1],
            "settled_wall_s": last[0] - opened[0], "settled_server_cpu_s": last[1] - opened[1],
            "analysis_thread_cpu_s": float(steps["analysis-end"][2]),
            "waited_for_sys_path_s": known[0] - asked[0] if asked and known else 0.0,
            "jedi_environment_loaded_after_publish": loaded is None or loaded[0] > published[0],
            **accounting(steps, published[0] - opened[0])}


def accounting(steps: dict, wall: float) -> dict:
    """Where the first publish's wall time went (the steps `serve` logs): each server thread's CPU from
    `didOpen` to it; the analysis thread's wait for a CPU (run queue: a loaded machine's) and the rest of its
    wall time (blocked: on jedi's environment and process, a lock, the disk, or the interpreter lock while
    another thread of the server ran); the import answers that asked jedi, and the collector's CPU."""
    if "threads-opened" not in steps or "threads-published" not in steps:
        return {}
    opened, published = (json.loads(steps[name][2]) for name in ("threads-opened", "threads-published"))
    ended = json.loads(steps["environment-threads"][2]) if "environment-threads" in steps else {}
    cpu = {}
    for name, (running, _) in {**ended, **published}.items():
        before = opened.get(name, [0.0, 0.0])[0]
        if name in published or steps["environment-threads"][0] <= steps["threads-published"][0]:
            cpu[name] = round(max(0.0, running - before), 3)
    analysis = next((name for name in published if name.startswith("pallas-analysis")), None)
    running, queued = (published[analysis][i] - opened.get(analysis, [0.0, 0.0])[i] for i in (0, 1)) \
        if analysis else (0.0, 0.0)
    jedi, collected = steps.get("jedi-asked"), steps.get("collected")
    jedi = jedi[2].split() if jedi else ["0", "0", "0"]
    collected = collected[2].split() if collected else ["0", "0"]
    return {"thread_cpu_s": {name: value for name, value in cpu.items() if value},
            "analysis_run_queue_s": round(queued, 3), "analysis_blocked_s": round(wall - running - queued, 3),
            "jedi_asked": int(jedi[0]), "jedi_wall_s": float(jedi[1]), "jedi_analysis_cpu_s": float(jedi[2]),
            "collections": int(collected[0]), "collections_cpu_s": float(collected[1])}


def measure(name: str, source: str | None, log_dir: str, cache: str | None = None, python: str | None = None) -> dict:
    import lsp_client
    import real_file_latency as bench

    root = bench.unpacked(name, Path(cache) if cache else bench.DEFAULT_CACHE)
    path = root / bench.FILES[name][0]
    log_path = os.path.join(log_dir, f"{name}.log")
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.path.join(source, "server") + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, __file__, "--serve", log_path]
    real_command = lsp_client.pallas_command
    lsp_client.pallas_command = lambda subcommand, _source=None: (command, env)
    try:
        with tempfile.TemporaryDirectory(prefix="pallas-lsp-bench-cache-") as cache_dir:
            with lsp_client.LspClient(env={"PALLAS_LSP_CACHE_DIR": cache_dir}) as client:
                client.initialize(str(root), python=python or lsp_client.JAX_PYTHON, debounce_ms=0)
                uri, _ = client.open(path)
                client.wait_published(uri, 1, timeout=600)
                deadline = time.perf_counter() + 600
                while not settled(log_path):  # the whole analysis's diagnostics, after a first pass's
                    if time.perf_counter() > deadline:
                        raise TimeoutError(f"{name}: no diagnostics of a whole analysis")
                    time.sleep(0.05)
    finally:
        lsp_client.pallas_command = real_command
    return {"name": name, **timeline(log_path)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=["maxtext", "tpu-inference", "jla", "ejkernel"])
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--log-dir", help="keep the servers' logs here (default: a temporary folder)")
    parser.add_argument("--cache", help="where the wheels are unpacked (default: real_file_latency.py's)")
    parser.add_argument("--python", help="the analysed interpreter (default: .venvs/jax's)")
    parser.add_argument("--serve", metavar="LOG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.serve)
    with tempfile.TemporaryDirectory(prefix="pallas-lsp-timeline-") as scratch:
        log_dir = args.log_dir or scratch
        os.makedirs(log_dir, exist_ok=True)
        for name in args.only:
            r = measure(name, args.source, log_dir, args.cache, args.python)
            print(f"{r['name']}: didOpen -> diagnostics {r['wall_s']:.2f} s wall, server CPU {r['server_cpu_s']:.2f} s "
                  f"(analysis thread {r['analysis_thread_cpu_s']:.2f} s); all of them (settled) {r['settled_wall_s']:.2f} s "
                  f"wall, server CPU {r['settled_server_cpu_s']:.2f} s; waited {r['waited_for_sys_path_s']:.2f} s for "
                  f"sys.path; jedi's environment loaded {'after' if r['jedi_environment_loaded_after_publish'] else 'before'} "
                  "the diagnostics")
            if "thread_cpu_s" in r:
                threads = ", ".join(f"{name} {value:.2f}" for name, value in sorted(r["thread_cpu_s"].items()))
                print(f"  first publish: CPU by thread: {threads} s; analysis thread waited {r['analysis_run_queue_s']:.2f} s "
                      f"for a CPU, blocked {r['analysis_blocked_s']:.2f} s; {r['jedi_asked']} import(s) asked jedi: "
                      f"{r['jedi_wall_s']:.2f} s wall, {r['jedi_analysis_cpu_s']:.2f} s of the analysis thread's CPU; "
                      f"{r['collections']} garbage collection(s), {r['collections_cpu_s']:.2f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
