"""A helper's arguments are evaluated where its returns read them (analysis/lazy_arguments.py): an argument
whose parameter nothing reads costs nothing (a parameter of the caller is not looked up at its call sites in
other modules), and the values of what is read are the values the call passes, call by call."""

import ast

import pytest

from pallas_lsp.analysis import Project
from pallas_lsp.analysis.values import UNKNOWN, Const

UTIL = """\
import jax.numpy as jnp


def width(dtype):
    return jnp.iinfo(dtype).bits


def packing(dtype):
    bits = width(dtype)
    return bits


def scale(x, unused):
    return x * 2


def first(*xs):
    return xs[0]


def named(**options):
    return options["a"]


A = scale(3, packing(jnp.int8))
B = scale(4, None)
C = scale(x=5, unused=1)
D = first(7, 8)
E = named(a=9, b=10)
F = first()
"""

# A module importing the helpers, passing a value for `dtype` that only it knows: modelled only if a call
# site of `packing` is looked for.
CALLER = "from util import packing\n\nVALUE = packing(DTYPE)\n"


def _project(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    (tmp_path / "util.py").write_text(UTIL)
    (tmp_path / "caller.py").write_text(CALLER)
    project = Project(root=str(tmp_path), use_jedi=False)
    return project, project.model(str(tmp_path / "util.py"))


def _assigned(model, name: str) -> ast.expr:
    return next(s.value for s in ast.walk(model.tree) if isinstance(s, ast.Assign)
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name)


def test_an_argument_no_return_reads_is_never_evaluated(tmp_path, monkeypatch):
    """`bits = width(dtype)`: `width` returns an API call whose result is unknown whatever it is given, so
    `dtype` (a parameter of `packing`) is not looked up at `packing`'s call sites: `caller.py` is not modelled."""
    project, model = _project(tmp_path, monkeypatch)
    assert project.evaluator.value(model, _assigned(model, "bits")) is UNKNOWN
    assert str(tmp_path / "caller.py") not in project._models
    # asking for the parameter itself does look there
    project.evaluator.value(model, next(n for n in ast.walk(_assigned(model, "bits")) if isinstance(n, ast.Name)
                                        and n.id == "dtype"))
    assert str(tmp_path / "caller.py") in project._models


@pytest.mark.parametrize("name, expected", [("A", Const(6)), ("B", Const(8)), ("C", Const(10)), ("D", Const(7)),
                                            ("E", Const(9)), ("F", UNKNOWN)])
def test_each_call_gets_the_values_it_passes(tmp_path, monkeypatch, name, expected):
    """The answers of `scale` are kept by the value of `x` (what its return read), not shared between calls
    that pass different ones; `*xs` and `**options` are what the call passes beyond the named parameters."""
    project, model = _project(tmp_path, monkeypatch)
    for other in "ABCDEF":  # every call evaluated first, in order: a later one must not get an earlier answer
        project.evaluator.value(model, _assigned(model, other))
    assert project.evaluator.value(model, _assigned(model, name)) == expected


def test_the_parameters_read_are_remembered_per_function(tmp_path, monkeypatch):
    """What a call of the function evaluates before it looks up a kept answer: `scale` reads `x`, not `unused`."""
    project, model = _project(tmp_path, monkeypatch)
    project.evaluator.value(model, _assigned(model, "B"))
    scale = next(f for f in model.functions if getattr(f, "name", "") == "scale")
    assert project.evaluator.params_read[id(scale)] == ("x",)
    project.evaluator.value(model, _assigned(model, "D"))
    first = next(f for f in model.functions if getattr(f, "name", "") == "first")
    assert project.evaluator.params_read[id(first)] == ("xs",)
