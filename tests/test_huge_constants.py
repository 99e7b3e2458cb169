"""Huge constants: folding is bounded (analysis/arithmetic.py), and no finding is lost to another's failure.

`N = 10 ** 10 ** 10` in a kernel's shape made `pallas-lsp check` run forever and froze the server (no
diagnostics for any file, `shutdown` unanswered); `N = 10 ** 5000` was folded, then printing it in a
message raised (Python's int-to-str limit): `check` exited 2, the server published [] for a file with a
real PAL001. A value too big to fold is now unknown; the file's other findings are reported.

The subprocess bounds are a safety net against a hang, not a timing assertion: a healthy run takes about
a second.
"""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys
import textwrap

import pytest

from conftest import jax_python
from lsp_wire import WireServer
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.values import UNKNOWN, Const, Seq, int_text
from pallas_lsp.engine import analyze

HANGS = "10 ** 10 ** 10"  # 33 billion bits: computing it never ends
RAISES = "10 ** 5000"  # 5,001 digits: over Python's int-to-str limit (4,300) in a message

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = {huge}
X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""
# Where the huge number goes: a get_global's type, a kernel's scratch (its shared memory), its output type.
PLACES = {
    "get_global": """

def huge(o_ref):
    buf = pl.get_global(plgpu.GMEM((N,), jnp.float32))
    o_ref[...] = buf[...]
""",
    "scratch_types": """

def huge(x_ref, o_ref, buf):
    o_ref[...] = x_ref[...]


kernel = plgpu.kernel(huge, out_type=X, scratch_types=[plgpu.SMEM((N,), jnp.float32)])
""",
    "out_type": """

def huge(x_ref, o_ref):
    o_ref[...] = x_ref[...]


kernel = plgpu.kernel(huge, out_type=jax.ShapeDtypeStruct((N,), jnp.float32))


def run(x):
    return kernel(x)


run(jnp.zeros((N,), jnp.float32))
""",
}
# The same file's real finding, below the huge one.
REAL = """

def body(o_ref):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    o_ref[...] = buf[...]
"""
REAL_MESSAGE = ('JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it as scratch. '
                "Use scratch_shapes for pallas_call, scratch_types for plgpu.kernel and pl.kernel, or pl.run_scoped; "
                "get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")
HUGE_MESSAGE = ('JAX: "get_global only supports semaphores, got plgpu.GMEM((N,), jnp.float32) (a GMEM buffer)"; '
                "pass the array as a kernel input.")


def source(place: str, huge: str) -> str:
    return HEADER.format(huge=huge) + PLACES[place] + REAL


def line_of(text: str, snippet: str) -> int:
    """0-based line of the first line holding `snippet`."""
    return next(n for n, line in enumerate(text.splitlines()) if snippet in line)


def write_places(folder, huge: str) -> dict[str, str]:
    texts = {place: source(place, huge) for place in PLACES}
    for place, text in texts.items():
        (folder / f"{place}.py").write_text(text)
    return texts


# ---- the folder, on real parses -------------------------------------------------------------------------

CHAIN = "".join(f"a{i} = (a{i - 1}, a{i - 1})\n" for i in range(1, 61))  # 2**60 values, shared
TOO_BIG = {
    "power tower": "X = 10 ** 10 ** 10",
    "shift": "X = 2 << 10 ** 10",
    "shift of a power": "X = (1 << 10 ** 6) << 10 ** 6",
    "power of a power": "X = (2 ** 1000) ** (2 ** 20)",
    "repeated squaring": "A = 10 ** 300\nB = A * A\nC = B * B\nX = C * C",
    "over the int-to-str limit": "X = 10 ** 5000",
    "its negative": "X = -(10 ** 5000) // 3",
    "hex literal": "X = 0x" + "f" * 5000,
    "list repeated": "X = [0] * 10 ** 12",
    "string repeated": "X = 'a' * 10 ** 12",
    "bytes repeated": "X = 10 ** 12 * b'a'",
    "tuple repeated": "X = (1,) * 10 ** 10",
    "tuple of tuples repeated": "X = ((1,) * 4000,) * 4000",
    "math.prod of a repeated tuple": "import math\nX = math.prod((10 ** 400,) * 1000)",
    "joined until too long": "a0 = [0] * 4096\na1 = a0 + a0\nX = a1",
    "nested tuples through names": "def helper(t):\n    return t\n\n\na0 = (1, 2)\n" + CHAIN + "X = helper(a60)",
    "a parameter": "def f(n):\n    return 7 ** n\n\n\nX = f(10 ** 10)",
    "a list repeated in a function": "def f(n):\n    return [n] * n\n\n\nX = f(10 ** 9)",
}
STILL_FOLDED = {
    "X = 2 ** 10": Const(1024),
    "X = 1 << 14": Const(16384),
    "X = 10 ** 300 // 10 ** 299": Const(10),
    "X = 2 ** -1": Const(0.5),
    "X = 'ab' * 2 + 'c'": Const("ababc"),
    "X = (128,) * 2": Seq((Const(128), Const(128))),
    "X = 2 * [0] + [1]": Seq((Const(0), Const(0), Const(1))),
    "X = 0xff & 0x0f | 0x100": Const(0x10f),
    "X = 1 // 0": UNKNOWN,
    "X = 1 << -1": UNKNOWN,
    "X = (-8) ** 0.5": UNKNOWN,  # a complex number
}


def value_of(tmp_path, text: str):
    """The value of `X` in `text`, from the analysis core in this process."""
    path = tmp_path / "consts.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    model = project.model(str(path))
    statement = next(s for s in model.tree.body if isinstance(s, ast.Assign) and s.targets[0].id == "X")
    return project.evaluator.value(model, statement.value)


# Run in a child process: a hang in C (Python computing 10 ** 10 ** 10) holds the GIL, so no timer in the
# test process could stop it; the child is killed at the bound instead.
FOLD_IN_CHILD = """
import ast, sys
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.values import UNKNOWN, Seq
project = Project(root=sys.argv[1], python=sys.argv[2])
model = project.model(sys.argv[1] + "/consts.py")
statement = next(s for s in model.tree.body if isinstance(s, ast.Assign) and s.targets[0].id == "X")
value = project.evaluator.value(model, statement.value)
# The tuples through names: a12 would hold 2**13 values, so it is unknown, and a60 is made of unknowns.
while isinstance(value, Seq) and len(value.items) == 2 and value.items[0] == value.items[1]:
    value = value.items[0]
print("unknown" if value is UNKNOWN else f"known: {type(value).__name__}")
"""


def in_child(code: str, *args: str) -> str:
    run = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.strip()


@pytest.mark.parametrize("text", TOO_BIG.values(), ids=TOO_BIG.keys())
def test_a_value_too_big_to_fold_is_unknown(tmp_path, text):
    (tmp_path / "consts.py").write_text(text)
    assert in_child(FOLD_IN_CHILD, str(tmp_path), jax_python()) == "unknown"


@pytest.mark.parametrize("text, expected", STILL_FOLDED.items(), ids=STILL_FOLDED.keys())
def test_ordinary_constants_still_fold(tmp_path, text, expected):
    assert value_of(tmp_path, text) == expected


def test_numbers_in_messages_never_raise():
    assert int_text(10 ** 5000) == "≈1e+5000"
    assert int_text(-3 * 10 ** 4999) == "≈-3e+4999"
    assert (int_text(262176), int_text(262176, grouped=True)) == ("262176", "262,176")


@pytest.mark.parametrize("huge", [HANGS, RAISES])
def test_trace_arguments_from_a_huge_shape_are_not_found(tmp_path, huge):
    """What the server's code lens asks of every launch: the call's shapes, folded by the trace's own reader."""
    (tmp_path / "k.py").write_text(source("out_type", huge))
    code = ("import sys\nfrom pallas_lsp.trace.targets import ArgsNotFound, resolve_args\n"
            "try:\n    print(resolve_args(open(sys.argv[1]).read(), 'run'))\n"
            "except ArgsNotFound as error:\n    print(error)\n")
    assert in_child(code, str(tmp_path / "k.py")).endswith("(jnp.zeros((N,), jnp.float32)) has no static shape")


# ---- pallas-lsp check ----------------------------------------------------------------------------------

@pytest.mark.parametrize("huge", [HANGS, RAISES])
def test_check_exits_normally_and_reports_the_files_other_findings(tmp_path, jax_env, huge):
    texts = write_places(tmp_path, huge)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", jax_env, "."],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 1, run.stderr[-3000:]
    found = {(f["path"], f["line"] - 1, f["code"], f["message"].split(". ")[0] + ".") for f in json.loads(run.stdout)}
    real = REAL_MESSAGE.split(". ")[0] + "."
    assert found == {(f"{place}.py", line_of(text, "SMEM((128,)"), "PAL001", real) for place, text in texts.items()} | {
        ("get_global.py", line_of(texts["get_global"], "GMEM((N,)"), "PAL001", HUGE_MESSAGE)}
    assert "Traceback" not in run.stderr and "failed" not in run.stderr


# ---- the server -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("huge", [HANGS, RAISES])
def test_the_server_publishes_the_real_findings_and_answers_shutdown(tmp_path, huge):
    """The number in every place, one server: diagnostics for each file (before: none at all, the server deaf;
    or [] for the file), hover on the huge get_global, code lenses (the trace's argument reader) and
    `shutdown` all answered."""
    server = WireServer(cwd=tmp_path)
    try:
        assert "result" in server.initialize(str(tmp_path), python=jax_python())
        for place, text in write_places(tmp_path, huge).items():
            uri = f"file://{tmp_path}/{place}.py"
            server.open(uri, text)
            published = {(d["code"], d["range"]["start"]["line"], d["message"]) for d in server.published(uri)}
            assert ("PAL001", line_of(text, "SMEM((128,)"), REAL_MESSAGE) in published, (place, published)
            line = line_of(text, "GMEM((N,)" if place == "get_global" else "def huge")
            hover = server.request(f"hover-{place}", "textDocument/hover", {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": 16}})
            lenses = server.request(f"lens-{place}", "textDocument/codeLens", {"textDocument": {"uri": uri}})
            assert "error" not in hover and "error" not in lenses, (hover, lenses)
        assert server.request("bye", "shutdown") == {"jsonrpc": "2.0", "id": "bye", "result": None}
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.exit_code() == 0
    finally:
        server.kill()


# ---- one failure never costs another finding ------------------------------------------------------------

# Each of these made a rule (or the kernel model every rule reads) raise on the code before: the whole file's
# analysis failed (`check` exit 2, the server published nothing for it). Each kernel has a finding of its own.
CRASHED_BEFORE = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def message_too_long(o_ref):
    buf = pl.get_global(plgpu.GMEM((0x{hex},), jnp.float32))


def zero_step(o_ref):
    for i in range(0, 4, 0):
        pl.get_global(plgpu.SemaphoreType.REGULAR)


def endless(o_ref):
    for i in range(10 ** 20):
        pl.get_global(plgpu.SemaphoreType.REGULAR)


def scratch_too_big(x_ref, o_ref, buf):
    o_ref[...] = x_ref[...]


def over_budget(x_ref, o_ref, buf):
    o_ref[...] = x_ref[...]


zero_step_kernel = plgpu.kernel(zero_step, out_type=X)
endless_kernel = plgpu.kernel(endless, out_type=X)
too_big = plgpu.kernel(scratch_too_big, out_type=X, scratch_types=[plgpu.SMEM((10 ** 5000,), jnp.float32)])
over = plgpu.kernel(over_budget, out_type=X, scratch_types=[plgpu.SMEM((65536,), jnp.float32)])
""".replace("{hex}", "f" * 5000)


def test_inputs_that_crashed_a_rule_keep_every_other_finding(tmp_path, caplog):
    """Findings of PAL001, PAL004 and PAL012 next to each input that used to raise; none raises now (the
    engine would log one: `RuleContext.isolated`, `engine._rule_findings`)."""
    path = tmp_path / "crashed.py"
    path.write_text(CRASHED_BEFORE)
    with caplog.at_level(logging.WARNING, logger="pallas_lsp"):
        findings = analyze(Project(root=str(tmp_path), python=jax_python()), str(path))
    lines = CRASHED_BEFORE.splitlines()
    assert sorted((f.code, lines[f.span.line].strip()) for f in findings) == [
        ("PAL001", "buf = pl.get_global(plgpu.GMEM((0x" + "f" * 5000 + ",), jnp.float32))"),
        ("PAL004", "pl.get_global(plgpu.SemaphoreType.REGULAR)"),  # the endless loop's second run
        ("PAL012", "over = plgpu.kernel(over_budget, out_type=X, scratch_types=[plgpu.SMEM((65536,), jnp.float32)])")]
    assert next(f for f in findings if f.code == "PAL004").span.line == lines.index("def endless(o_ref):") + 2
    assert caplog.records == []


def test_the_cli_reports_them_with_exit_1(tmp_path, jax_env):
    (tmp_path / "crashed.py").write_text(CRASHED_BEFORE)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", jax_env,
                          "crashed.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 1, run.stderr[-3000:]
    assert sorted(f["code"] for f in json.loads(run.stdout)) == ["PAL001", "PAL004", "PAL012"]
    assert textwrap.shorten(run.stderr, 300) == ""
