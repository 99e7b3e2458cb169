"""Keystrokes in a TPU module whose kernels PAL013, PAL018, PAL019 and PAL024 model: what they ask of each
kernel (its parameters as JAX passes them, its refused buffers, the subscripts of its refs) is kept with what
it read (`kernel_args.kernel_parameters`, `memory_spaces.refused`, PAL024's `_subscripts`), and a module's
calls of an API are found again before what read them is forgotten (`kernels.pallas_calls`): an edit inside
one kernel's body works that kernel out again, not the others. Each step is compared with a fresh
project's whole analysis, findings that appear and go included."""

from __future__ import annotations

from conftest import jax_python
from pallas_lsp.analysis import Project, kernel_args, memory_spaces
from pallas_lsp.engine import analyze, analyze_incremental

SOURCE = """\
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

rs = pl.run_scoped


def stage(buf_ref):
    buf_ref[0, 0] = 1.0


def first(x_ref, o_ref, acc_ref):
    total = x_ref[0, 0]
    acc_ref[0, 0] = total
    o_ref[...] = x_ref[...]


def second(x_ref, o_ref, best_ref):
    best = x_ref[0, 0]
    best_ref[0, 0] = best
    staged = functools.reduce(max, [1, 2])
    o_ref[...] = x_ref[...] * staged


def run(x):
    out = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    y = pl.pallas_call(first, out_shape=out, grid=(1,),
                       scratch_shapes=[pltpu.SMEM((1, 128), jnp.float32)],
                       compiler_params=pltpu.CompilerParams())(x)
    return pl.pallas_call(second, out_shape=out, grid=(1,),
                          scratch_shapes=[pltpu.SMEM((1, 128), jnp.float32)],
                          compiler_params=pltpu.CompilerParams())(y)
"""


def _counting(monkeypatch) -> dict[str, list[str]]:
    """The bodies whose parameters and refused buffers each analysis works out."""
    counted: dict[str, list[str]] = {"parameters": [], "refused": []}
    parameters, refused = kernel_args._kernel_parameters, memory_spaces._refused

    def count_parameters(project, entry, body, chosen_by, leaves):
        counted["parameters"].append(body.node.name)
        return parameters(project, entry, body, chosen_by, leaves)

    def count_refused(project, kernel):
        counted["refused"].append(kernel.entry.body.node.name)
        return refused(project, kernel)

    monkeypatch.setattr(kernel_args, "_kernel_parameters", count_parameters)
    monkeypatch.setattr(memory_spaces, "_refused", count_refused)
    return counted


def _typed(project: Project, path: str, tmp_path, text: str, old: str, new: str, counted: dict) -> tuple[str, list]:
    assert old in text
    text = text.replace(old, new, 1)
    for found in counted.values():
        found.clear()
    project.set_text(path, text)
    got = analyze_incremental(project, path, text, min_lines=0)
    assert project.patched_model(path, text)
    worked_out = {kind: list(found) for kind, found in counted.items()}  # not the fresh analysis's below
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(path, text)
    assert got == analyze(fresh, path, text)
    for kind, found in counted.items():
        found[:] = worked_out[kind]
    return text, got


def test_a_keystroke_in_one_body_works_out_that_kernel_only(tmp_path, monkeypatch):
    path = str(tmp_path / "kernels.py")
    project = Project(root=str(tmp_path), python=jax_python())
    counted = _counting(monkeypatch)
    project.set_text(path, SOURCE)
    assert analyze_incremental(project, path, SOURCE, min_lines=0) == []
    assert sorted(set(counted["parameters"])) == ["first", "second"]
    text = SOURCE
    for old, new in [("total = x_ref", "atotal = x_ref"), ("atotal = x_ref", "total = x_ref")]:
        text, got = _typed(project, path, tmp_path, text, old, new, counted)
        assert got == []
        assert "second" not in counted["parameters"] and "second" not in counted["refused"]


def test_findings_that_keystrokes_bring_and_take_away(tmp_path, monkeypatch):
    """An SMEM ref read whole (PAL024) in one body, then a call typed into an alias of `pl.run_scoped` asking
    for a buffer the TPU lowering refuses (PAL018), and both undone: each step as a fresh analysis says."""
    path = str(tmp_path / "kernels.py")
    project = Project(root=str(tmp_path), python=jax_python())
    counted = _counting(monkeypatch)
    project.set_text(path, SOURCE)
    analyze_incremental(project, path, SOURCE, min_lines=0)
    text, got = _typed(project, path, tmp_path, SOURCE, "acc_ref[0, 0] = total", "acc_ref[...] = total", counted)
    assert [f.code for f in got] == ["PAL024"]
    assert "second" not in counted["parameters"]
    text, got = _typed(project, path, tmp_path, text, "functools.reduce(max, [1, 2])",
                       "rs(stage, pltpu.SMEM((1, 1), jnp.float32))", counted)
    assert "PAL024" in [f.code for f in got]
    text, got = _typed(project, path, tmp_path, text, "rs(stage, pltpu.SMEM((1, 1), jnp.float32))",
                       "rs(stage, plgpu.SMEM((1, 1), jnp.float32))", counted)
    assert sorted(f.code for f in got) == ["PAL018", "PAL024"]
    text, got = _typed(project, path, tmp_path, text, "acc_ref[...] = total", "acc_ref[0, 0] = total", counted)
    assert [f.code for f in got] == ["PAL018"]
    text, got = _typed(project, path, tmp_path, text, "rs(stage, plgpu.SMEM((1, 1), jnp.float32))",
                       "functools.reduce(max, [1, 2])", counted)
    assert got == []


def test_a_launch_edited_in_place_works_its_kernel_out_again(tmp_path, monkeypatch):
    """The scratch of `second` switched from SMEM to VMEM and back at its launch: its parameters and PAL024
    follow (its body reads `best_ref` whole once the edit above makes it so)."""
    path = str(tmp_path / "kernels.py")
    project = Project(root=str(tmp_path), python=jax_python())
    counted = _counting(monkeypatch)
    source = SOURCE.replace("best_ref[0, 0] = best", "best_ref[...] = best")
    project.set_text(path, source)
    assert [f.code for f in analyze_incremental(project, path, source, min_lines=0)] == ["PAL024"]
    launch = "scratch_shapes=[pltpu.SMEM((1, 128), jnp.float32)],\n                          compiler_params"
    text, got = _typed(project, path, tmp_path, source, launch, launch.replace("SMEM", "VMEM"), counted)
    assert got == [] and "second" in counted["parameters"]
    text, got = _typed(project, path, tmp_path, text, launch.replace("SMEM", "VMEM"), launch, counted)
    assert [f.code for f in got] == ["PAL024"]
