"""A byte-level LSP client for the real `pallas-lsp serve`: it writes whatever bytes a test wants
(garbage, split headers, lies about lengths) and collects the server's framed output on a thread.
Every wait is on an event with a generous bound; none is a sleep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

ANSWER_SECONDS = 60.0  # a generous bound for a loaded machine; a healthy answer takes milliseconds


def frame(message: dict | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class WireServer:
    """`pallas-lsp serve` over pipes, or any byte stream `connect` returns (TCP)."""

    def __init__(self, args=("serve",), env=None, cwd=None, write=None, read_fd=None, process=None):
        if process is None:
            process = subprocess.Popen([sys.executable, "-m", "pallas_lsp", *args], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=env or dict(os.environ), cwd=cwd)
        self.process = process
        self._write = write or self._pipe_write
        self._read_fd = read_fd if read_fd is not None else process.stdout.fileno()
        self.messages: list[dict] = []
        self.closed = False
        self.changed = threading.Condition()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        if process.stderr is not None:
            threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pipe_write(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict | bytes) -> None:
        """One well-framed message (a dict, or a body given as bytes)."""
        self._write(frame(message))

    def raw(self, data: bytes) -> None:
        self._write(data)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._read_fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self.changed:
                    self.closed = True
                    self.changed.notify_all()
                return
            buffer += chunk
            while True:
                head, sep, rest = buffer.partition(b"\r\n\r\n")
                if not sep:
                    break
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                if len(rest) < length:
                    break
                message = json.loads(rest[:length])
                buffer = rest[length:]
                with self.changed:
                    self.messages.append(message)
                    self.changed.notify_all()

    def _drain_stderr(self) -> None:
        try:
            for line in self.process.stderr:
                self.stderr += line
        except (OSError, ValueError):  # closed by kill()
            pass

    def wait_for(self, predicate, timeout: float = ANSWER_SECONDS):
        """The first message satisfying `predicate`; None if the server closed its output first."""
        found: list = []

        def ready() -> bool:
            found[:] = [m for m in self.messages if predicate(m)][:1]
            return bool(found) or self.closed

        with self.changed:
            if not self.changed.wait_for(ready, timeout):
                raise AssertionError(f"no answer within {timeout} s and the server did not exit (it is deaf)")
        return found[0] if found else None

    def response(self, msg_id, timeout: float = ANSWER_SECONDS):
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def errors_without_id(self) -> list[dict]:
        with self.changed:
            return [m for m in self.messages if "error" in m and m.get("id") is None]

    def request(self, msg_id, method: str, params=None) -> dict | None:
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(msg_id)

    def initialize(self, root: str, **options) -> dict:
        answer = self.request(0, "initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                                "workspaceFolders": [{"uri": f"file://{root}", "name": "ws"}],
                                                "initializationOptions": {"debounceMs": 0, **options}})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}}})

    def published(self, uri: str, version: int = 1) -> list[dict]:
        """The diagnostics published for this version of the document."""
        message = self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == uri and m["params"].get("version") == version)
        assert message is not None, "the server exited"
        return message["params"]["diagnostics"]

    def exit_code(self, timeout: float = ANSWER_SECONDS) -> int:
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
