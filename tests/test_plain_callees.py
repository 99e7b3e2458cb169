"""The searches over every call of a module (entry points, interpret switches, a Pallas API's aliases) leave out
callees that cannot be a kernel or a Pallas API before evaluating them (`analysis/plain_callees.py`): standard-library
names and an array's own methods. A workspace module named like a standard one is no standard-library module: its
launch function still launches the kernel."""

import contextlib

import pytest
from conftest import FIXTURES, at

from pallas_lsp.analysis import Project, reads
from pallas_lsp.analysis.plain_callees import plain_callee

FIXTURE = (FIXTURES / "agreement" / "bad_launch_wrapper_function_alias_in_other_module.py").read_text()
LAUNCHER = (FIXTURES / "agreement" / "pkg_helpers" / "test_cases.py").read_text()

CALLS = """\
import collections
import os.path
from collections import defaultdict
from functools import partial
import numpy as np
from jax.experimental import pallas as pl

counts = defaultdict(int)
where = os.path.join("a", "b")
seen = collections.Counter()
y = np.ones((8,)).reshape(2, 4).astype(np.float32)
run = partial(pl.pallas_call, interpret=True)
grid = pl.cdiv(8, 2)
squares = [defaultdict(x) for defaultdict in (int, float)]
"""


def _plain(ws, source: str, name: str = "module.py") -> list[tuple[int, str, bool]]:
    """(line, callee, left out) of each call of the module."""
    path = ws.write(name, source)
    project = Project(root=str(ws.root), python=ws.python)
    model = project.model(str(path))
    return sorted((call.lineno, model.segment(call.func), plain_callee(project, model, call)) for call in model.calls)


def test_standard_library_names_and_array_methods_are_left_out(ws):
    # `partial(...)` itself is none (a call of what it makes, `run(...)`, is evaluated); JAX's and numpy's names
    # are evaluated, and so is a comprehension's own `defaultdict`, which no import binds
    assert [(line, callee) for line, callee, plain in _plain(ws, CALLS) if plain] == [
        (8, "defaultdict"), (9, "os.path.join"), (10, "collections.Counter"),
        (11, "np.ones((8,)).reshape"), (11, "np.ones((8,)).reshape(2, 4).astype"), (12, "partial")]


def test_a_workspace_module_named_like_a_standard_one_is_evaluated(ws):
    ws.write("token.py", LAUNCHER)
    bad = FIXTURE.replace("from pkg_helpers import test_cases\n\nrun_kernel = test_cases.launch\n",
                          "from token import launch as run_kernel\n")
    assert "from token import" in bad
    assert ("run_kernel", False) in [(callee, plain) for _, callee, plain in _plain(ws, bad, "kernel.py")]
    found = ws.check("kernel.py", bad)
    assert [(code, where) for code, where, _ in found] == [
        ("PAL005", at(bad, "pltpu.async_copy(x_ref, o_ref, sems)"))]


REBOUND = """\
from functools import partial
from jax.experimental import pallas as pl


def launch(body):
    wrapper = body

    def inner(x):
        return partial(x)

    return inner
"""


@pytest.mark.parametrize("tracking", [True, False], ids=["server", "check"])
def test_an_answer_for_a_call_is_not_kept_past_an_edit_elsewhere_rebinding_its_name(ws, tracking):
    # Where nothing is tracked (`check`) the answer is kept per call (three searches ask it of every call): an edit
    # of the enclosing function binding `partial` to something else makes the call in `inner` one to evaluate
    path = str(ws.write("module.py", REBOUND))
    project = Project(root=str(ws.root), python=ws.python)
    with contextlib.nullcontext() if tracking else reads.not_tracking():
        model = project.model(path)
        call = next(c for c in model.calls if model.segment(c.func) == "partial")
        assert plain_callee(project, model, call) and plain_callee(project, model, call)
        edited = REBOUND.replace("wrapper = body", "partial = pl.pallas_call")
        project.set_text(path, edited)
        patched = project.model(path)
        assert patched is model and call in patched.calls  # patched in place: the call is the same node
        assert not plain_callee(project, patched, call)
        fresh = Project(root=str(ws.root), python=ws.python)
        fresh.set_text(path, edited)
        again = fresh.model(path)
        assert [plain_callee(fresh, again, c) for c in again.calls if again.segment(c.func) == "partial"] == [False]


def test_in_the_server_an_answer_is_kept_per_call_and_notes_its_look_ups_where_used_again(ws, monkeypatch):
    # Kept with the keys its look-ups read, which every computation using it reads too (a search kept with what it
    # read, the module's entry points, must still be forgotten by an edit rebinding the name); an edit that does
    # not rebind it keeps it, one that does drops it (the test above).
    from pallas_lsp.analysis import plain_callees

    path = str(ws.write("module.py", REBOUND))
    project = Project(root=str(ws.root), python=ws.python)
    model = project.model(path)
    call = next(c for c in model.calls if model.segment(c.func) == "partial")
    asked = []
    look_up = plain_callees._standard_library_name
    monkeypatch.setattr(plain_callees, "_standard_library_name", lambda *a: asked.append(a) or look_up(*a))
    noted = []
    for _ in range(2):
        reads.begin()
        assert plain_callee(project, model, call)
        noted.append(reads.end().direct)
    assert len(asked) == 1 and noted[0] == noted[1]
    inner = model.enclosing_function(call)
    assert ("bind", id(inner), "partial") in noted[1]
    edited = REBOUND.replace("wrapper = body", "wrapped = body")
    project.set_text(path, edited)
    assert project.model(path) is model and plain_callee(project, model, call) and len(asked) == 1
