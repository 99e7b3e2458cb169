"""Traced code that crashes, hangs, exits, prints, forks, kills its supervisor, reads stdin, allocates
without bound or changes JAX for everyone: each trace ends with a clear answer, starts from a clean
JAX state, the pool keeps serving, and no process is left behind."""

import json
import os
import time

import pytest

from conftest import FIXTURES, jax_python
from pallas_lsp.trace import trace_target
from pallas_lsp.trace.containment import NAMESPACES_ENV, _descendants
from pallas_lsp.trace.worker import WorkerPool, _session_members

pytestmark = pytest.mark.jax

MISBEHAVING = FIXTURES / "trace" / "misbehaving.py"
# With PID namespaces (as here, root) and without (the subreapers a host without them relies on).
CONTAINMENTS = pytest.mark.parametrize("namespaces", ["1", "0"], ids=["pid-namespace", "subreapers-only"])


def run(pool, function, timeout=120.0, path=MISBEHAVING, platform="host"):
    workers = []
    result = trace_target(pool, jax_python(), str(path.parent), str(path), function,
                          platform=platform, timeout=timeout, on_worker=workers.append)
    return result, workers[0]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def pool():
    pool = WorkerPool(memory_limit_mb=512)
    yield pool
    pool.shutdown()


def assert_pool_still_serves(pool):
    result, worker = run(pool, "reads_stdin")
    assert result["ok"], result["error"]
    return worker


def assert_nothing_left(worker):
    pid = worker.process.pid
    deadline = time.time() + 5
    while time.time() < deadline and (alive(pid) or _session_members(pid)):
        time.sleep(0.05)
    assert not alive(pid) and _session_members(pid) == []


def test_prints_do_not_corrupt_the_protocol_and_come_back_as_output(pool):
    result, _ = run(pool, "prints")
    assert result["ok"], result["error"]
    assert result["output"].splitlines() == ["printed while importing", "hello from the traced code",
                                             "raw write to fd 1", "to stderr"]


def test_reading_stdin_reads_nothing_and_does_not_eat_requests(pool):
    result, _ = run(pool, "reads_stdin")
    assert result["ok"] and result["compiled"]


def test_sys_exit_is_a_trace_failure_and_the_worker_survives(pool):
    result, worker = run(pool, "exits")
    assert (result["ok"], result["stage"]) == (False, "trace")
    assert (result["error"]["type"], result["error"]["message"]) == ("SystemExit", "the traced code called sys.exit(3)")
    assert [loc["line"] for loc in result["error"]["locations"]] == [24]
    assert assert_pool_still_serves(pool) is worker  # same warm worker


@pytest.mark.parametrize("function, message", [
    ("hard_exits", "the traced code ended the Python interpreter (exit status 7)"),
    ("crashes", "the traced code crashed the Python interpreter (SIGSEGV)"),
])
def test_a_dead_interpreter_is_reported_and_the_warm_worker_keeps_serving(pool, function, message):
    result, worker = run(pool, function)
    assert (result["ok"], result["stage"], result["error"]["type"]) == (False, "worker", "WorkerCrashed")
    assert result["error"]["message"] == message
    assert "printed while importing" in result["output"]
    assert worker.alive() and _descendants(worker.process.pid) == []  # only the trace's own process died
    assert assert_pool_still_serves(pool) is worker


def test_a_hang_times_out_and_the_worker_is_killed(pool):
    assert_pool_still_serves(pool)  # warm, so the short timeout is all the hang's
    start = time.monotonic()
    result, worker = run(pool, "hangs", timeout=3)
    assert time.monotonic() - start < 15
    assert (result["ok"], result["error"]["type"]) == (False, "TraceTimeout")
    assert result["error"]["message"] == ("the trace did not finish within 3 s; the worker was killed "
                                          "(raise the timeout setting if the kernel is just slow to lower)")
    assert_nothing_left(worker)
    assert_pool_still_serves(pool)


def test_forked_processes_are_killed_after_the_trace(pool):
    result, worker = run(pool, "forks")
    assert result["ok"], result["error"]
    assert result["worker"]["killed_leftover_processes"] == 2  # the Popen child and the fork
    assert _descendants(worker.process.pid) == []  # between traces the warm worker has no child
    pool.shutdown()
    assert_nothing_left(worker)


def escaped_alive(path) -> list[int]:
    """Live processes (host pids) running under one of the tokens the traced code wrote to `path`."""
    tokens = [token.encode() for token in path.read_text().split()]
    assert tokens, "the traced code started no grandchild"
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                arguments = f.read().split(b"\0")
        except OSError:
            continue
        if any(token in arguments for token in tokens) and alive(int(entry)):
            found.append(int(entry))
    return found


def test_a_grandchild_that_left_the_session_is_killed_and_the_pool_keeps_serving(pool, tmp_path, monkeypatch):
    tokens = tmp_path / "escaped"
    tokens.touch()
    monkeypatch.setenv("PALLAS_TEST_ESCAPED_TOKENS", str(tokens))
    result, worker = run(pool, "escapes")
    assert result["ok"], result["error"]
    assert result["worker"]["killed_leftover_processes"] == 1
    assert escaped_alive(tokens) == []
    assert assert_pool_still_serves(pool) is worker
    pool.shutdown()
    assert_nothing_left(worker)


def test_the_cli_ends_after_a_trace_whose_grandchild_left_the_session(tmp_path):
    import subprocess
    import sys

    tokens = tmp_path / "escaped"
    tokens.touch()
    done = subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", f"{MISBEHAVING}::escapes", "--platform", "host",
                           "--python", jax_python()], capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PALLAS_TEST_ESCAPED_TOKENS": str(tokens)})
    assert done.returncode == 0, done.stderr
    assert "escapes" in done.stdout
    assert escaped_alive(tokens) == []


@CONTAINMENTS
def test_a_grandchild_whose_supervisor_was_killed_is_gone_after_the_trace(pool, tmp_path, monkeypatch, namespaces):
    tokens = tmp_path / "escaped"
    tokens.touch()
    monkeypatch.setenv("PALLAS_TEST_ESCAPED_TOKENS", str(tokens))
    monkeypatch.setenv(NAMESPACES_ENV, namespaces)
    result, worker = run(pool, "kills_its_supervisor")
    assert result["ok"], result["error"]
    assert escaped_alive(tokens) == []
    assert result["worker"]["killed_leftover_processes"] == 1
    assert not alive(result["worker"]["pid"])  # the process that ran the trace
    assert assert_pool_still_serves(pool) is worker
    pool.shutdown()
    assert_nothing_left(worker)


@CONTAINMENTS
def test_the_cli_leaves_nothing_when_the_traced_code_kills_its_supervisor(tmp_path, namespaces):
    import subprocess
    import sys

    tokens = tmp_path / "escaped"
    tokens.touch()
    done = subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", f"{MISBEHAVING}::kills_its_supervisor",
                           "--platform", "host", "--format", "json", "--python", jax_python()],
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PALLAS_TEST_ESCAPED_TOKENS": str(tokens), NAMESPACES_ENV: namespaces})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["worker"]["killed_leftover_processes"] == 1
    assert escaped_alive(tokens) == []


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


CLEAN_STATE = FIXTURES / "trace" / "clean_state.py"
KERNELS = FIXTURES / "trace" / "kernels.py"


def what_jax_said(result: dict) -> dict:
    return {key: result[key] for key in ("ok", "stage", "error", "kernels", "compiled", "args")}


def test_each_trace_starts_from_a_clean_jax_state(pool):
    """polluting.py sets jax_enable_x64, replaces pl.get_global and starts a thread that never ends."""
    alone_pool = WorkerPool(memory_limit_mb=512)
    try:
        alone = [what_jax_said(run(alone_pool, "default_dtypes", path=CLEAN_STATE)[0]),
                 what_jax_said(run(alone_pool, "add_one", path=KERNELS, platform="cuda")[0])]
    finally:
        alone_pool.shutdown()
    assert [r["ok"] for r in alone] == [True, True]

    assert_pool_still_serves(pool)
    warm = pool._workers[next(iter(pool._workers))]
    threads_before = threads(warm.process.pid)
    polluted, worker = run(pool, "pollutes", path=FIXTURES / "trace" / "polluting.py")
    assert polluted["ok"], polluted["error"]
    assert worker is warm
    assert not alive(polluted["worker"]["pid"])  # the process that ran it, and its spinning thread, are gone
    assert threads(warm.process.pid) == threads_before
    after = [what_jax_said(run(pool, "default_dtypes", path=CLEAN_STATE)[0]),
             what_jax_said(run(pool, "add_one", path=KERNELS, platform="cuda")[0])]
    assert after == alone


def test_unbounded_allocation_hits_the_memory_limit(pool):
    result, worker = run(pool, "allocates")
    assert (result["ok"], result["error"]["type"], result["stage"]) == (False, "MemoryError", "trace")
    assert [loc["line"] for loc in result["error"]["locations"]] == [54]
    assert assert_pool_still_serves(pool) is worker


def test_cancel_kills_the_work(pool):
    import threading

    assert_pool_still_serves(pool)
    workers = []
    outcome = {}

    def go():
        outcome["result"] = trace_target(pool, jax_python(), str(MISBEHAVING.parent), str(MISBEHAVING), "hangs",
                                         platform="host", on_worker=workers.append)

    thread = threading.Thread(target=go)
    thread.start()
    while not workers:
        time.sleep(0.01)
    time.sleep(0.5)
    workers[0].cancel()
    thread.join(10)
    assert not thread.is_alive()
    assert outcome["result"]["error"]["type"] == "TraceCancelled"
    assert_nothing_left(workers[0])
    assert os.getpid()  # and this process is fine


PARENT = """
import json, sys, time
from pallas_lsp.trace.worker import Worker
worker = Worker({python!r}, cwd={folder!r})
worker.start(time.monotonic() + 120)
print(worker.process.pid, flush=True)
request = {{"id": 1, "op": "trace", "path": {path!r}, "function": "hangs",
           "args": [{{"dtype": "float32", "shape": [8]}}], "platform": "host"}}
worker.process.stdin.write((json.dumps(request) + "\\n").encode())
worker.process.stdin.flush()
time.sleep(3600)
"""


def test_a_killed_server_leaves_no_worker_behind():
    import subprocess
    import sys

    code = PARENT.format(python=jax_python(), folder=str(MISBEHAVING.parent), path=str(MISBEHAVING))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        time.sleep(1)
        assert alive(worker)  # hanging in the traced code
    finally:
        parent.kill()  # SIGKILL: no atexit, no shutdown request
        parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline and alive(worker):
        time.sleep(0.1)
    assert not alive(worker)
