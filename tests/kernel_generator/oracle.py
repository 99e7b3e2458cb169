"""Ask real JAX about many generated kernels in one process (jax imported once).

Usage (the jax venv; standard library and jax only):
    .venvs/jax/bin/python tests/kernel_generator/oracle.py [--timeout S] [--compiled] KERNEL.py [KERNEL.py ...]

Each kernel is loaded as a fresh module and run exactly like an agreement fixture
(`tests/jax_truth.py`'s `run_fixture`: Mosaic GPU cross-lowering, Triton under an abstract H200,
the interpreter on the CPU; with `--compiled`, a kernel its target() says is interpreted is
cross-lowered for CUDA instead: one a fix made compiled). Prints one JSON line per kernel as soon as it is done,
`{"path": ..., **jax_truth result}`, so a crash or a kill loses only the kernel it was on. A kernel
that runs longer than the timeout gets `"exc_type": "KernelTimeout"`. A failure inside a CPU callback
(`INTERNAL: CpuCallback error`) also gets the callback's own exception as `callback_exc_type` and
`callback_message`.
"""

from __future__ import annotations

import json
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import jax_truth  # noqa: E402


class KernelTimeout(BaseException):
    """Not an Exception: run_fixture must not take it for JAX's verdict."""


def _alarm(signum, frame):
    raise KernelTimeout()


_last_error: list[str] = []
_first_line = jax_truth._first_line


def _remember(exc: BaseException) -> str:
    _last_error[:] = [str(exc)]
    return _first_line(exc)


jax_truth._first_line = _remember  # run_fixture keeps only the first line; a callback's error is at the end


def _callback_error(message: str) -> tuple[str, str] | None:
    """(type, message) of the exception a CPU callback raised: JAX's GPU interpreter runs clusters in one,
    and reports what failed there only as the last line of an `INTERNAL: CpuCallback error`."""
    for line in reversed(message.splitlines()):
        name, sep, rest = line.partition(": ")
        if sep and name.isidentifier() and not line.startswith(" "):
            return name, rest
    return None


def main(argv: list[str]) -> int:
    timeout = 60
    if argv[:1] == ["--timeout"]:
        timeout, argv = int(argv[1]), argv[2:]
    compiled = argv[:1] == ["--compiled"]
    argv = argv[1:] if compiled else argv
    signal.signal(signal.SIGALRM, _alarm)
    with jax_truth._stdout_to_stderr() as out:
        import jax
        for n, path in enumerate(argv):
            signal.alarm(timeout)
            try:
                result = jax_truth.run_fixture(path, compiled=compiled)
            except KernelTimeout:
                result = {"ok": False, "exc_type": "KernelTimeout", "message": f"over {timeout} s",
                          "mode": None, "locations": []}
                jax_truth._reset_interpret_mode()
            finally:
                signal.alarm(0)
            if (result.get("message") or "").startswith("INTERNAL: CpuCallback error") and _last_error:
                inner = _callback_error(_last_error[0])
                if inner:
                    result["callback_exc_type"], result["callback_message"] = inner
            out.write(json.dumps({"path": path, **result}) + "\n")
            out.flush()
            if n % 50 == 49:
                jax.clear_caches()  # hundreds of kernels: keep the jit caches from growing
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
