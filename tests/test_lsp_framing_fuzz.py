"""Property-based fuzz of the LSP framing (docs/reliability.md records the figures).

Corrupted headers, lying and huge lengths, mutated bodies, wrong-typed params and random write splits
go first to `FrameReader` alone (small limits, many inputs) and then to the real `pallas-lsp serve`
over stdio. The properties: the reader's memory stays bounded and it decodes the well-formed messages
that follow any corruption; the server answers every well-framed request (an error response counts)
and, after any corruption, answers the next well-formed requests: it never dies or goes deaf.
A hang fails on a bounded event wait (lsp_wire.ANSWER_SECONDS), never on a sleep.

PALLAS_LSP_FUZZ_EXAMPLES_SCALE multiplies the number of inputs (1: the CI budget below).
"""

import itertools
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_wire import WireServer, frame
from pallas_lsp.lsp.transport import Body, FrameReader

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("PALLAS_LSP_FUZZ_EXAMPLES_SCALE", "1"))
READER_EXAMPLES = int(800 * SCALE)
SERVER_EXAMPLES = int(150 * SCALE)
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

REQUESTS = ["textDocument/hover", "textDocument/codeAction", "textDocument/codeLens", "textDocument/diagnostic",
            "textDocument/definition", "workspace/symbol", "pallas/unknown"]
NOTIFICATIONS = ["textDocument/didChange", "textDocument/didClose", "textDocument/didSave", "$/cancelRequest",
                 "workspace/didChangeConfiguration", "pallas/unknown"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["uri", "textDocument", "position", "line", "character", "range", "context",
                         "diagnostics", "contentChanges", "text", "version", "id", "settings", "x"]),
        inner, max_size=5),
    max_leaves=8)


def message_bodies(methods):
    return st.builds(lambda method, params, msg_id: json.dumps(
        {"jsonrpc": "2.0", "method": method, "params": params, **({} if msg_id is None else {"id": msg_id})}).encode(),
        st.sampled_from(methods), json_values, st.none() | st.integers(10**6, 10**9))


@st.composite
def mutated(draw, framed: bytes) -> bytes:
    data = bytearray(framed)
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, max(0, len(data) - 1)))
        kind = draw(st.sampled_from(["flip", "drop", "insert", "truncate"]))
        if kind == "flip" and data:
            data[position] = draw(st.integers(0, 255))
        elif kind == "drop" and data:
            del data[position:position + draw(st.integers(1, 8))]
        elif kind == "insert":
            data[position:position] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[position:]
    return bytes(data)


def corruptions(lengths, bodies):
    header = lengths.map(lambda n: b"Content-Length: %d\r\n" % n)
    pieces = st.one_of(
        st.binary(max_size=40),
        st.sampled_from([b"\r\n", b"\n", b"\r\n\r\n", b"Content-Type: application/json\r\n", b":", b"{", b"}",
                         b"Content-Length:\r\n", b"Content-Length: -1\r\n", b"Content-Length: 1e3\r\n",
                         b"Content-Length: 0x10\r\n", b"Content-Length: \xd9\xa3\r\n", b'"jsonrpc": "2.0"']),
        header,
        st.builds(lambda h, body: h + b"\r\n" + body, header, st.binary(max_size=60)),
        bodies.map(frame),
        bodies.map(frame).flatmap(mutated),
    )
    return st.lists(pieces, min_size=1, max_size=12).map(b"".join)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


# ---- the reader alone: small limits, every length ----------------------------------------------------

MAX_MESSAGE, MAX_HEADER = 512, 128
PROBE = b'{"jsonrpc": "2.0", "id": "probe", "method": "pallas/probe"}'


@settings(FUZZ, max_examples=READER_EXAMPLES)
@given(corruption=corruptions(st.integers(0, 2**64), st.binary(max_size=80) | st.just(PROBE)), cuts=st.lists(st.integers(0, 10**6), max_size=30))
def test_the_reader_stays_bounded_and_recovers_after_any_corruption(corruption, cuts):
    reader = FrameReader(max_message=MAX_MESSAGE, max_header=MAX_HEADER)
    probes = frame(PROBE) * ((MAX_MESSAGE + MAX_HEADER) // len(frame(PROBE)) + 3)
    events = []
    for chunk in split(corruption + probes, cuts):
        events += reader.feed(chunk)
        assert len(reader.buffer) <= MAX_MESSAGE + MAX_HEADER + len(chunk)
    assert events and events[-1] == Body(PROBE)


@settings(FUZZ, max_examples=READER_EXAMPLES // 3)
@given(bodies=st.lists(st.binary(max_size=MAX_MESSAGE), min_size=1, max_size=6),
       cuts=st.lists(st.integers(0, 10**6), max_size=30))
def test_well_framed_messages_come_out_exactly_however_the_writes_are_split(bodies, cuts):
    reader = FrameReader(max_message=MAX_MESSAGE, max_header=MAX_HEADER)
    events = []
    for chunk in split(b"".join(frame(b) for b in bodies), cuts):
        events += reader.feed(chunk)
    assert events == [Body(b) for b in bodies]


# ---- the real server over stdio -------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = WireServer()
    server.initialize(str(tmp_path_factory.mktemp("ws")))
    yield server
    server.kill()


ids = itertools.count(1)


def answered(server: WireServer, msg_id) -> dict:
    answer = server.response(msg_id)
    assert answer is not None, f"the server exited (code {server.process.poll()}); stderr: {server.stderr[-2000:]!r}"
    return answer


@settings(FUZZ, max_examples=SERVER_EXAMPLES)
@given(body=message_bodies(REQUESTS))
def test_every_well_framed_request_is_answered(server, body):
    message = json.loads(body)
    message["id"] = msg_id = f"r{next(ids)}"
    server.send(message)
    answer = answered(server, msg_id)
    assert ("result" in answer) != ("error" in answer)


# Over the wire a declared length the bytes do not reach leaves the server waiting for them (they may
# still be on their way); the reader test above covers those lengths with a small limit. Here a
# length is either one the probes can fill or beyond the 64 MiB limit.
SERVER_LENGTHS = st.integers(0, 4096) | st.integers(64 * 1024 * 1024 + 1, 2**64)


@settings(FUZZ, max_examples=SERVER_EXAMPLES)
@given(corruption=corruptions(SERVER_LENGTHS, message_bodies(REQUESTS + NOTIFICATIONS)), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_after_any_corruption_the_server_answers_the_next_requests(server, corruption, cuts):
    probes = [{"jsonrpc": "2.0", "id": f"p{next(ids)}", "method": "pallas/probe"} for _ in range(4096 // 60 + 4)]
    for chunk in split(corruption + b"".join(frame(p) for p in probes), cuts):
        server.raw(chunk)
    assert answered(server, probes[-1]["id"])["error"]["code"] == -32601
    assert server.process.poll() is None
