"""The LSP base protocol (Content-Length framing and JSON-RPC checks), hardened against bad input.

pygls 2 reads messages in `pygls.io_.run_async`: an unparsable `Content-Length` makes it read every
later body as a header line (the server stays alive but deaf), a huge one makes it allocate that many
bytes (MemoryError), and a request whose params do not fit their LSP type raises inside
`json.loads(object_hook=...)`, so it never gets a response. This module replaces that one loop and
nothing else: `FrameReader` cuts a byte stream into message bodies (bounded memory; after garbage it
resynchronises on the next `Content-Length` header), and `Dispatcher` answers every request that
pygls cannot, per JSON-RPC: ParseError / InvalidRequest (with `id: null` when the id is unknown),
InvalidParams for wrong-typed params, ServerNotInitialized before `initialize`, InvalidRequest after
`shutdown`. Well-formed messages go to
pygls' own `JsonRPCProtocol.handle_message` unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a 5 MB file JSON-escaped is well under this
MAX_HEADER_BYTES = 8 * 1024
READ_CHUNK = 64 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

_HEADER_LINE = re.compile(rb"([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*?)[ \t]*")
_RESYNC = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_RESYNC_TAIL = len(b"content-length") + 8  # keep enough of a discarded chunk to find a split header


@dataclass(frozen=True)
class Body:
    data: bytes


@dataclass(frozen=True)
class Junk:
    """Bytes that were not a well-formed message: `code` and `reason` become an `id: null` error."""

    code: int
    reason: str


class FrameReader:
    """Incremental `Content-Length` framing with bounded memory.

    `feed(bytes)` returns the complete bodies and the framing errors found so far. After an error it
    discards input up to the next `Content-Length:` header (one error per run of garbage); a header
    announcing more than `max_message` bytes is an error too, and its body is discarded the same way,
    so the reader never holds more than `max_message + max_header` bytes.
    """

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES, max_header: int = MAX_HEADER_BYTES):
        self.max_message = max_message
        self.max_header = max_header
        self.buffer = bytearray()
        self.length: int | None = None  # reading a body of this many bytes
        self.discarding = False  # after an error: looking for the next header

    def feed(self, data: bytes) -> list[Body | Junk]:
        self.buffer += data
        events: list[Body | Junk] = []
        while True:
            if self.length is not None:
                if len(self.buffer) < self.length:
                    return events
                with memoryview(self.buffer) as view:
                    events.append(Body(bytes(view[:self.length])))
                # A new buffer for the rest: deleting the head would keep a big message's allocation.
                self.buffer = self.buffer[self.length:]
                self.length = None
                continue
            if self.discarding and not self._resynchronise():
                return events
            outcome = self._headers()
            if outcome is None:
                return events
            if isinstance(outcome, Junk):
                if not self.discarding:
                    events.append(outcome)
                self.discarding = True
                del self.buffer[:1]  # the next search starts past this header
                continue
            self.length = outcome

    def _resynchronise(self) -> bool:
        match = _RESYNC.search(self.buffer)
        if match is None:
            del self.buffer[:max(0, len(self.buffer) - _RESYNC_TAIL)]
            return False
        del self.buffer[:match.start()]
        return True

    def _headers(self) -> int | Junk | None:
        """The body length of the complete header block at the start of the buffer, a Junk if it is not
        one, or None if more bytes are needed."""
        position, length = 0, None
        while True:
            end = self.buffer.find(b"\n", position)
            if end < 0:
                if len(self.buffer) > self.max_header:
                    return Junk(PARSE_ERROR, f"a header line longer than {self.max_header} bytes")
                return None
            if end > self.max_header:
                return Junk(PARSE_ERROR, f"headers longer than {self.max_header} bytes")
            line = bytes(self.buffer[position:end]).rstrip(b"\r")
            first, position = position == 0, end + 1
            if not line:
                if first:
                    del self.buffer[:position]  # a stray blank line between messages
                    position = 0
                    continue
                if length is None:
                    return Junk(PARSE_ERROR, "a message without a Content-Length header")
                del self.buffer[:position]
                self.discarding = False
                if length > self.max_message:  # its body, if it comes, is skipped up to the next header
                    return Junk(INVALID_REQUEST, f"a message of {length} bytes; the limit is {self.max_message}")
                return length
            header = _HEADER_LINE.fullmatch(line)
            if header is None:
                return Junk(PARSE_ERROR, f"not an LSP header: {line[:80]!r}")
            if header.group(1).lower() == b"content-length":
                value = header.group(2)
                if length is not None or not value.isdigit() or len(value) > 18:
                    return Junk(PARSE_ERROR, f"a bad Content-Length: {value[:40]!r}")
                length = int(value)


def loads(data: bytes):
    """JSON as the client sent it, also an integer too long for `int()` (Python refuses more than
    4,300 digits, against quadratic conversion): `traceTimeout: 10**5000` then reads as inf and is
    clamped like `10**400`, instead of making `initialize` a ParseError that answers nobody."""
    return json.loads(data, parse_int=_integer)


def _integer(digits: str):
    try:
        return int(digits)
    except ValueError:  # more digits than `sys.get_int_max_str_digits()` allows
        return float(digits)


def _valid_id(value) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class Dispatcher:
    """Turns bodies into pygls messages; answers, by itself, every request pygls would drop."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.initialize_seen = False

    def error(self, msg_id, code: int, message: str) -> None:
        log.warning("answering %s with error %s: %s", "id null" if msg_id is None else f"request {msg_id!r}",
                    code, message)
        from lsprotocol.types import ResponseError

        self.protocol._send_response(msg_id, error=ResponseError(code=code, message=message))

    def junk(self, junk: Junk) -> None:
        self.error(None, junk.code, f"pallas-lsp skipped {junk.reason}")

    def body(self, data: bytes) -> None:
        try:
            message = loads(data)
        except (ValueError, RecursionError) as exc:
            self.error(None, PARSE_ERROR, f"the message is not JSON: {str(exc)[:200]}")
            return
        self.message(message)

    def message(self, message) -> None:
        from pygls.exceptions import JsonRpcException

        if not isinstance(message, dict):
            self.error(None, INVALID_REQUEST, "a JSON-RPC message is an object (LSP has no batches)")
            return
        msg_id = message.get("id")
        is_request = "method" in message and "id" in message
        if message.get("jsonrpc") != "2.0" or ("id" in message and msg_id is not None and not _valid_id(msg_id)) \
                or ("method" in message and not isinstance(message["method"], str)):
            self.error(msg_id if _valid_id(msg_id) else None, INVALID_REQUEST,
                       "not a JSON-RPC 2.0 message (jsonrpc \"2.0\", a string method, a string or integer id)")
            return
        method = message.get("method")
        if method == "initialize":
            self.initialize_seen = True
        elif method is not None and method != "exit" and not self.initialize_seen:
            if is_request:  # LSP: ServerNotInitialized; notifications before initialize are dropped
                self.error(msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet")
            return
        if is_request and self.protocol._shutdown and method != "exit":
            self.error(msg_id, INVALID_REQUEST, f"{method}: the server is shutting down")
            return
        if "method" in message:
            message.setdefault("params", None)  # optional in JSON-RPC; pygls' generic message requires it
        arguments = message["params"].get("arguments") if method == "workspace/executeCommand" \
            and isinstance(message.get("params"), dict) else None
        if is_request and isinstance(arguments, (str, dict)):  # pygls would take its letters or keys for the list
            self.error(msg_id, INVALID_PARAMS, f"{method}: the arguments are "
                       f"{'a string' if isinstance(arguments, str) else 'an object'}, not a list")
            return
        try:
            structured = self.protocol.structure_message(message)
        except JsonRpcException as exc:
            if is_request:
                response = exc.to_response_error()
                self.error(msg_id, response.code, f"{message['method']}: {response.message or 'invalid params'}")
            else:
                log.warning("ignoring %s: its params do not fit the LSP type", message.get("method"))
            return
        try:
            self.protocol.handle_message(structured)
        except (JsonRpcException, Exception) as exc:  # SystemExit (the `exit` notification) passes
            log.exception("cannot handle %s", message.get("method"))
            if is_request:
                self.error(msg_id, -32603, f"{message['method']}: internal error: {type(exc).__name__}")

    def handle(self, event: Body | Junk) -> None:
        if isinstance(event, Junk):
            self.junk(event)
        else:
            self.body(event.data)


async def read_loop(read, dispatcher: Dispatcher, reader: FrameReader | None = None,
                    stop: threading.Event | None = None) -> None:
    """Read chunks with `await read()` (b"" at end of input) and dispatch every message."""
    reader = reader or FrameReader()
    while stop is None or not stop.is_set():
        chunk = await read()
        if not chunk:
            return
        for event in reader.feed(chunk):
            dispatcher.handle(event)
            await asyncio.sleep(0)  # let handlers run between messages, as pygls does


def threaded_reader(stream):
    """An awaitable `read()` over a blocking binary stream (stdin), read by a daemon thread so that
    exiting never waits for a read that may never return."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    try:  # the raw descriptor: a daemon thread blocked inside a BufferedReader aborts interpreter exit
        fd = stream.fileno()
        read_some = lambda: os.read(fd, READ_CHUNK)  # noqa: E731
    except (AttributeError, OSError, ValueError):
        read_some = lambda: stream.read1(READ_CHUNK)  # noqa: E731

    def pump() -> None:
        while True:
            try:
                chunk = read_some()
            except (OSError, ValueError):
                chunk = b""
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)
            if not chunk:
                return

    threading.Thread(target=pump, name="pallas-lsp-stdin", daemon=True).start()
    return chunks.get


def exit_code(protocol, reason: str) -> int:
    """LSP: 0 after `shutdown`, 1 otherwise (an `exit` without `shutdown`, or the input ended)."""
    code = 0 if protocol._shutdown else 1
    log.info("exiting with %d: %s", code, reason)
    return code


def serve_stdio(server, stdin=None, stdout=None) -> int:
    """Serve one client over stdin/stdout until `exit` or end of input; returns the exit code."""
    from pygls.io_ import StdoutWriter

    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

    async def run() -> None:
        await read_loop(threaded_reader(stdin or sys.stdin.buffer), Dispatcher(server.protocol), stop=server._stop_event)

    try:
        asyncio.run(run())
        return exit_code(server.protocol, "end of input")
    except SystemExit as done:  # pygls' `exit` handler: sys.exit(0 after shutdown, else 1)
        return done.code if isinstance(done.code, int) else exit_code(server.protocol, "exit")
    except BrokenPipeError:
        log.error("the client closed the connection")
        return exit_code(server.protocol, "the client closed the connection")
    except KeyboardInterrupt:
        return 1
    finally:
        server.shutdown()
