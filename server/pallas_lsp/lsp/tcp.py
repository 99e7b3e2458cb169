"""`pallas-lsp serve` options, and `--tcp` made safe to leave running.

A connected client can run `workspace/executeCommand pallas.trace`, which imports a module of its
choosing as the server's user; so a TCP server must not take orders from whoever can reach the port.
As Jupyter does, the server makes a secret token and writes it to a file only its owner can read;
the client presents it in `initializationOptions.token` of its `initialize` request (every LSP
client can set initialization options). A connection whose first message is anything else is
answered with an error and closed. The first client that presents the token gets the server; the
listening socket is then closed (one client per server, as over stdio), and the server exits when
that client leaves. Only loopback addresses are accepted unless `--allow-remote` says otherwise.

Before the token is shown a connection costs the server little, so that no one who can reach the
port can take its memory or its file descriptors and keep the token's holder out: at most
`PENDING_LIMIT` connections wait to authenticate (a new one closes the one that waited longest: a
real client sends `initialize` at once, so idle sockets opened before it cannot keep it out), each may
send at most `PRE_AUTH_BYTES` before its `initialize` is complete (a larger announced message is
refused on its header), and each has 10 s (`PALLAS_LSP_TCP_AUTH_SECONDS`) from connecting to finish it.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import hmac
import ipaddress
import json
import logging
import os
import re
import secrets
import socket
import stat
import sys
import time

from ..checked_values import tcp_auth_seconds
from .transport import (INVALID_REQUEST, MAX_MESSAGE_BYTES, Body, Dispatcher, FrameReader, exit_code, loads,
                            read_loop, serve_stdio)
from ..private_files import PrivateFolder, Untrusted, read_own
from .serve_options import TCP_DOCS, add_serve_arguments

log = logging.getLogger(__name__)

EXIT_USAGE = 2
PENDING_LIMIT = 8  # connections waiting to authenticate at once
PRE_AUTH_BYTES = 64 * 1024  # VS Code's initialize (all its capabilities) is ~10 KiB
LOGGED_REFUSALS = 10  # refusals logged one by one; after them, a count every REFUSAL_LOG_SECONDS
REFUSAL_LOG_SECONDS = 10.0
TOKEN_KEY = "token"


class UsageError(Exception):
    pass


def parse_address(text: str, allow_remote: bool = False) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (127.0.0.1) -> (host, port); UsageError otherwise."""
    bracketed = re.fullmatch(r"\[([^\]]*)\](?::(.*))?", text)
    if bracketed:
        host, port = bracketed.group(1), bracketed.group(2)
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            host, port = text, None
        elif ":" in host:
            raise UsageError(f"--tcp {text}: write an IPv6 address in brackets, e.g. [::1]:2087")
    if port is None or port == "":
        raise UsageError(f"--tcp {text}: no port; expected HOST:PORT, e.g. 127.0.0.1:2087 or [::1]:2087")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--tcp {text}: the port must be a number from 0 to 65535, not {port!r}")
    host = host or "127.0.0.1"
    if not allow_remote and not _is_loopback(host):
        raise UsageError(f"--tcp {text}: {host} is not a loopback address, so other machines could connect; "
                         "use 127.0.0.1 or [::1], or pass --allow-remote if you mean it")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        raise UsageError(f"--tcp: cannot resolve host {host!r}") from None
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def _private_folder() -> PrivateFolder:
    """The per-run token's folder, mode 700; it is opened without following a link, so a planted link
    gets no chmod and no token."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "pallas-lsp")
    try:
        opened = PrivateFolder.checked(folder, create=True)
    except Untrusted as exc:
        raise UsageError(f"--tcp: cannot use the token folder {folder}: {exc}; remove it or pass --token-file") \
            from None
    opened.restrict()
    return opened


def write_token(path: str, token: str) -> None:
    """Create `path` readable and writable by its owner only (fails if anything has that name, a link too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(token + "\n")


def read_token(path: str) -> str:
    """The token in a user-chosen file, which must be the user's own regular file, not readable by
    others (opened without following a link or blocking)."""
    try:
        data, info = read_own(path, forbidden=0)
        token = data.decode("utf-8").strip()
    except (Untrusted, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--token-file {path}: {exc}") from None
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise UsageError(f"--token-file {path}: other users can read it; run chmod 600 {path}")
    if len(token) < 16:
        raise UsageError(f"--token-file {path}: the token must be at least 16 characters")
    return token


def authenticate(message, token: str) -> str | None:
    """None if `message` is an `initialize` request carrying the token, else what is wrong."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return "the first message must be the initialize request"
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    presented = options.get(TOKEN_KEY) if isinstance(options, dict) else None
    if not isinstance(presented, str):
        return "initializationOptions.token is missing"
    if not hmac.compare_digest(presented.encode(), token.encode()):
        return "initializationOptions.token is wrong"
    del options[TOKEN_KEY]  # the rest of the server never sees it (nor logs it)
    return None


class TcpServer:
    """One listening socket; the first authenticated connection becomes the session."""

    def __init__(self, server, sock: socket.socket, token: str, seconds_to_authenticate: float):
        self.server = server
        self.sock = sock
        self.token = token
        self.auth_seconds = seconds_to_authenticate
        self.listener: asyncio.Server | None = None
        self.session_taken = False
        self.done: asyncio.Future | None = None
        self.pending: dict[asyncio.StreamWriter, None] = {}  # waiting to authenticate, oldest first
        self.evicted: dict[asyncio.StreamWriter, str] = {}  # closed while waiting, and why
        self.refusals = 0
        self.refusals_logged_at = 0.0

    async def run(self) -> None:
        self.done = asyncio.get_running_loop().create_future()
        self.listener = await asyncio.start_server(self.connection, sock=self.sock)
        await self.done

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if self.session_taken:
            log.warning("refused a second connection from %s: one client per server", peer)
            writer.close()
            return
        if len(self.pending) >= PENDING_LIMIT:
            self._evict(next(iter(self.pending)))
        self.pending[writer] = None
        frames = FrameReader(max_message=PRE_AUTH_BYTES)
        try:
            events, problem = await asyncio.wait_for(self._first_events(reader, frames), self.auth_seconds)
        except asyncio.TimeoutError:
            events, problem = [], f"no initialize request within {self.auth_seconds:g} s of connecting"
        except OSError:
            events, problem = [], "the connection failed"
        finally:
            self.pending.pop(writer, None)
        if writer in self.evicted:
            self._log_refusal(peer, self.evicted.pop(writer))
            return
        first = events[0] if events else None
        message = _json(first.data) if isinstance(first, Body) else None
        if problem is None:
            problem = authenticate(message, self.token) if isinstance(first, Body) else (
                f"the first message must be an initialize request of at most {PRE_AUTH_BYTES // 1024} KiB")
        if problem is None and self.session_taken:
            problem = "another client is already connected (one client per server)"
        if problem is not None:
            self._log_refusal(peer, problem)
            self._refuse(writer, message, problem)
            return
        self.session_taken = True
        self.listener.close()  # no further clients
        for waiting in list(self.pending):
            self._evict(waiting, "another client is already connected (one client per server)")
        log.info("client %s connected", peer)
        frames.max_message = MAX_MESSAGE_BYTES
        self.server.protocol.set_writer(writer)
        dispatcher = Dispatcher(self.server.protocol)
        dispatcher.message(message)
        for event in events[1:]:
            dispatcher.handle(event)
        try:
            await read_loop(lambda: reader.read(65536), dispatcher, frames)
        except ConnectionError:
            pass
        finally:
            if not self.done.done():
                self.done.set_result(None)

    def _evict(self, writer: asyncio.StreamWriter,
               why: str = "too many connections are waiting to authenticate; this one waited longest") -> None:
        """Close a connection still waiting to authenticate (its wait then ends at end of input)."""
        self.pending.pop(writer, None)
        self.evicted[writer] = why
        self._refuse(writer, None, why)

    @staticmethod
    def _refuse(writer: asyncio.StreamWriter, message, problem: str) -> None:
        """Answer with the reason and close; the answer is small, so it never waits for the client."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id if isinstance(msg_id, (int, str)) else None,
                           "error": {"code": INVALID_REQUEST,
                                     "message": f"pallas-lsp --tcp: {problem} (see {TCP_DOCS})"}})
        try:
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))
        except OSError:
            pass
        writer.close()

    def _log_refusal(self, peer, problem: str) -> None:
        """One warning per refusal for the first few, then a count at most every few seconds: a flood of
        connections must not flood the log (nor fill a stderr pipe that nobody reads)."""
        self.refusals += 1
        now = time.monotonic()
        if self.refusals <= LOGGED_REFUSALS:
            log.warning("refused a connection from %s: %s", peer, problem)
            self.refusals_logged_at = now
        elif now - self.refusals_logged_at >= REFUSAL_LOG_SECONDS:
            log.warning("refused %d connections without the token so far (the last from %s: %s)",
                        self.refusals, peer, problem)
            self.refusals_logged_at = now

    @staticmethod
    async def _first_events(reader: asyncio.StreamReader, frames: FrameReader) -> tuple[list, str | None]:
        """The events up to the first message, and None; or what stopped it."""
        received = 0
        while received < PRE_AUTH_BYTES:
            chunk = await reader.read(PRE_AUTH_BYTES - received)
            if not chunk:
                return [], "no initialize request"
            received += len(chunk)
            events = frames.feed(chunk)
            if events:
                return events, None
        return [], f"no complete initialize request in the first {PRE_AUTH_BYTES // 1024} KiB"


def _json(data: bytes):
    try:
        return loads(data)
    except (ValueError, RecursionError):
        return None


def _listen(host: str, port: int) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        why = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        raise UsageError(f"--tcp: cannot listen on {host}:{port}: {why}") from None


def _per_run_token(port: int) -> str:
    return f"tcp-{port}.token"


def _token_file(token_file: str | None, token: str, port: int) -> tuple[str, PrivateFolder | None]:
    """Where the client finds the token, and the folder of a per-run one (removed from it at exit)."""
    try:
        if token_file is None:
            folder = _private_folder()
            try:
                folder.remove(_per_run_token(port))  # a previous run's, killed before it could remove it
                folder.create(_per_run_token(port), (token + "\n").encode())
            except BaseException:
                folder.close()
                raise
            return folder.where(_per_run_token(port)), folder
        if not os.path.lexists(token_file):
            write_token(token_file, token)
        return token_file, None
    except OSError as exc:
        raise UsageError(f"--tcp: cannot write the token file: {exc}") from None


def serve_tcp(server, address: str, token_file: str | None = None, allow_remote: bool = False) -> int:
    host, port = parse_address(address, allow_remote)
    if allow_remote and not _is_loopback(host):
        print(f"pallas-lsp: warning: listening on {host}, reachable from other machines; the token is the only "
              "protection and the traffic (your code) is not encrypted", file=sys.stderr)
    token = read_token(token_file) if token_file and os.path.lexists(token_file) else secrets.token_urlsafe(32)
    seconds_to_authenticate = tcp_auth_seconds()  # a bad value was already said (cli.py, at start)
    sock = _listen(host, port)
    token_folder = None
    try:
        port = sock.getsockname()[1]
        shown_file, token_folder = _token_file(token_file, token, port)
        shown = f"[{host}]" if ":" in host else host
        print(f"pallas-lsp: listening on {shown}:{port}; clients must send initializationOptions.token "
              f"from {shown_file}", file=sys.stderr, flush=True)
        try:
            asyncio.run(TcpServer(server, sock, token, seconds_to_authenticate).run())
        except SystemExit as done:  # `exit`
            return done.code if isinstance(done.code, int) else 1
        except KeyboardInterrupt:
            return 1
        return exit_code(server.protocol, "the client disconnected")
    finally:
        sock.close()
        server.shutdown()
        if token_folder is not None:
            try:
                token_folder.remove(_per_run_token(port))
            except OSError:
                pass
            token_folder.close()


def serve_command(server, argv: list[str] | None = None, args: argparse.Namespace | None = None) -> int:
    """`pallas-lsp serve [--tcp HOST:PORT [--token-file PATH] [--allow-remote]]`; usage errors exit 2."""
    if args is None:
        parser = argparse.ArgumentParser(prog="pallas-lsp serve")
        add_serve_arguments(parser)
        args = parser.parse_args(argv)
    try:
        if not args.tcp:
            if args.token_file or args.allow_remote:
                raise UsageError("--token-file and --allow-remote go with --tcp")
            return serve_stdio(server)
        return serve_tcp(server, args.tcp, args.token_file, args.allow_remote)
    except UsageError as exc:
        print(f"pallas-lsp serve: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
