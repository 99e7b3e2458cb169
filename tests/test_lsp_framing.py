"""The LSP base protocol against the real `pallas-lsp serve` over stdio: every request gets an
answer (an error response is one), bad framing is skipped and the next message is read, and
`exit` / `shutdown` follow the specification. `FrameReader` (the framing itself) is tested directly."""

import json

import pytest

from lsp_wire import WireServer, frame
from pallas_lsp.lsp.transport import INVALID_REQUEST, PARSE_ERROR, Body, FrameReader, Junk

INVALID_PARAMS, METHOD_NOT_FOUND = -32602, -32601
HOVER = {"textDocument": {"uri": "file:///nowhere/k.py"}, "position": {"line": 0, "character": 0}}


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    server = WireServer()
    assert "capabilities" in server.initialize(str(tmp_path_factory.mktemp("ws")))["result"]
    yield server
    server.kill()


@pytest.fixture
def wire(shared_server):
    """The module's server, still answering, with the messages of earlier tests forgotten."""
    still_answers(shared_server, "before")
    with shared_server.changed:
        shared_server.messages.clear()
    return shared_server


@pytest.fixture
def own_wire(tmp_path):
    """A server of its own, for tests that shut it down."""
    server = WireServer()
    server.initialize(str(tmp_path))
    yield server
    server.kill()


def still_answers(wire: WireServer, msg_id="probe") -> None:
    assert wire.request(msg_id, "pallas/probe")["error"]["code"] == METHOD_NOT_FOUND


def test_a_malformed_content_length_is_answered_and_the_next_message_is_read(wire):
    wire.raw(b"Content-Length: abc\r\n\r\n{}")
    still_answers(wire)
    assert [e["error"]["code"] for e in wire.errors_without_id()] == [PARSE_ERROR]
    assert "a bad Content-Length: b'abc'" in wire.errors_without_id()[0]["error"]["message"]


def test_a_2_to_the_40_content_length_is_refused_without_allocating_it(wire):
    wire.raw(b"Content-Length: %d\r\n\r\n{}" % 2**40)
    still_answers(wire)
    [error] = wire.errors_without_id()
    assert error["error"] == {"code": INVALID_REQUEST,
                              "message": "pallas-lsp skipped a message of 1099511627776 bytes; the limit is 67108864"}
    assert wire.process.poll() is None


def test_wrong_typed_params_get_invalid_params_with_the_request_id(wire):
    answer = wire.request(7, "textDocument/hover", 5)
    assert answer["error"] == {"code": INVALID_PARAMS, "message": "textDocument/hover: Invalid Params"}
    answer = wire.request("eight", "textDocument/hover", {"textDocument": {"uri": 3}, "position": []})
    assert answer["id"] == "eight" and answer["error"]["code"] == INVALID_PARAMS


@pytest.mark.parametrize("body, code", [
    (b"{not json", PARSE_ERROR),
    (b"\xff\xfe\x00", PARSE_ERROR),
    (b"[1, 2]", INVALID_REQUEST),
    (b'{"jsonrpc": "1.0", "method": "textDocument/hover"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": [3], "method": "textDocument/hover"}', INVALID_REQUEST),
    (b"[" * 100_000, PARSE_ERROR),
])
def test_a_body_that_is_not_a_json_rpc_message_is_answered_with_id_null(wire, body, code):
    wire.send(body)
    still_answers(wire)
    assert [e["error"]["code"] for e in wire.errors_without_id()] == [code]


def test_a_version_1_request_with_an_id_is_answered_with_that_id(wire):
    wire.send({"jsonrpc": "1.0", "id": 4, "method": "textDocument/hover"})
    assert wire.response(4)["error"]["code"] == INVALID_REQUEST


def test_requests_after_shutdown_get_invalid_request_and_exit_then_returns_0(own_wire):
    wire = own_wire
    assert wire.request(1, "shutdown") == {"jsonrpc": "2.0", "id": 1, "result": None}
    answer = wire.request(2, "textDocument/hover", HOVER)
    assert answer["error"] == {"code": INVALID_REQUEST, "message": "textDocument/hover: the server is shutting down"}
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert wire.exit_code() == 0


def test_requests_before_initialize_get_server_not_initialized():
    server = WireServer()
    try:
        server.send({"jsonrpc": "2.0", "method": "textDocument/didClose",
                     "params": {"textDocument": {"uri": "file:///k.py"}}})  # dropped
        assert server.request(1, "textDocument/hover", HOVER) == {"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32002, "message": "textDocument/hover: the server is not initialized yet"}}
        assert "capabilities" in server.initialize("/")["result"]
        assert server.errors_without_id() == []
    finally:
        server.kill()


def test_exit_without_shutdown_returns_1(own_wire):
    wire = own_wire
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert wire.exit_code() == 1


def test_end_of_input_without_shutdown_exits_1_and_with_it_0(tmp_path):
    for shut_down, expected in ((False, 1), (True, 0)):
        server = WireServer()
        server.initialize(str(tmp_path))
        if shut_down:
            server.request(1, "shutdown")
        server.process.stdin.close()
        assert server.exit_code() == expected
        server.kill()


def test_headers_split_across_writes_and_a_content_type_header_are_read(wire):
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "pallas/probe"}).encode()
    data = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    for byte in data:
        wire.raw(bytes([byte]))
    assert wire.response(9)["error"]["code"] == METHOD_NOT_FOUND
    assert wire.errors_without_id() == []


# ---- FrameReader alone ---------------------------------------------------------------------------

def feed_all(reader: FrameReader, data: bytes, step: int) -> list:
    events = []
    for i in range(0, len(data), step):
        events += reader.feed(data[i:i + step])
    return events


@pytest.mark.parametrize("step", [1, 3, 7, 1000])
def test_bodies_come_out_whole_whatever_the_chunking(step):
    data = frame(b'{"a": 1}') + b"\r\n" + frame(b"[]") + frame(b"x" * 500)
    assert feed_all(FrameReader(), data, step) == [Body(b'{"a": 1}'), Body(b"[]"), Body(b"x" * 500)]


def test_garbage_gives_one_error_then_the_reader_resynchronises_on_the_next_header():
    data = b"garbage\r\nmore garbage" * 50 + frame(b"{}") + b"Content-Length: 3\r\nNot a header\r\n\r\n" + frame(b"[]")
    events = feed_all(FrameReader(), data, 5)
    assert events == [Junk(PARSE_ERROR, "not an LSP header: b'garbage'"), Body(b"{}"),
                      Junk(PARSE_ERROR, "not an LSP header: b'Not a header'"), Body(b"[]")]


def test_an_oversized_body_is_skipped_in_bounded_memory():
    reader = FrameReader(max_message=100, max_header=64)
    events = reader.feed(b"Content-Length: 1000\r\n\r\n")
    for _ in range(100):
        events += reader.feed(b"y" * 1000)
        assert len(reader.buffer) <= 64
    events += reader.feed(frame(b"{}"))
    assert events == [Junk(INVALID_REQUEST, "a message of 1000 bytes; the limit is 100"), Body(b"{}")]


def test_an_endless_header_line_is_an_error_not_a_memory_leak():
    reader = FrameReader(max_header=64)
    events = []
    for _ in range(100):
        events += reader.feed(b"Content-Type: " + b"z" * 1000)
        assert len(reader.buffer) <= 1064
    assert events == [Junk(PARSE_ERROR, "a header line longer than 64 bytes")]
