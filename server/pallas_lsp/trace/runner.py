"""The trace worker: runs a user's kernel through JAX's own tracing, resource estimator and lowering.

It runs as a separate process under the ANALYSED project's interpreter and imports only the
standard library and jax (this file is executed as a script; it must never import pallas_lsp).
It talks JSON lines over private copies of its stdin and stdout: before any user code runs, fd 0
is pointed at /dev/null and fd 1 at stderr, so the user's prints (Python or C level) and reads
can never corrupt the protocol. No user code runs in this process: each trace runs in a fresh fork
of it, in a PID namespace of its own, and everything it started ends with it (containment.py).
What a trace does with JAX is tracing.py.

    -> {"op": "hello", "pid", "python", "jax", "jaxlib", "backend", "gpu", "import_seconds", ...}
    <- {"id": 1, "op": "trace", "path", "function", "args": [{"dtype", "shape"}], "platform",
        "roots": [...], "compile": null|true|false}
    -> {"id": 1, "result": {...}, "killed_leftover_processes", "trace_pid"}   (docs/trace.md)
    -> {"id": 1, "crashed": exit code or null, ...}        (the trace's process died)
    <- {"id": 2, "op": "entries", "entries": [{"id", "kind", "path", "function", "kwargs", "args", "unittest"}],
        "roots", "bare_platform", "entry_timeout", "output_limit", "texts": {path: text}}   (texts: judged in memory)
    -> {"id": 2, "result": {"entries": [{"id", "outcome", "message", "launch_records": [...], ...}]}}
    <- {"id": 3, "op": "exit"}
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

_RUNNER = os.path.realpath(__file__)
# Run as a script, Python put this folder first on sys.path: the user's `import report` must not
# find our neighbours.
if __name__ == "__main__" and sys.path and os.path.realpath(sys.path[0] or os.getcwd()) == os.path.dirname(_RUNNER):
    del sys.path[0]


def _load(name: str):
    """A module of this folder, loaded by path under a private name: the analysed interpreter has no
    pallas_lsp, and this folder is off sys.path, so the user's own `import tracing` finds theirs."""
    private = f"_pallas_lsp_trace_{name}"
    spec = importlib.util.spec_from_file_location(private, os.path.join(os.path.dirname(_RUNNER), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[private] = module
    spec.loader.exec_module(module)
    return module


containment = _load("containment")
tracing = _load("tracing")
launches = _load("launches")


class Protocol:
    """The private pipes; only the process that started as the worker may write to them."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.inp = os.fdopen(os.dup(0), "r", encoding="utf-8")
        self.out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdout.flush()
        os.dup2(2, 1)  # the user's prints go to stderr, which the server drains and shows

    def send(self, message: dict) -> None:
        if os.getpid() != self.pid:  # a fork made by user code must never answer for us
            os._exit(0)
        sys.stdout.flush()
        sys.stderr.flush()
        self.out.write(json.dumps(message, default=str) + "\n")
        self.out.flush()

    def receive(self) -> dict | None:
        line = self.inp.readline()
        if not line:
            return None
        return json.loads(line)


def main(argv: list[str]) -> int:
    containment.become_subreaper()  # what escapes a trace's keeper (where there are no namespaces) comes back here
    protocol = Protocol()
    containment.die_with_parent()
    memory_mb = 0
    if "--memory-limit-mb" in argv:
        memory_mb = int(argv[argv.index("--memory-limit-mb") + 1])
    try:
        worker = tracing.Worker()
    except BaseException as exc:  # noqa: BLE001 - e.g. no jax in this interpreter
        protocol.send({"op": "hello", "error": f"{type(exc).__name__}: {exc}", "python": sys.version.split()[0],
                       "executable": sys.executable, "pid": os.getpid()})
        return 3
    private = (protocol.inp.fileno(), protocol.out.fileno())
    probe = containment.run_contained(worker.probe, private)
    if "result" not in probe:
        protocol.send({"op": "hello", "error": f"jax could not start its backend ({_exit_words(probe['crashed'])})",
                       "python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid()})
        return 3
    protocol.send(worker.hello(probe["result"]))
    while True:
        try:
            request = protocol.receive()
        except ValueError as exc:
            protocol.send({"id": None, "error": f"bad request: {exc}"})
            continue
        if request is None or request.get("op") == "exit":
            return 0
        if request.get("op") == "trace":
            worker.traces += 1
            outcome = containment.run_contained(lambda: _trace(worker, request, memory_mb), private)
            response = {"id": request.get("id"), "killed_leftover_processes": outcome["killed"],
                        "trace_pid": outcome["pid"]}
            if "result" in outcome:
                response["result"] = outcome["result"]
            else:
                response["crashed"] = outcome["crashed"]
            protocol.send(response)
        elif request.get("op") == "entries":
            worker.traces += 1
            entries = [_entry(worker, request, entry, memory_mb, private) for entry in request.get("entries") or []]
            protocol.send({"id": request.get("id"), "result": {"entries": entries}})
        else:
            protocol.send({"id": request.get("id"), "error": f"unknown op {request.get('op')!r}"})


def _trace(worker, request: dict, memory_mb: int) -> dict:
    """One trace, in the fresh process `run_contained` made for it: its address space capped once jax's
    backend started, before any user code runs."""
    return worker.trace(request, containment.outer_pid(), lambda: containment.limit_memory(memory_mb))


def _entry(worker, request: dict, entry: dict, memory_mb: int, private) -> dict:
    """One entry point, in a contained process of its own: its time and output limited, what it
    reached sent as it went (launches.py)."""
    seconds = float(request.get("entry_timeout") or 60)
    output_limit = int(request.get("output_limit") or 4 << 20)
    outcome = containment.run_contained(
        lambda: launches.run_entry(tracing, containment, worker, request, entry,
                                   lambda: containment.limit_memory(memory_mb)),
        private, seconds=seconds + max(launches.GRACE_SECONDS, seconds / 4), output_limit=output_limit)
    return launches.entry_result(entry, outcome, seconds, output_limit)


def _exit_words(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    return f"signal {-code}" if code < 0 else f"exit status {code}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
