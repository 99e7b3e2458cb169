"""Malformed `pallas.trace` arguments, sent over the wire to the real `pallas-lsp serve`: each gets a
JSON-RPC InvalidParams error with one line that says what is wrong (no traceback), nothing is
traced, and the server keeps serving. No jax is needed: nothing here reaches a trace worker."""

import os
import sys
import time

import pytest

from lsp_wire import WireServer

USAGE = "pallas.trace takes [file URI, function name or {line, character}, options?]: "
INVALID_PARAMS = -32602


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("def add_one(x):\n    return x + 1\n")
    return path


@pytest.fixture
def wire(tmp_path):
    server = WireServer(env={**os.environ, "PALLAS_LSP_TRACE_MEMORY_MB": "512"}, cwd=tmp_path)
    server.initialize(str(tmp_path), python=sys.executable)
    yield server
    server.kill()


def bad_arguments(uri):
    """(arguments, what the error says after the usage line)."""
    big = 10**30
    return [
        ([], "got 0 arguments"),
        ([uri], "got 1 argument"),
        ([uri, "add_one", {}, "more"], "got 4 arguments"),
        ([123, "add_one"], "the URI is a number, not a string"),
        ([None, "add_one"], "the URI is null, not a string"),
        ([{"uri": uri}, "add_one"], "the URI is an object, not a string"),
        (["https://example.com/k.py", "add_one"], "not a local file URI: 'https://example.com/k.py'"),
        (["file://elsewhere/k.py", "add_one"], "not a local file URI: 'file://elsewhere/k.py'"),
        (["untitled:Untitled-1", "add_one"], "not a local file URI: 'untitled:Untitled-1'"),
        (["k.py", "add_one"], "not a local file URI: 'k.py'"),
        (["file://", "add_one"], "not a file path: 'file://'"),
        (["file:///tmp/k%00.py", "add_one"], "not a file path: 'file:///tmp/k%00.py'"),
        ([uri, None], "the function is null, neither a name nor a position"),
        ([uri, 5], "the function is a number, neither a name nor a position"),
        ([uri, True], "the function is a boolean, neither a name nor a position"),
        ([uri, ["add_one"]], "the function is a list, neither a name nor a position"),
        ([uri, ""], "not a Python function name: ''"),
        ([uri, "add one"], "not a Python function name: 'add one'"),
        ([uri, "x" * 500 + "!"], "not a Python function name: '" + "x" * 79 + "..."),
        ([uri, {"line": -1}], "the position's line is not an integer from 0 to 2147483647: -1"),
        ([uri, {"line": 1.5}], "the position's line is not an integer from 0 to 2147483647: 1.5"),
        ([uri, {"line": "3"}], "the position's line is not an integer from 0 to 2147483647: '3'"),
        ([uri, {"line": True}], "the position's line is not an integer from 0 to 2147483647: True"),
        ([uri, {"line": big}], f"the position's line is not an integer from 0 to 2147483647: {big}"),
        ([uri, {"line": float("inf")}], "the position's line is not an integer from 0 to 2147483647: inf"),
        ([uri, {"line": 2**31}], "the position's line is not an integer from 0 to 2147483647: 2147483648"),
        ([uri, {"line": {"deep": [1, {"x": [[]]}]}}],
         "the position's line is not an integer from 0 to 2147483647: {'deep': [1, {'x': [[]]}]}"),
        ([uri, {"line": 1, "character": -2}], "the position's character is not an integer from 0 to 2147483647: -2"),
        ([uri, {"character": 2}], "the position has no line"),
        ([uri, "add_one", "cuda"], "the options are a string, not an object"),
        ([uri, "add_one", ["host"]], "the options are a list, not an object"),
        ([uri, "add_one", {"platform": 5}], "option platform is a number, not a string"),
        ([uri, "add_one", {"platform": "rocm"}], "unknown platform 'rocm' (use one of cuda, tpu, host)"),
        ([uri, "add_one", {"compile": "yes"}], "option compile is a string, not a boolean"),
        ([uri, "add_one", {"args": ["f32[8]"]}], "option args is a list, not a string"),
        ([uri, "add_one", {"args": {"nested": [[{"junk": None}]]}}], "option args is an object, not a string"),
        ([uri, "add_one", {"timeout": 1}], "unknown option 'timeout' (known: args, platform, compile)"),
    ]


def test_every_malformed_argument_gets_invalid_params_and_the_server_keeps_serving(wire, kernel):
    uri = kernel.as_uri()
    cases = bad_arguments(uri)
    for number, (arguments, _) in enumerate(cases, start=1):
        wire.send({"jsonrpc": "2.0", "id": number, "method": "workspace/executeCommand",
                   "params": {"command": "pallas.trace", "arguments": arguments}})
    answers = [wire.response(number) for number in range(1, len(cases) + 1)]
    got = [(answer.get("error") or {}).get("code") for answer in answers]
    assert got == [INVALID_PARAMS] * len(cases), [a for a in answers if "error" not in a or a["error"]["code"] != INVALID_PARAMS]
    assert [answer["error"]["message"] for answer in answers] == [USAGE + why for _, why in cases]
    assert [answer["error"].get("data") for answer in answers] == [None] * len(cases)  # no traceback
    assert all("\n" not in answer["error"]["message"] for answer in answers)

    # Still serving: a well-formed trace of a name that is not there is answered as a result.
    fine = wire.request(len(cases) + 1, "workspace/executeCommand",
                        {"command": "pallas.trace", "arguments": [uri, "missing", {"platform": "host"}]})
    assert (fine["result"]["ok"], fine["result"]["error"]["type"]) == (False, "TargetNotFound")
    assert b"Traceback" not in wire.stderr


@pytest.mark.parametrize("arguments, message", [
    ("k.py", "workspace/executeCommand: the arguments are a string, not a list"),
    ({"uri": "file:///k.py"}, "workspace/executeCommand: the arguments are an object, not a list"),
    (7, "workspace/executeCommand: Invalid Params"),
    (1e400, "workspace/executeCommand: Invalid Params"),
], ids=["a string", "an object", "a number", "an infinite number"])
def test_arguments_that_are_not_a_list_get_invalid_params(wire, kernel, arguments, message):
    answer = wire.request(1, "workspace/executeCommand", {"command": "pallas.trace", "arguments": arguments})
    assert answer["error"] == {"code": INVALID_PARAMS, "message": message}


def test_the_log_says_one_line_per_bad_request(wire, kernel):
    answer = wire.request(1, "workspace/executeCommand", {"command": "pallas.trace", "arguments": [kernel.as_uri(), 5]})
    assert answer["error"]["code"] == INVALID_PARAMS
    line = ('pallas-lsp: warning: message "1" answered InvalidParams: ' + USAGE
            + "the function is a number, neither a name nor a position")
    deadline = time.monotonic() + 30  # the log line is written just after the answer, on the server's side
    while line not in wire.stderr.decode().splitlines() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert line in wire.stderr.decode().splitlines()
    assert "Traceback" not in wire.stderr.decode()
