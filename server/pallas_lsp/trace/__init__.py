"""Run a kernel through JAX's real tracing, Mosaic GPU resource estimator and lowering.

The JAX side lives in `runner.py` (with `tracing.py` and `containment.py`, which it loads), a
separate process under the analysed project's interpreter; this package (no jax) picks the target
and its arguments, manages the warm workers and renders the answer. `trace_target` is what the
CLI and the language server call.
"""

from __future__ import annotations

import os

from ..source_text import read_source
from .targets import ArgSpecError, ArgsNotFound, TargetNotFound, resolve_args, suggest_args
from .worker import DEFAULT_TIMEOUT, TraceError, WorkerPool

PLATFORMS = ("cuda", "tpu", "host")


def failure(path: str, function: str, platform: str, kind: str, message: str, stage: str, **extra) -> dict:
    """A result that JAX never saw (bad arguments, no worker, timeout, crash), shaped like a JAX one."""
    result = {"ok": False, "stage": stage, "path": path, "function": function, "platform": platform,
              "args": [], "kernels": [], "compiled": False, "timings": {},
              "error": {"type": kind, "message": message, "stage": stage, "locations": []}}
    result.update(extra)
    return result


def trace_target(pool: WorkerPool, python: str, root: str | None, path: str, function: str, *,
                 args: str | None = None, platform: str = "cuda", compile: bool | None = None,
                 timeout: float = DEFAULT_TIMEOUT, source: str | None = None, on_worker=None,
                 extra_roots: list[str] = (), infer_args=None) -> dict:
    """Trace `path::function`; always returns a result dict (see docs/trace.md), never raises for
    problems of the traced code or its arguments. `extra_roots`: folders on `sys.path` after `root`.
    `infer_args()`: arguments from the analysis (`TracePlan.infer_args`), asked where the comment,
    the annotations and the file's own calls give none."""
    path = os.path.realpath(path)
    if platform not in PLATFORMS:
        return failure(path, function, platform, "UsageError",
                       f"unknown platform {platform!r}: use one of {', '.join(PLATFORMS)}", "args")
    try:
        if source is None:
            source = read_source(path)  # as Python will import it (BOM, coding cookie)
        try:
            found = resolve_args(source, function, args)
        except ArgsNotFound:
            found = infer_args() if infer_args is not None else None
            if found is None:
                raise
    except (ArgSpecError, ArgsNotFound, TargetNotFound, OSError, SyntaxError, UnicodeDecodeError) as exc:
        kind = {ArgsNotFound: "ArgsNotFound", TargetNotFound: "TargetNotFound"}.get(type(exc), "UsageError")
        extra = {"suggested_args": suggest_args(source, function)} if isinstance(exc, ArgsNotFound) and source else {}
        return failure(path, function, platform, kind, str(exc), "args", **extra)
    request = {"path": path, "function": function, "args": [s.to_json() for s in found.specs],
               "platform": platform, "roots": [r for r in (root, *extra_roots) if r], "compile": compile}
    try:
        result = pool.trace(python, root, request, timeout=timeout, on_worker=on_worker)
    except TraceError as exc:
        message = str(exc)
        if exc.kind == "timeout":
            message = (f"the trace did not finish within {timeout:g} s; the worker was killed "
                       "(raise the timeout setting if the kernel is just slow to lower)")
        elif exc.kind == "cancelled":
            message = "the trace was cancelled; the worker was killed"
        kind = {"timeout": "TraceTimeout", "cancelled": "TraceCancelled", "crashed": "WorkerCrashed"}.get(
            exc.kind, "TraceError")
        return failure(path, function, platform, kind, message, "worker",
                       args=[str(s) for s in found.specs], args_source=found.source,
                       output=getattr(exc, "output", ""))
    result["args"] = [str(s) for s in found.specs]
    result["args_source"] = found.source
    return result
