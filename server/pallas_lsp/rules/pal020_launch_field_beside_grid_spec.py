"""PAL020 launch-field-beside-grid-spec: a `pl.pallas_call` given a grid spec and, beside it, a grid, block specs
or scratch of its own.

A launch given `grid_spec=` (a `pl.GridSpec`, a `pltpu.PrefetchScalarGridSpec`) takes its grid, `in_specs`,
`out_specs` and `scratch_shapes` from the grid spec alone: `pl.pallas_call` refuses the keywords beside it before
anything is traced, on every backend and under every interpreter (jax 0.12, pallas_call.py): "If `grid_spec` is
specified, then `scratch_shapes` must be `()`" (`grid` must be `()`, `in_specs` / `out_specs` `no_block_spec`).
Reported only where what the keyword holds is known to fail that test: a scratch list or a grid that is not empty,
block specs of any kind; and only where the grid spec is known to be one (not None).
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernels import KernelIndex
from ..analysis.values import Const, Mapping, MemType, SemaphoreRef, Seq, Spec, Unknown

CODE = "PAL020"
NAME = "launch-field-beside-grid-spec"
SEVERITY = "error"
SUMMARY = "scratch_shapes, grid, in_specs or out_specs beside grid_spec= of a pl.pallas_call: they belong in the grid spec."

# The keywords JAX tests beside a grid spec, in the order it tests them (it stops at the first).
FIELDS = ("grid", "in_specs", "out_specs", "scratch_shapes")
_REFUSED_AS = {"grid": "must be `()`", "in_specs": "must be `no_block_spec`", "out_specs": "must be `no_block_spec`",
               "scratch_shapes": "must be `()`"}


def message(fields: list[str], constructor: str) -> str:
    moved = " and ".join([", ".join(fields[:-1]), fields[-1]] if len(fields) > 1 else fields)
    return (f'JAX: "If `grid_spec` is specified, then `{fields[0]}` {_REFUSED_AS[fields[0]]}"; move it into the grid '
            f"spec. {moved} belong{'s' if len(fields) == 1 else ''} in the grid spec: a launch given one ({constructor}) "
            "takes its grid, block specs and scratch from it alone.")


def refused(name: str, value) -> bool:
    """Does `value`, given as the launch's `name=` beside a grid spec, fail JAX's test (known to, not maybe)?"""
    if value is None or isinstance(value, Unknown):
        return False
    if name in ("in_specs", "out_specs"):  # anything but the default `pl.no_block_spec` (None too)
        return isinstance(value, (Spec, Seq, Mapping)) or value == Const(None)
    if isinstance(value, Seq):
        return bool(value.items)
    if isinstance(value, Mapping):
        return bool(value.items)
    if isinstance(value, Const):
        return type(value.value) is int and value.value != 0
    return name == "scratch_shapes" and isinstance(value, (MemType, SemaphoreRef))


def offending(project, entry) -> list[tuple[str, ast.AST]]:
    """(keyword, its value as written at the launch) for each keyword JAX refuses beside the launch's grid spec;
    empty where it has none, or one not known to be a grid spec."""
    kernel = entry.kernel
    if entry.api != "pl.pallas_call" or not isinstance(entry.node, ast.Call):
        return []
    spec = kernel.kwarg("grid_spec")
    if spec is None:
        return []
    value = project.evaluator.value(entry.model, spec[1]) if spec[1] is not None else spec[0]
    if not isinstance(value, Spec):
        return []
    found = []
    for name in FIELDS:
        given = kernel.kwarg(name)
        if given is None or given[1] is None:
            continue
        if refused(name, project.evaluator.value(entry.model, given[1])):
            found.append((name, given[1]))
    return found


def check(ctx):
    rule = sys.modules[__name__]
    if "grid_spec" not in ctx.model.text:
        return
    for entry in KernelIndex.of(ctx.project, ctx.model).entries:
        with ctx.isolated(rule, entry.node, entry.model):
            if entry.model is not ctx.model:
                continue
            found = offending(ctx.project, entry)
            if not found or not _written_here(ctx.model, found[0][1]):
                continue
            spec = ctx.project.evaluator.value(entry.model, entry.kernel.kwarg("grid_spec")[1])
            constructor = spec.constructor if isinstance(spec, Spec) else "pl.GridSpec"
            related = (ctx.related(entry.model, found[0][1], f"{found[0][0]} given beside the grid spec"),
                       ctx.related(entry.model, entry.kernel.kwarg("grid_spec")[1], "the launch's grid spec"))
            # JAX raises at the call of pl.pallas_call: its line is the one the traceback shows.
            yield ctx.finding(rule, entry.node.func, message([name for name, _ in found], constructor), related,
                              facts={"entry": entry, "fields": found})


def _written_here(model, node: ast.AST) -> bool:
    """Is `node` part of this module's tree (a keyword a `functools.partial` elsewhere gives is not)?"""
    while node is not None and node is not model.tree:
        node = model.parents.get(node)
    return node is model.tree
