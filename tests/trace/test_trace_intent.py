"""What a trace request means (issue 22): a position or a name inside a kernel body traces the launch
that runs the body (asking which when there are several), never the body as a plain function; an
interpret-mode kernel is traced the way it runs, on the host, unless a platform is asked for; the
report says which platform and why. Real JAX through the CLI, and the real server over stdio."""

import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, jax_python
from lsp_wire import WireServer

pytestmark = pytest.mark.jax

GOOD = REPO / "examples" / "kernels" / "good_semaphore_ordering.py"
INTERPRETED = REPO / "examples" / "kernels" / "pal002_interpret_semaphore.py"
LAUNCHES = FIXTURES / "trace" / "launches.py"
COMPILED = "platform cuda: the kernel is compiled for a GPU (cross-lowered where there is none)"
HOST = ("host: the kernel runs in interpret mode, interpret=plgpu.InterpretGPUParams() (line 51), so it is traced "
        "as it runs, on the CPU (platform cuda lowers it for a GPU instead)")
GOOD_BODY = ("ordered_halves (line 23) is a kernel body: traced through ordered_double (line 39), "
             "which is the kernel that runs it")
NO_IR_TYPE_HANDLER = "No ir_type_handler for aval type: <class 'jax._src.state.types.AbstractRef'>"


def cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", *args, "--python", jax_python()],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize("target", ["examples/kernels/good_semaphore_ordering.py::ordered_halves",
                                    "examples/kernels/good_semaphore_ordering.py:30"],  # inside the body's pl.when
                         ids=["the body by name", "a line of the body"])
def test_cli_traces_the_launch_that_runs_a_kernel_body(target):
    run = cli(target)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[:3] == ["trace examples/kernels/good_semaphore_ordering.py::ordered_double(f32[2,128])  "
                         "[arguments from comment on line 38]", GOOD_BODY, COMPILED]
    assert lines[-2:] == ["kernel ordered_halves (examples/kernels/good_semaphore_ordering.py:23): shared memory 0 bytes, "
                          "0 barriers, 0 TMEM columns, 1 global semaphore", "OK"]
    assert "missing 1 required positional argument" not in run.stdout


def test_cli_lists_the_launches_of_a_body_run_by_several_and_traces_none():
    run = cli("tests/fixtures/trace/launches.py:15")  # in `scale`, a helper the body `double` calls
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        "pallas-lsp: error: scale (line 14) is kernel code (reached from the body double), run by 2 launches: "
        "small (line 19), blocks (line 21). Trace one of them by name: "
        "tests/fixtures/trace/launches.py::small, tests/fixtures/trace/launches.py::blocks"]
    chosen = cli("tests/fixtures/trace/launches.py::blocks")
    assert chosen.returncode == 0 and chosen.stdout.splitlines()[-1] == "OK", chosen.stdout


def test_cli_traces_an_interpret_mode_kernel_on_the_host_and_says_why():
    run = cli("examples/kernels/pal002_interpret_semaphore.py::ordered_double")
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[1] == f"platform {HOST}"
    assert lines[2].endswith("; lowering for cpu")
    assert lines[-2:] == [f"FAILED (lower): TypeError: {NO_IR_TYPE_HANDLER}",
                          "  examples/kernels/pal002_interpret_semaphore.py:35  get_global(Ref<gmem>{semaphore[]})"]


def test_cli_platform_asked_for_wins_over_interpret_mode():
    run = cli("examples/kernels/pal002_interpret_semaphore.py::ordered_double", "--platform", "cuda")
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[1] == "platform cuda: asked for (--platform)"
    assert lines[-1] == ("FAILED (lower): ValueError: the platform for the specified backend cpu is different "
                         "from the lowering platform cuda")


def test_cli_a_plain_function_is_traced_as_itself():
    run = cli("tests/fixtures/trace/launches.py::plain", "--args", "f32[4]")
    assert run.returncode == 0, run.stdout
    assert run.stdout.splitlines()[:2] == [
        "trace tests/fixtures/trace/launches.py::plain(f32[4])  [arguments from --args]",
        "platform cuda: the default (the analysis sees no kernel it runs, interpreted or not)"]


def test_cli_line_outside_any_function_is_a_usage_error():
    run = cli("examples/kernels/good_semaphore_ordering.py:5")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == "pallas-lsp: error: no module-level function at line 5 in good_semaphore_ordering.py\n"


# ---- over LSP ---------------------------------------------------------------------------------------

@pytest.fixture
def wire():
    server = WireServer(env={**os.environ, "PALLAS_LSP_TRACE_MEMORY_MB": "512"}, cwd=REPO)
    server.initialize(str(REPO), python=jax_python())
    yield server
    server.kill()


def execute(wire, msg_id, *arguments):
    wire.send({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand",
               "params": {"command": "pallas.trace", "arguments": list(arguments)}})


def test_position_inside_a_body_traces_its_launch(wire):
    execute(wire, 1, GOOD.as_uri(), {"line": 29, "character": 6})  # `o_ref[0] = ...` in the first pl.when
    result = wire.response(1)["result"]
    assert (result["ok"], result["function"], result["platform"]) == (True, "ordered_double", "cuda"), result
    assert (result["traced_because"], result["kernel_body"]) == (GOOD_BODY, "ordered_halves")
    assert result["platform_reason"] == COMPILED.removeprefix("platform ")
    assert [(k["name"], k["gmem_semaphores"]) for k in result["kernels"]] == [("ordered_halves", 1)]
    shown = wire.wait_for(lambda m: m.get("method") == "window/showMessage")
    assert shown["params"]["message"] == (
        "pallas-trace: ordered_double: JAX 0.12.0.1 lowered it for cuda: kernel ordered_halves: shared memory 0 bytes, "
        f"0 barriers, 0 TMEM columns, 1 global semaphore ({GOOD_BODY})")


@pytest.mark.parametrize("answer, function", [({"title": "blocks"}, "blocks"), (None, None)],
                         ids=["the user picks one", "the user dismisses the question"])
def test_several_launches_are_asked_for(wire, answer, function):
    execute(wire, 1, LAUNCHES.as_uri(), {"line": 10, "character": 4})  # in the body `double`
    question = wire.wait_for(lambda m: m.get("method") == "window/showMessageRequest")
    assert question["params"] == {
        "type": 3, "message": "pallas-lsp: double (line 10) is a kernel body, run by 2 launches: small (line 19), "
                              "blocks (line 21). Which one should be traced?",
        "actions": [{"title": "small"}, {"title": "blocks"}]}
    wire.send({"jsonrpc": "2.0", "id": question["id"], "result": answer})
    result = wire.response(1)["result"]
    if function is not None:
        assert (result["ok"], result["function"]) == (True, function), result
        assert result["traced_because"] == ("double (line 10) is a kernel body: traced through blocks (line 21), "
                                            "which is the kernel that runs it")
    else:
        assert (result["ok"], result["error"]["type"], result["launches"]) == (False, "UsageError", ["small", "blocks"])
        assert result["error"]["message"] == (
            "double (line 10) is a kernel body, run by 2 launches: small (line 19), blocks (line 21); "
            "none was chosen (trace one of them by name)")


def test_interpret_mode_kernel_is_traced_on_the_host_over_lsp(wire):
    execute(wire, 1, INTERPRETED.as_uri(), "ordered_double")  # what its code lens sends
    result = wire.response(1)["result"]
    assert (result["ok"], result["platform"], result["lowering_platform"]) == (False, "host", "cpu")
    assert result["platform_reason"] == HOST
    assert (result["error"]["type"], result["error"]["message"]) == ("TypeError", NO_IR_TYPE_HANDLER)
    assert [loc["line"] for loc in result["error"]["locations"]] == [35]
    shown = wire.wait_for(lambda m: m.get("method") == "window/showMessage")  # for editors without a report view
    assert shown["params"]["message"] == ("pallas-trace: ordered_double: JAX 0.12.0.1 rejected it (lower for cpu): "
                                          f"TypeError: {NO_IR_TYPE_HANDLER} (platform {HOST})")
    execute(wire, 2, INTERPRETED.as_uri(), "ordered_double", {"platform": "cuda"})
    asked = wire.response(2)["result"]
    assert (asked["platform"], asked["platform_reason"]) == ("cuda", "cuda: asked for (the platform option)")


def test_every_launch_gets_a_code_lens_and_those_without_arguments_say_so(wire):
    wire.open(LAUNCHES.as_uri(), LAUNCHES.read_text())
    answer = wire.request(1, "textDocument/codeLens", {"textDocument": {"uri": LAUNCHES.as_uri()}})
    assert [(lens["range"]["start"]["line"], lens["command"]["title"], lens["command"]["arguments"])
            for lens in answer["result"]] == [
        (18, "Trace kernel", [LAUNCHES.as_uri(), "small"]),
        (20, "Trace kernel", [LAUNCHES.as_uri(), "blocks"]),
        (28, "Trace kernel", [LAUNCHES.as_uri(), "add_one"]),
        (32, "Trace kernel (arguments?)", [LAUNCHES.as_uri(), "twice"])]
    execute(wire, 2, LAUNCHES.as_uri(), "twice")  # the lens without arguments: the answer asks for them
    result = wire.response(2)["result"]
    assert (result["error"]["type"], result["suggested_args"]) == ("ArgsNotFound", "f32[128]")
