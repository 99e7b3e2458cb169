"""`pallas-lsp serve --tcp`: a token only the owner can read, loopback only unless forced, one client
per server, and clear usage errors (exit 2). The real server, over real sockets."""

import json
import os
import re
import resource
import socket
import stat
import subprocess
import sys

import pytest

from lsp_wire import WireServer, frame

TCP_DOCS = "https://github.com/pallas-lsp/pallas-lsp/blob/main/docs/editors.md#over-tcp-pallas-lsp-serve---tcp"

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def serve(*args, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "serve", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, env=env or dict(os.environ), **kwargs)


@pytest.mark.parametrize("address, message", [
    ("[::1]", "--tcp [::1]: no port; expected HOST:PORT, e.g. 127.0.0.1:2087 or [::1]:2087"),
    ("127.0.0.1:http", "--tcp 127.0.0.1:http: the port must be a number from 0 to 65535, not 'http'"),
    ("127.0.0.1:70000", "--tcp 127.0.0.1:70000: the port must be a number from 0 to 65535, not '70000'"),
    ("::1:2087", "--tcp ::1:2087: write an IPv6 address in brackets, e.g. [::1]:2087"),
    ("0.0.0.0:2087", "--tcp 0.0.0.0:2087: 0.0.0.0 is not a loopback address, so other machines could connect; "
                     "use 127.0.0.1 or [::1], or pass --allow-remote if you mean it"),
    ("no-such-host.invalid:2087", "--tcp: cannot resolve host 'no-such-host.invalid'"),
])
def test_bad_addresses_are_usage_errors(address, message):
    done = serve("--tcp", address)
    assert (done.returncode, done.stderr) == (2, f"pallas-lsp serve: error: {message}\n")


def test_a_busy_port_is_a_usage_error():
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = serve("--tcp", f"127.0.0.1:{port}")
    assert (done.returncode, done.stderr) == (
        2, f"pallas-lsp serve: error: --tcp: cannot listen on 127.0.0.1:{port}: the port is in use\n")


def test_tcp_options_without_tcp_are_usage_errors():
    done = serve("--allow-remote")
    assert (done.returncode, done.stderr) == (2, "pallas-lsp serve: error: --token-file and --allow-remote go with --tcp\n")


class TcpServer:
    def __init__(self, tmp_path, *args, address="127.0.0.1:0", env=None, preexec_fn=None):
        self.env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "run"), **(env or {})}
        os.makedirs(self.env["XDG_RUNTIME_DIR"])
        self.process = subprocess.Popen([sys.executable, "-m", "pallas_lsp", "serve", "--tcp", address, *args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        env=self.env, cwd=tmp_path, preexec_fn=preexec_fn)
        self.banner, found = "", None
        while found is None and (line := self.process.stderr.readline().decode()):
            self.banner += line
            found = re.search(r"^pallas-lsp: listening on (\S+):(\d+); clients must send "
                              r"initializationOptions.token from (\S+)$", line.strip())
        assert found, self.banner
        self.host, self.port, self.token_file = found.group(1).strip("[]"), int(found.group(2)), found.group(3)
        with open(self.token_file) as file:
            self.token = file.read().strip()

    def connect(self) -> tuple[socket.socket, WireServer]:
        sock = socket.create_connection((self.host, self.port), timeout=60)
        sock.setblocking(True)  # the wire reads the raw descriptor
        return sock, WireServer(process=self.process, write=sock.sendall, read_fd=sock.fileno())

    def initialize(self, token) -> tuple[socket.socket, WireServer, dict]:
        sock, wire = self.connect()
        options = {} if token is None else {"token": token}
        wire.send({**INITIALIZE, "params": {"capabilities": {}, "initializationOptions": options}})
        return sock, wire, wire.response(1)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        self.process.stderr.close()


@pytest.fixture
def tcp(tmp_path):
    server = TcpServer(tmp_path)
    yield server
    server.stop()


def hang_up(sock: socket.socket) -> None:
    """Shut down first: closing a descriptor another thread is reading does not end the connection."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def refused(answer: dict, wire: WireServer, why: str) -> None:
    assert answer["error"] == {"code": -32600, "message": f"pallas-lsp --tcp: {why} (see {TCP_DOCS})"}
    assert wire.wait_for(lambda m: False) is None  # and the connection is closed


def test_the_token_file_is_the_owners_alone_and_removed_at_exit(tcp):
    info = os.stat(tcp.token_file)
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
    assert stat.S_IMODE(os.stat(os.path.dirname(tcp.token_file)).st_mode) == 0o700
    assert len(tcp.token) >= 40
    sock, wire, answer = tcp.initialize(tcp.token)
    assert answer["result"]["serverInfo"]["name"] == "pallas-lsp"
    assert wire.request(2, "shutdown")["result"] is None
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert tcp.process.wait(60) == 0
    assert not os.path.exists(tcp.token_file)
    hang_up(sock)


@pytest.mark.parametrize("token, why", [(None, "initializationOptions.token is missing"),
                                        ("x" * 43, "initializationOptions.token is wrong")])
def test_a_client_without_the_token_is_refused_and_the_server_keeps_waiting(tcp, token, why):
    sock, wire, answer = tcp.initialize(token)
    refused(answer, wire, why)
    hang_up(sock)
    sock, wire, answer = tcp.initialize(tcp.token)  # the owner still gets in
    assert "capabilities" in answer["result"]
    hang_up(sock)


def test_an_unauthenticated_trace_command_runs_nothing(tcp, tmp_path):
    marker = tmp_path / "imported"
    module = tmp_path / "evil.py"
    module.write_text(f"open({str(marker)!r}, 'w').close()\n\ndef f(x):\n    return x\n")
    sock, wire = tcp.connect()
    wire.send({"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand",
               "params": {"command": "pallas.trace", "arguments": [module.as_uri(), "f", {"platform": "host"}]}})
    refused(wire.response(5), wire, "the first message must be the initialize request")
    hang_up(sock)
    assert not marker.exists()


def test_one_client_per_server(tcp):
    sock, wire, answer = tcp.initialize(tcp.token)
    assert "capabilities" in answer["result"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((tcp.host, tcp.port), timeout=60)
    assert wire.request(2, "pallas/probe")["error"]["code"] == -32601  # the first client is undisturbed
    hang_up(sock)
    assert tcp.process.wait(60) == 1  # it left without shutdown


def test_a_chosen_token_file_is_created_private_and_kept(tmp_path):
    chosen = tmp_path / "token"
    server = TcpServer(tmp_path, "--token-file", str(chosen))
    try:
        assert server.token_file == str(chosen) and stat.S_IMODE(chosen.stat().st_mode) == 0o600
        sock, _, answer = server.initialize(chosen.read_text().strip())
        assert "capabilities" in answer["result"]
        hang_up(sock)
        assert server.process.wait(60) == 1
    finally:
        server.stop()
    assert chosen.exists()


def test_a_token_file_others_can_read_is_refused(tmp_path):
    chosen = tmp_path / "token"
    chosen.write_text("a-long-enough-secret-token\n")
    chosen.chmod(0o644)
    done = serve("--tcp", "127.0.0.1:0", "--token-file", str(chosen))
    assert (done.returncode, done.stderr) == (
        2, f"pallas-lsp serve: error: --token-file {chosen}: other users can read it; run chmod 600 {chosen}\n")


def test_allow_remote_warns_and_still_requires_the_token(tmp_path):
    server = TcpServer(tmp_path, "--allow-remote", address="0.0.0.0:0")
    try:
        assert server.banner.startswith("pallas-lsp: warning: listening on 0.0.0.0, reachable from other machines")
        sock, wire, answer = server.initialize(None)
        refused(answer, wire, "initializationOptions.token is missing")
        hang_up(sock)
    finally:
        server.stop()


def test_an_ipv6_loopback_address_in_brackets_serves(tmp_path):
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    server = TcpServer(tmp_path, address="[::1]:0")
    try:
        assert server.banner.startswith("pallas-lsp: listening on [::1]:")
        sock, _, answer = server.initialize(server.token)
        assert "capabilities" in answer["result"]
        hang_up(sock)
        assert server.process.wait(60) == 1
    finally:
        server.stop()


# Before authentication: a connection may cost the server little (issue 19, item 3).

PENDING_LIMIT = 8  # lsp/tcp.py PENDING_LIMIT: connections waiting to authenticate at once


def refusal(why: str) -> dict:
    return {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"pallas-lsp --tcp: {why} (see {TCP_DOCS})"}}


def answer_then_closed(sock: socket.socket) -> dict | None:
    """The one message the server sends before closing the connection (a bounded wait for its end)."""
    sock.settimeout(60)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head == b"Content-Length: %d" % len(body), received[:200]
    return json.loads(body)


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith(field + ":")))


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def fewer_descriptors(limit: int):
    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return lower


@pytest.mark.slow
def test_idle_connections_cannot_use_up_the_descriptors_nor_keep_the_token_holder_out(tmp_path):
    """Before: each idle socket kept a descriptor for 30 s; ~1,020 of them (here 300, the server
    limited to 128 descriptors) used them all up and the token holder could not connect."""
    server = TcpServer(tmp_path, preexec_fn=fewer_descriptors(128))
    try:
        first = socket.create_connection((server.host, server.port), timeout=60)
        first.sendall(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        assert answer_then_closed(first) == refusal("the first message must be the initialize request")
        first.close()
        before = open_descriptors(server.process.pid)  # its event loop running, no connection open
        idle = []
        for count in range(300):  # one at a time: a burst would overflow the listen backlog, dropping some
            idle.append(socket.create_connection((server.host, server.port), timeout=60))
            if count >= PENDING_LIMIT:  # each newer one closed the one that had waited longest
                assert answer_then_closed(idle[count - PENDING_LIMIT]) == refusal(
                    "too many connections are waiting to authenticate; this one waited longest")
        assert open_descriptors(server.process.pid) <= before + PENDING_LIMIT
        sock, _, answer = server.initialize(server.token)
        assert answer["result"]["serverInfo"]["name"] == "pallas-lsp"
        hang_up(sock)
        # The holder's connection closed the oldest of those waiting; the others were closed behind it.
        assert answer_then_closed(idle[-PENDING_LIMIT]) == refusal(
            "too many connections are waiting to authenticate; this one waited longest")
        for sock in idle[-PENDING_LIMIT + 1:]:
            assert answer_then_closed(sock) == refusal("another client is already connected (one client per server)")
        for sock in idle:
            sock.close()
        assert server.process.wait(60) == 1
    finally:
        server.stop()


def send_until_closed(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:  # the server closed it (reset): what the test wants
        pass


@pytest.mark.slow
def test_partial_large_bodies_before_authentication_keep_the_memory_bounded(tmp_path):
    """Before: eight clients sending partial 63 MiB bodies took the server to ~550 MB (it buffered
    each body until it was complete). Now a message over 64 KiB before authentication is refused on
    its header, and a first message within 64 KiB only holds that much until its time is up."""
    server = TcpServer(tmp_path)
    try:
        before = status_kib(server.process.pid, "VmHWM")
        big_bodies, within_limit = [], []
        for _ in range(8):
            sock = socket.create_connection((server.host, server.port), timeout=60)
            send_until_closed(sock, b"Content-Length: %d\r\n\r\n" % (63 << 20) + b"x" * ((63 << 20) - 1))
            big_bodies.append(sock)
        for _ in range(PENDING_LIMIT - 1):  # 60,000 of 64,000 announced bytes, then silence
            sock = socket.create_connection((server.host, server.port), timeout=60)
            sock.sendall(b"Content-Length: 64000\r\n\r\n" + b"x" * 60_000)
            within_limit.append(sock)
        grown_mib = (status_kib(server.process.pid, "VmHWM") - before) / 1024
        assert grown_mib < 32, f"the server grew by {grown_mib:.0f} MiB"  # before: ~500 MiB
        sock, _, answer = server.initialize(server.token)  # the owner is not kept out
        assert answer["result"]["serverInfo"]["name"] == "pallas-lsp"
        hang_up(sock)
        for sock in big_bodies + within_limit:
            sock.close()
    finally:
        server.stop()


@pytest.mark.parametrize("sent, why", [
    (b"Content-Length: %d\r\n\r\n" % (63 << 20), "the first message must be an initialize request of at most 64 KiB"),
    (b"Content-Length: 65536\r\n\r\n" + b"x" * 65536, "no complete initialize request in the first 64 KiB"),
])
def test_a_first_message_over_the_limit_before_authentication_is_refused(tcp, sent, why):
    sock = socket.create_connection((tcp.host, tcp.port), timeout=60)
    sock.sendall(sent)
    assert answer_then_closed(sock) == refusal(why)
    sock.close()
    sock, _, answer = tcp.initialize(tcp.token)
    assert "capabilities" in answer["result"]
    hang_up(sock)


def test_a_connection_that_does_not_authenticate_in_time_is_closed(tmp_path):
    server = TcpServer(tmp_path, env={"PALLAS_LSP_TCP_AUTH_SECONDS": "1"})
    try:
        idle = socket.create_connection((server.host, server.port), timeout=60)
        partial = socket.create_connection((server.host, server.port), timeout=60)
        partial.sendall(b"Content-Length: 100\r\n\r\n{")  # a slow drip does not extend the time
        for sock in (idle, partial):
            assert answer_then_closed(sock) == refusal("no initialize request within 1 s of connecting")
            sock.close()
    finally:
        server.stop()


@pytest.mark.parametrize("value, said", [
    ("abc", 'PALLAS_LSP_TCP_AUTH_SECONDS="abc" is not a number of seconds, above 0: using 10 s'),
    ("0", 'PALLAS_LSP_TCP_AUTH_SECONDS="0" is not a number of seconds, above 0: using 10 s'),
    ("nan", 'PALLAS_LSP_TCP_AUTH_SECONDS="nan" is not a number of seconds, above 0: using 10 s'),
    ("1e400", 'PALLAS_LSP_TCP_AUTH_SECONDS="1e400" is over the maximum of 3,600 s: using 3,600 s'),
])
def test_a_bad_time_to_authenticate_is_said_and_replaced(tmp_path, value, said):
    server = TcpServer(tmp_path, env={"PALLAS_LSP_TCP_AUTH_SECONDS": value})
    try:
        assert server.banner.startswith(f"pallas-lsp: warning: {said}\n")
        sock, _, answer = server.initialize(server.token)
        assert "capabilities" in answer["result"]
        hang_up(sock)
    finally:
        server.stop()

# Token files and folders: never through a link, never a FIFO (issue 19, item 2).

def test_a_symbolic_link_planted_for_the_token_folder_is_refused_and_its_target_left_alone(tmp_path):
    """Before: the server chmod'ed the link's target to 700 and wrote its token there."""
    target = tmp_path / "someone-elses"
    target.mkdir()
    target.chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(target, run / "pallas-lsp")
    done = serve("--tcp", "127.0.0.1:0", env={**os.environ, "XDG_RUNTIME_DIR": str(run)})
    assert (done.returncode, done.stderr) == (
        2, f"pallas-lsp serve: error: --tcp: cannot use the token folder {run / 'pallas-lsp'}: it is a symbolic "
           "link, not a folder; remove it or pass --token-file\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755 and list(target.iterdir()) == []


@pytest.mark.parametrize("make, why", [(os.mkfifo, "it is a FIFO, not a regular file"),
                                       (lambda path: os.symlink(path.parent / "real", path),
                                        "it is a symbolic link, not a regular file")])
def test_a_token_file_that_is_a_fifo_or_a_link_is_refused_at_once(tmp_path, make, why):
    real = tmp_path / "real"
    real.write_text("a-long-enough-secret-token\n")
    real.chmod(0o600)
    chosen = tmp_path / "token"
    make(chosen)
    done = serve("--tcp", "127.0.0.1:0", "--token-file", str(chosen))  # before: a FIFO hung it here
    assert (done.returncode, done.stderr) == (2, f"pallas-lsp serve: error: --token-file {chosen}: {why}\n")
