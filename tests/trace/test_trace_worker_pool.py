"""Warm trace workers (jax imported, ~190 MB each) are capped and let go when idle: tracing in four
folders leaves at most two warm, and an idle one exits. The real server over stdio, real JAX."""

from __future__ import annotations

import os
import time

from conftest import jax_python
from lsp_wire import ANSWER_SECONDS, WireServer

KERNEL = "import jax.numpy as jnp\n\n\ndef add_one(x):\n    return x + 1\n"


def warm_workers(server_pid: int) -> list[int]:
    """The server's trace workers (`runner.py` processes it started) alive now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == server_pid and fields[0] != "Z" and any(a.endswith(b"runner.py") for a in arguments):
            found.append(int(entry))
    return found


def until(predicate, what: str):
    """Wait for a state of the machine (polled: processes exiting send no event), within a generous bound."""
    deadline = time.monotonic() + ANSWER_SECONDS
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def trace_in_folders(tmp_path, count: int, **env) -> tuple[WireServer, list]:
    folders = [tmp_path / f"project{n}" for n in range(count)]
    for folder in folders:
        folder.mkdir()
        (folder / "k.py").write_text(KERNEL)
    server = WireServer(env={**os.environ, "PALLAS_LSP_TRACE_MEMORY_MB": "0", **env}, cwd=tmp_path)
    answer = server.request(0, "initialize", {
        "processId": None, "rootUri": None, "capabilities": {},
        "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
        "initializationOptions": {"debounceMs": 0, "python": jax_python()}})
    assert "result" in answer
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return server, folders


def trace(server: WireServer, number: int, folder) -> None:
    answer = server.request(number, "workspace/executeCommand", {"command": "pallas.trace", "arguments": [
        (folder / "k.py").as_uri(), "add_one", {"args": "f32[8]", "platform": "host"}]})
    assert answer is not None and "error" not in answer, answer
    assert answer["result"]["ok"], answer["result"]


def test_four_folders_traced_leave_at_most_two_warm_workers(tmp_path):
    server, folders = trace_in_folders(tmp_path, 4)
    try:
        for number, folder in enumerate(folders, start=1):
            trace(server, number, folder)
            until(lambda: len(warm_workers(server.process.pid)) <= 2, "more than two warm trace workers")
        assert len(warm_workers(server.process.pid)) == 2
    finally:
        server.kill()


def test_an_idle_worker_exits(tmp_path):
    server, (folder,) = trace_in_folders(tmp_path, 1, PALLAS_LSP_TRACE_IDLE_SECONDS="0.5")
    try:
        trace(server, 1, folder)
        until(lambda: not warm_workers(server.process.pid), "the idle trace worker is still running")
        trace(server, 2, folder)  # a new one starts for the next trace
    finally:
        server.kill()
