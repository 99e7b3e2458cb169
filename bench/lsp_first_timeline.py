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

    from pallas_lsp.analysis import project as project_module, workspace_imports
    from pallas_lsp.lsp import server as server_module, session

    findings = session.Session._findings

    def timed_findings(self, *args, **kwargs):
        mark("analysis-start")
        started = time.thread_time()
        found = None
        try:
            found = findings(self, *args, **kwargs)
            return found
        finally:
            mark(f"analysis-end {time.thread_time() - started:.3f}")
            if not isinstance(found, tuple) or not found[1]:  # a checkout without a first pass: a list, all
                mark("analysis-complete")

    session.Session._findings = timed_findings
    sys_path = workspace_imports._interpreter_sys_path

    def timed_sys_path(project):
        mark("sys-path-asked")
        try:
            return sys_path(project)
        finally:
            mark("sys-path-known")

    workspace_imports._interpreter_sys_path = timed_sys_path
    load_soon = project_module.Project.load_environment_soon
    project_module.Project.load_environment_soon = lambda self, done: load_soon(
        self, lambda env, error: (mark("jedi-environment-loaded"), done(env, error)))
    server = server_module.server
    opened = server.protocol.fm.features["textDocument/didOpen"]
    server.protocol.fm.features["textDocument/didOpen"] = lambda *a: (mark("didOpen"), opened(*a))[1]
    publish = server.text_document_publish_diagnostics
    server.text_document_publish_diagnostics = lambda params: (mark("published"), publish(params))[1]
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
            "jedi_environment_loaded_after_publish": loaded is None or loaded[0] > published[0]}


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
