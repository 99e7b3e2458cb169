"""A small JSON-RPC client for driving `pallas-lsp serve` over stdio, and the statistics the benchmarks report.

Standard library only, so what is timed is the server and the pipe, nothing of a client framework.
Every received message is stamped with `time.perf_counter()` by the reader thread as it arrives.
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JAX_PYTHON = os.environ.get("PALLAS_LSP_JAX_PYTHON", str(REPO / ".venvs" / "jax" / "bin" / "python"))


def pallas_command(subcommand: str, source: str | None = None) -> tuple[list[str], dict]:
    """How to run `pallas-lsp <subcommand>`: this interpreter, `-m pallas_lsp`; `source` runs another
    checkout's `server/`."""
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.path.join(source, "server") + os.pathsep + env.get("PYTHONPATH", "")
    return [sys.executable, "-m", "pallas_lsp", subcommand], env


class LspClient:
    def __init__(self, source: str | None = None, env: dict | None = None):
        """`env`: variables set for the server on top of this process's environment."""
        command, server_env = pallas_command("serve", source)
        env = {**server_env, **(env or {})}
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, bufsize=0)
        self.pid = self.process.pid
        self.messages: queue.Queue = queue.Queue()
        self._next_id = 0
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ---- wire ---------------------------------------------------------------------------------

    def _send(self, message: dict) -> float:
        body = json.dumps(message).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._lock:
            sent = time.perf_counter()
            self.process.stdin.write(data)
            self.process.stdin.flush()
        return sent

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put((time.perf_counter(), None))
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = b""
            while len(body) < (length or 0):
                chunk = stream.read(length - len(body))
                if not chunk:
                    self.messages.put((time.perf_counter(), None))
                    return
                body += chunk
            arrived = time.perf_counter()
            message = json.loads(body)
            if "method" in message and "id" in message:  # a request from the server: answer it
                result = [None] * len(message["params"]["items"]) if message["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self.messages.put((arrived, message))

    def notify(self, method: str, params: dict) -> float:
        """Send a notification; returns when it was written (perf_counter)."""
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict, timeout: float = 120.0) -> dict:
        self._next_id += 1
        request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        _, message = self.wait(lambda m: m.get("id") == request_id and "method" not in m, timeout)
        if "error" in message:
            raise RuntimeError(f"{method} failed: {message['error']}")
        return message.get("result")

    def wait(self, predicate, timeout: float = 120.0) -> tuple[float, dict]:
        """The first message (and its arrival time) that satisfies `predicate`; others are dropped."""
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError("no matching message from the server")
            try:
                arrived, message = self.messages.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError("no matching message from the server") from None
            if message is None:
                raise RuntimeError(f"the server exited (status {self.process.poll()})")
            if predicate(message):
                return arrived, message

    def wait_published(self, uri: str, version: int | None, timeout: float = 300.0) -> tuple[float, list]:
        arrived, message = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)
        return arrived, message["params"]["diagnostics"]

    # ---- LSP ----------------------------------------------------------------------------------

    def initialize(self, root: str, python: str = JAX_PYTHON, debounce_ms: int = 0, options: dict | None = None,
                   capabilities: dict | None = None) -> dict:
        """Initialize without pull-diagnostics support, so the server pushes (publishDiagnostics);
        `options`: more initializationOptions, `capabilities`: more client capabilities."""
        result = self.request("initialize", {
            "processId": os.getpid(),
            "rootUri": Path(root).as_uri(),
            "workspaceFolders": [{"uri": Path(root).as_uri(), "name": Path(root).name}],
            "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}, **(capabilities or {})},
            "initializationOptions": {"python": python, "debounceMs": debounce_ms, **(options or {})},
        })
        self.notify("initialized", {})
        return result

    def open(self, path: str | Path, text: str | None = None, version: int = 1) -> tuple[str, float]:
        uri = Path(path).as_uri()
        text = Path(path).read_text(encoding="utf-8") if text is None else text
        sent = self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})
        return uri, sent

    def change(self, uri: str, version: int, line: int, start: int, end: int, text: str,
               end_line: int | None = None) -> float:
        """An incremental edit on one line, or up to `end_line` (as editors send while typing)."""
        return self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": start},
                                          "end": {"line": line if end_line is None else end_line, "character": end}},
                                "text": text}]})

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.process.wait(timeout=30)
        except Exception:
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> "LspClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def summary(samples: list[float], unit_scale: float = 1000.0) -> dict:
    """Median, p95, min, max and quartiles of seconds, in milliseconds (or seconds with unit_scale=1)."""
    values = sorted(s * unit_scale for s in samples)
    n = len(values)

    def percentile(p: float) -> float:
        if n == 1:
            return values[0]
        k = (n - 1) * p
        low = int(k)
        high = min(low + 1, n - 1)
        return values[low] + (values[high] - values[low]) * (k - low)

    return {"n": n, "median": statistics.median(values), "p95": percentile(0.95), "min": values[0],
            "max": values[-1], "q1": percentile(0.25), "q3": percentile(0.75)}


def corpus_files(jax_python: str = JAX_PYTHON) -> list[Path]:
    """The Pallas files shipped in the installed jax: jax/experimental/pallas/** and jax/_src/pallas/**."""
    root = jax_package_dir(jax_python)
    files: list[Path] = []
    for sub in ("experimental/pallas", "_src/pallas"):
        files += sorted(p for p in (root / sub).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def jax_package_dir(jax_python: str = JAX_PYTHON) -> Path:
    """The jax package folder of that interpreter, found without importing jax (fast)."""
    out = subprocess.run([jax_python, "-c", "import importlib.util as u; print(u.find_spec('jax').submodule_search_locations[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


def machine() -> str:
    """One line about where the numbers came from."""
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
    return (f"{os.cpu_count()} CPUs ({cpu}), Python {sys.version.split()[0]}, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def emit(result: dict, json_path: str | None) -> None:
    """Print a result as JSON (and write it to json_path)."""
    text = json.dumps(result, indent=2)
    if json_path:
        Path(json_path).write_text(text + "\n")
    print(text)
