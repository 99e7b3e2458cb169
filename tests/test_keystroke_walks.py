"""A keystroke inside a helper a Mosaic GPU kernel calls walks that helper again, not the kernel: a
function's walk (semaphore reservations, analysis/allocations.py) is kept even when it was cut short by
the depth (kept for that depth) or by a recursion it met inside itself, and an edited helper's walk is
found again first (`reads.settled`), so the walks around it stay when it comes out the same. Each step
ends compared with a fresh project's whole analysis."""

from __future__ import annotations

import ast

from conftest import jax_python
from pallas_lsp.analysis import Project, allocations
from pallas_lsp.engine import analyze, analyze_incremental

# `kernel` calls a chain of ten helpers: the walk is cut short by the depth (nine functions around
# one) below `level_8`, so every walk around that point is one the depth cut short.
_CHAIN = "\n".join(f"def level_{k}(sem):\n    pl.semaphore_signal(sem)\n    return level_{k + 1}(sem)\n\n"
                   for k in range(10))
SOURCE = f"""\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

KIND = plgpu.SemaphoreType.REGULAR((2,))


{_CHAIN}
def level_10(sem):
    return sem


def side(sem):
    pl.semaphore_signal(sem)
    return sem


def kernel(x_ref, o_ref):
    sem = pl.get_global(KIND)
    level_0(sem.at[0])
    side(sem.at[1])
    doubled = x_ref[...] * 2
    o_ref[...] = doubled


def run(x):
    return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))(x)
"""


def _walked_statements(monkeypatch) -> list[int]:
    """The first lines of the statements the walks visit from now on."""
    lines: list[int] = []
    visit = allocations.Allocations.visit

    def counted(self, model, node, stack):
        if isinstance(node, ast.stmt):
            lines.append(node.lineno)
        return visit(self, model, node, stack)

    monkeypatch.setattr(allocations.Allocations, "visit", counted)
    return lines


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _keystroke(project: Project, path: str, text: str, old: str, new: str, walked: list[int]) -> tuple[str, list[int]]:
    """The edited text, and the lines of the statements its analysis walked."""
    assert old in text
    text = text.replace(old, new, 1)
    walked.clear()
    project.set_text(path, text)
    analyze_incremental(project, path, text, min_lines=0)
    assert project.patched_model(path, text)
    return text, list(walked)


def _same_as_a_fresh_analysis(project: Project, path: str, tmp_path, text: str) -> None:
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(path, text)
    assert analyze_incremental(project, path, text, min_lines=0) == analyze(fresh, path, text)


def test_a_keystroke_in_a_helper_deep_in_a_kernel_walks_the_functions_around_it_not_the_others(tmp_path, monkeypatch):
    path = tmp_path / "chain.py"
    path.write_text(SOURCE)
    project = Project(root=str(tmp_path), python=jax_python())
    project.set_text(str(path), SOURCE)
    analyze_incremental(project, str(path), SOURCE, min_lines=0)
    walked = _walked_statements(monkeypatch)

    # Inside the kernel's own body: its statements are walked again.
    text, these = _keystroke(project, str(path), SOURCE, "    doubled = x_ref", "    doubledx = x_ref", walked)
    assert _line_of(text, "    doubledx = x_ref") in these
    text, these = _keystroke(project, str(path), text, "doubledx = x_ref[...] * 2\n    o_ref[...] = doubled\n",
                             "doubledx = x_ref[...] * 2\n    o_ref[...] = doubledx\n", walked)
    assert _line_of(text, "    doubledx = x_ref") in these

    # Inside a helper eight calls down (its walk, and every walk around it, cut short by the depth) and
    # inside another helper of the kernel: those and the kernel are walked again, not the other helpers.
    for old, new, helper, other in [
            ("def level_7(sem):\n    pl.semaphore_signal(sem)", "def level_7(sem):\n    pl.semaphore_signal(sem )",
             "def level_7(", "def side("),
            ("def side(sem):\n    pl.semaphore_signal(sem)", "def side(sem):\n    pl.semaphore_signal(sem )",
             "def side(", "def level_3(")]:
        text, these = _keystroke(project, str(path), text, old, new, walked)
        assert _line_of(text, helper) + 1 in these  # the edited helper's first statement
        assert _line_of(text, "    sem = pl.get_global(KIND)") in these  # the kernel's
        assert _line_of(text, other) + 1 not in these
    _same_as_a_fresh_analysis(project, str(path), tmp_path, text)


def test_a_keystroke_that_changes_a_helpers_reservations_walks_the_kernel_again(tmp_path, monkeypatch):
    path = tmp_path / "chain.py"
    path.write_text(SOURCE)
    project = Project(root=str(tmp_path), python=jax_python())
    project.set_text(str(path), SOURCE)
    analyze_incremental(project, str(path), SOURCE, min_lines=0)
    walked = _walked_statements(monkeypatch)
    text, these = _keystroke(project, str(path), SOURCE, "def level_2(sem):\n    pl.semaphore_signal(sem)",
                             "def level_2(sem):\n    pl.get_global(KIND)", walked)
    assert _line_of(text, "    sem = pl.get_global(KIND)") in these
    _same_as_a_fresh_analysis(project, str(path), tmp_path, text)


RECURSIVE = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax
import jax.numpy as jnp

KIND = plgpu.SemaphoreType.REGULAR((2,))


def ping(sem, n):
    if n:
        return pong(sem, n - 1)
    return sem


def pong(sem, n):
    pl.semaphore_signal(sem)
    return ping(sem, n)


def kernel(x_ref, o_ref):
    sem = pl.get_global(KIND)
    ping(sem.at[1], 3)
    o_ref[...] = x_ref[...]


def run(x):
    return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))(x)
"""


def test_keystrokes_in_helpers_that_call_each_other_end(tmp_path):
    """Answers that read each other through a recursion, found again after an edit (`reads.settled`), end
    (past a bound, what is still aside is forgotten), with a whole analysis's findings."""
    path = tmp_path / "recursive.py"
    path.write_text(RECURSIVE)
    project = Project(root=str(tmp_path), python=jax_python())
    project.set_text(str(path), RECURSIVE)
    analyze_incremental(project, str(path), RECURSIVE, min_lines=0)
    text = RECURSIVE
    for old, new in [("        return pong(sem, n - 1)", "        return pong(sem, n - 1 )"),
                     ("    pl.semaphore_signal(sem)\n    return ping", "    pl.semaphore_signal(sem )\n    return ping")]:
        text, _ = _keystroke(project, str(path), text, old, new, [])
    _same_as_a_fresh_analysis(project, str(path), tmp_path, text)
