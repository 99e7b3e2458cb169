"""Trace workers: one warm `runner.py` process per analysed interpreter, reused across traces.

Importing jax costs about a second; a warm worker pays it once and never runs user code itself:
each trace runs in a fresh fork of it, in a PID namespace of its own (containment.py `run_contained`),
so it starts from a clean JAX state and nothing it started outlives it. A worker is replaced when
it died, timed out or was cancelled. Results come as lines on a pipe read until the answer, never
until end of input, which a process that escaped could hold off forever.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from ..checked_values import trace_idle_seconds, trace_memory_mb, trace_workers
from ..python_path import resolve_python
from .containment import kill_descendants

log = logging.getLogger(__name__)

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY_LIMIT_MB = trace_memory_mb()  # PALLAS_LSP_TRACE_MEMORY_MB, checked (a bad value is said at start)
_OUTPUT_LIMIT = 64 * 1024


class TraceError(Exception):
    """The trace could not produce a JAX answer (worker died, timed out, cancelled, no jax)."""

    kind = "error"


class TraceTimeout(TraceError):
    kind = "timeout"


class TraceCancelled(TraceError):
    kind = "cancelled"


class WorkerDied(TraceError):
    kind = "crashed"


class Worker:
    """One runner process. Not thread-safe for requests: `WorkerPool` serialises them."""

    def __init__(self, python: str, cwd: str | None = None, memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB):
        self.python = os.path.abspath(python) if os.sep in python else python  # the worker runs in `cwd`
        self.cwd = cwd
        self.memory_limit_mb = memory_limit_mb
        self.process: subprocess.Popen | None = None
        self.hello: dict | None = None
        self.started_at = 0.0
        self.start_seconds = 0.0
        self.traces = 0
        self._lines: queue.Queue = queue.Queue()
        self._output: collections.deque[str] = collections.deque()
        self._output_size = 0
        self._output_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._cancelled = False

    # ---- life cycle ---------------------------------------------------------------------------

    def start(self, deadline: float) -> dict:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("PYTHONSTARTUP", None)
        # A warm worker must not sit on 75% of the GPU's memory (jax's default) while the user's own
        # programs need it.
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        started = time.perf_counter()
        try:
            self.process = subprocess.Popen(
                [self.python, "-u", RUNNER, "--memory-limit-mb", str(self.memory_limit_mb)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.cwd or None, env=env, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise TraceError(f"cannot start {self.python}: {exc}") from None
        self.started_at = time.time()
        threading.Thread(target=self._read_stdout, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True).start()
        hello = self._next_message(deadline, None)
        self.start_seconds = time.perf_counter() - started
        if "error" in hello:
            self.kill()
            raise TraceError(f"{self.python} cannot run the trace: {hello['error']}")
        self.hello = hello
        log.info("trace worker %s started: jax %s on %s (%.2fs)", hello.get("pid"), hello.get("jax"),
                 hello.get("backend"), self.start_seconds)
        return hello

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stale(self) -> str | None:
        """Why this worker must not serve another trace, or None. (A changed file needs no new worker:
        no trace's imports outlive it.)"""
        return None if self.alive() else "it exited"

    def kill(self) -> None:
        """Kill the worker and everything the traced code started: the worker's whole tree (it is a
        subreaper, and each trace's namespace dies with its keeper), then its process group and session."""
        process = self.process
        if process is None:
            return
        pid = process.pid
        try:  # stopped, it still adopts the orphans below it, but answers nothing meanwhile
            os.kill(pid, getattr(signal, "SIGSTOP", signal.SIGTERM))
        except OSError:
            pass
        kill_descendants(pid)
        killpg = getattr(os, "killpg", None)  # POSIX; elsewhere only the worker itself is killed
        for target in [pid, *_session_members(pid)]:
            try:
                if killpg is not None:
                    killpg(target, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(target, getattr(signal, "SIGKILL", signal.SIGTERM))
            except OSError:
                pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.error("trace worker %s did not die", pid)
        try:  # stdout and stderr are closed by their reader threads at end of input, never here: a
            if process.stdin is not None:  # process that escaped us could hold them open forever
                process.stdin.close()
        except OSError:
            pass

    def cancel(self) -> None:
        self._cancelled = True
        self.kill()

    def close(self) -> None:
        if self.alive():
            try:
                assert self.process is not None and self.process.stdin is not None
                self.process.stdin.write(b'{"op": "exit"}\n')
                self.process.stdin.flush()
                self.process.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired, AssertionError):
                pass
        self.kill()

    def kill_strays(self) -> int:
        """Kill every process the traced code left behind (the worker itself stays); how many. Between
        traces the worker has no children, so any is a stray."""
        if self.process is None:
            return 0
        return kill_descendants(self.process.pid)

    # ---- requests -----------------------------------------------------------------------------

    def request(self, message: dict, deadline: float) -> dict:
        assert self.process is not None and self.process.stdin is not None
        message = dict(message, id=next(self._ids))
        with self._output_lock:
            self._output.clear()
            self._output_size = 0
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except OSError as exc:
            raise self._died(f"the worker's input closed ({exc})") from None
        while True:
            answer = self._next_message(deadline, message["id"])
            if answer.get("id") == message["id"]:
                self.traces += 1
                return answer

    def output(self) -> str:
        """What the traced code printed (stdout and stderr) during the last request."""
        with self._output_lock:
            return "".join(self._output)

    def _next_message(self, deadline: float, request_id) -> dict:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise TraceTimeout("timed out")
            try:
                line = self._lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                if not self.alive() and self._lines.empty():
                    time.sleep(0.05)  # let the reader deliver a last line
                    if self._lines.empty():
                        raise self._died("the worker exited") from None
                continue
            if line is None:
                raise self._died("the worker exited") from None
            try:
                return json.loads(line)
            except ValueError:
                log.warning("trace worker: not a protocol line: %r", line[:200])

    def _died(self, what: str) -> TraceError:
        if self._cancelled:
            return TraceCancelled("cancelled")
        code = None
        if self.process is not None:
            try:
                code = self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        time.sleep(0.05)
        return WorkerDied(_describe_exit(code))

    # The readers use the raw descriptors: a thread blocked inside a buffered file holds its lock,
    # and closing that file from another thread (or at interpreter exit) would then block or abort.

    def _read_stdout(self, stream) -> None:
        pending = b""
        for chunk in _chunks(stream):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._lines.put(line.decode("utf-8", "replace"))
        self._lines.put(None)

    def _read_stderr(self, stream) -> None:
        for chunk in _chunks(stream):
            text = chunk.decode("utf-8", "replace")
            with self._output_lock:
                self._output.append(text)
                self._output_size += len(text)
                while self._output_size > _OUTPUT_LIMIT and len(self._output) > 1:
                    self._output_size -= len(self._output.popleft())


def _chunks(stream):
    """What a pipe delivers until end of input, then the pipe is closed."""
    try:
        fd = stream.fileno()
        while chunk := os.read(fd, 65536):
            yield chunk
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the trace worker stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the traced code crashed the Python interpreter ({name})"
    return f"the traced code ended the Python interpreter (exit status {code})"


def _session_members(sid: int) -> list[int]:
    """Processes whose session is `sid` (Linux /proc; elsewhere only the process group is killed)."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        # after "pid (comm)": state ppid pgrp session
        if len(fields) > 3 and fields[3] == str(sid) and fields[0] != "Z":
            members.append(int(entry))
    return members


class WorkerPool:
    """Warm workers keyed by (interpreter, workspace root); one trace at a time per worker.

    Each holds jax imported (~190 MB): at most `max_warm` stay (the least recently used goes first),
    and one that waited `idle_seconds` for its next trace exits."""

    def __init__(self, memory_limit_mb: int | None = None, max_warm: int | None = None,
                 idle_seconds: float | None = None):
        self.memory_limit_mb = DEFAULT_MEMORY_LIMIT_MB if memory_limit_mb is None else memory_limit_mb
        self.max_warm = trace_workers() if max_warm is None else max_warm
        self.idle_seconds = trace_idle_seconds() if idle_seconds is None else idle_seconds
        self._workers: dict[tuple[str, str | None], Worker] = {}
        self._locks: dict[tuple[str, str | None], threading.Lock] = {}
        self._last_used: dict[tuple[str, str | None], float] = {}
        self._guard = threading.Lock()
        self._wake = threading.Condition(self._guard)
        self._reaper: threading.Thread | None = None
        self._closed = False

    def warm(self) -> int:
        """How many workers are kept warm now."""
        with self._guard:
            return sum(1 for worker in self._workers.values() if worker.alive())

    def _used(self, key) -> None:
        """After a trace: its worker is the most recently used; close the least recently used ones past
        the cap (not one tracing now), and let the reaper time the idle ones."""
        with self._guard:
            self._last_used[key] = time.monotonic()
            idle = sorted((k for k in self._workers if k != key and not self._locks[k].locked()),
                          key=lambda k: self._last_used.get(k, 0.0))
            surplus = [self._workers.pop(k) for k in idle[:max(0, len(self._workers) - self.max_warm)]]
            if self._reaper is None and self.idle_seconds > 0:
                self._reaper = threading.Thread(target=self._reap_idle, name="pallas-trace-reaper", daemon=True)
                self._reaper.start()
            self._wake.notify_all()
        for worker in surplus:
            log.info("closing a warm trace worker (at most %d stay warm)", self.max_warm)
            worker.close()

    def _reap_idle(self) -> None:
        while True:
            with self._guard:
                if self._closed:
                    return
                now = time.monotonic()
                expired = [k for k in self._workers if not self._locks[k].locked()
                           and now - self._last_used.get(k, now) >= self.idle_seconds]
                idle = [self._workers.pop(k) for k in expired]
                if not idle:
                    waits = [self._last_used.get(k, now) + self.idle_seconds - now for k in self._workers]
                    self._wake.wait(timeout=max(0.05, min(waits)) if waits else None)
                    continue
            for worker in idle:
                log.info("closing a trace worker idle for %s s", self.idle_seconds)
                worker.close()

    def trace(self, python: str, root: str | None, request: dict, timeout: float = DEFAULT_TIMEOUT,
              on_worker=None) -> dict:
        """Run one trace request; returns the runner's result plus `worker` and `output` details.

        `on_worker(worker)` is called once the worker is known, so a caller can cancel it.
        """
        return self.request(python, root, dict(request, op="trace"), timeout, on_worker)

    def request(self, python: str, root: str | None, request: dict, timeout: float = DEFAULT_TIMEOUT,
                on_worker=None) -> dict:
        """Run one request of the runner's protocol (`op`: "trace", "entries") on the warm worker of
        (python, root), one at a time; its result, with the interpreter's and the worker's details."""
        key = (python, root)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        deadline = time.monotonic() + timeout
        try:
            return self._request_locked(key, lock, python, root, request, deadline, on_worker)
        finally:
            self._used(key)

    def _request_locked(self, key, lock, python, root, request, deadline, on_worker) -> dict:
        with lock:
            worker = self._workers.get(key)
            restart_reason = None
            if worker is not None:
                restart_reason = worker.stale()
                if restart_reason is not None:
                    log.info("restarting the trace worker: %s", restart_reason)
                    worker.close()
                    worker = None
            cold = worker is None
            if worker is None:
                worker = Worker(python, cwd=root, memory_limit_mb=self.memory_limit_mb)
                self._workers[key] = worker
            if on_worker is not None:
                on_worker(worker)
            started = time.perf_counter()
            try:
                if cold:
                    worker.start(deadline)
                answer = worker.request(request, deadline)
            except TraceError as exc:
                self._workers.pop(key, None)
                worker.kill()
                exc.output = worker.output()  # type: ignore[attr-defined]
                raise
            strays = worker.kill_strays() + int(answer.get("killed_leftover_processes") or 0)
            if "error" in answer:
                raise TraceError(f"trace worker error: {answer['error']}")
            if "crashed" in answer:  # the trace's own process died; the warm worker is as clean as before
                crash = TraceCancelled("cancelled") if worker._cancelled else WorkerDied(_describe_exit(answer["crashed"]))
                crash.output = worker.output()  # type: ignore[attr-defined]
                raise crash
            result = answer["result"]
            hello = worker.hello or {}
            result["jaxlib"] = hello.get("jaxlib")
            result["python"] = hello.get("python")
            result["executable"] = hello.get("executable")
            result["gpu"] = hello.get("gpu")
            result["devices"] = hello.get("devices")
            result["worker"] = dict(result.get("worker") or {}, warm_pid=hello.get("pid"), cold=cold,
                                    restarted_because=restart_reason,
                                    start_seconds=round(worker.start_seconds, 4) if cold else 0.0,
                                    jax_import_seconds=hello.get("import_seconds") if cold else 0.0,
                                    killed_leftover_processes=strays)
            result.setdefault("jax", hello.get("jax"))
            result.setdefault("timings", {})["wall"] = round(time.perf_counter() - started, 6)
            result["output"] = worker.output()
            return result

    def cancel_all(self) -> None:
        with self._guard:
            workers = list(self._workers.values())
        for worker in workers:
            worker.cancel()

    def shutdown(self) -> None:
        with self._guard:
            workers = list(self._workers.values())
            self._workers.clear()
            self._closed = True
            self._wake.notify_all()
        for worker in workers:
            worker.close()


def choose_interpreter(explicit: str | None) -> str:
    """Like the analysis (`--python`, else `$VIRTUAL_ENV`, else this interpreter), without importing jedi:
    the trace command also runs where only jax is installed (a GPU machine)."""
    return explicit or os.environ.get("VIRTUAL_ENV") or sys.executable


def interpreter_executable(path: str) -> str:
    """An interpreter path from an interpreter or a virtual-environment folder (as `--python` takes)."""
    path = resolve_python(path)
    if os.path.isdir(path):
        for candidate in ("bin/python", "bin/python3", "Scripts/python.exe"):
            if os.path.exists(os.path.join(path, candidate)):
                return os.path.join(path, candidate)
        raise TraceError(f"no Python interpreter in {path}")
    if not os.path.exists(path):
        raise TraceError(f"Python interpreter not found: {path}")
    return path
