"""A keystroke inside one kernel's body builds that kernel's model again and keeps the others'
(analysis/kernel_model.py `_entry_model`), and an answer an edit forgot that comes out the same
keeps what read it (analysis/reads.py `settled`): a shared helper's parameter, seen from the call
sites of every kernel, stays what it was unless the edited call site changes it. Each step is
compared with a fresh project's whole analysis."""

from __future__ import annotations

import ast

from conftest import jax_python
from pallas_lsp.analysis import Project, kernel_model, reads
from pallas_lsp.analysis.model_patch import words_changed
from pallas_lsp.analysis.values import Const, Func, KernelCall, OneOf
from pallas_lsp.engine import analyze, analyze_incremental

SOURCE = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

KIND = plgpu.SemaphoreType.REGULAR((2,))


def _signal(sem, times):
    for _ in range(times):
        pl.semaphore_signal(sem)


def make(block=128):
    def first(x_ref, o_ref):
        sem = pl.get_global(KIND)
        _signal(sem.at[0], 1)
        scaled = x_ref[...] * 2
        o_ref[...] = scaled

    def second(x_ref, o_ref):
        sem = pl.get_global(KIND)
        _signal(sem, 2)
        o_ref[...] = x_ref[...]

    def run(x):
        out = jax.ShapeDtypeStruct((block,), jnp.float32)
        return plgpu.kernel(second, out_type=out)(plgpu.kernel(first, out_type=out)(x))

    return run
"""


def _project(tmp_path) -> tuple[str, Project]:
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    return str(path), Project(root=str(tmp_path), python=jax_python())


def _builds(monkeypatch) -> list[str]:
    built: list[str] = []
    build = kernel_model._build

    def counted(project, entry, warp_bodies):
        built.append(entry.body.node.name)
        return build(project, entry, warp_bodies)

    monkeypatch.setattr(kernel_model, "_build", counted)
    return built


def _edit(project: Project, path: str, tmp_path, old: str, new: str, text: str, built: list) -> tuple[str, list, list]:
    """The edited text, its findings, the kernels whose models its analysis built (checked against a fresh one)."""
    assert old in text
    text = text.replace(old, new, 1)
    built.clear()
    project.set_text(path, text)
    got = analyze_incremental(project, path, text, min_lines=0)
    assert project.patched_model(path, text)
    these = sorted(built)
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(path, text)
    assert got == analyze(fresh, path, text)
    return text, got, these


def test_a_keystroke_in_one_kernel_builds_that_kernel_only(tmp_path, monkeypatch):
    path, project = _project(tmp_path)
    built = _builds(monkeypatch)
    project.set_text(path, SOURCE)
    first = analyze_incremental(project, path, SOURCE, min_lines=0)
    assert first  # `second` signals its semaphore array whole: a finding to keep
    assert sorted(built) == ["first", "second"]
    text = SOURCE
    for old, new in [("scaled = x_ref", "ascaled = x_ref"), ("ascaled = x_ref", "scaled = x_ref")]:
        text, got, these = _edit(project, path, tmp_path, old, new, text, built)
        assert these == ["first"]
        assert got == first


def test_an_edit_that_changes_a_shared_helpers_parameter_is_seen_by_every_kernel_reaching_it(tmp_path, monkeypatch):
    """`_signal`'s `sem` is what both kernels pass: an edit of one call site that changes it is seen by
    PAL005 in the other kernel too, and so is its undoing (each step against a fresh analysis). The
    other kernel's model holds the helper's calls, not the values they are given, and is kept: it was
    built again only while every edit of a call forgot every kernel's model (`kernels.pallas_calls`)."""
    path, project = _project(tmp_path)
    built = _builds(monkeypatch)
    project.set_text(path, SOURCE)
    analyze_incremental(project, path, SOURCE, min_lines=0)
    text, got, these = _edit(project, path, tmp_path, "_signal(sem.at[0], 1)", "_signal(sem, 1)", SOURCE, built)
    assert these == ["first"]
    assert got  # the helper signals a whole array: PAL005 there
    text, _, these = _edit(project, path, tmp_path, "_signal(sem, 1)", "_signal(sem.at[0], 1)", text, built)
    assert these == ["first"]


def test_words_changed_looks_at_the_changed_lines_only():
    old = "a = 1\nb = alpha\nc = 3\n"
    new = "a = 1\nb = beta\nc = 3\n"
    assert words_changed(old, new, ["alpha", "beta", "a", "c", "gamma"]) == ["alpha", "beta"]
    # still in the text elsewhere: not changed
    assert words_changed("x = alpha\nalpha\n", "x = 1\nalpha\n", ["alpha"]) == []


def test_answers_are_the_same_only_when_every_field_is():
    tree = ast.parse("f(1)\ng(2)")
    one, two = tree.body[0].value, tree.body[1].value
    assert reads.same(OneOf((Const(1), Const(2.0))), OneOf((Const(1), Const(2.0))))
    assert not reads.same(Const(0.0), Const(-0.0))
    assert not reads.same(Const(1), Const(True))
    func = Func(None, one)
    assert reads.same(Func(None, one), func) and not reads.same(Func(None, two), func)
    # KernelCall's own == leaves its keyword arguments out; an answer's comparison does not
    assert KernelCall("plgpu.kernel", None, one, func, ()) == KernelCall("plgpu.kernel", None, one, func,
                                                                          (("grid", Const(2), None),))
    assert not reads.same(KernelCall("plgpu.kernel", None, one, func, ()),
                          KernelCall("plgpu.kernel", None, one, func, (("grid", Const(2), None),)))
