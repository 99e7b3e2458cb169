"""PAL024 smem-vector-access: a TPU SMEM ref read or written as an array, in a kernel compiled for a TPU.

SMEM is the TPU core's scalar memory: Mosaic TPU loads and stores one element of it at a time. A read or a
write that gives more than one element (`acc[...]`, `acc[0, :]`, `acc[pl.ds(i, 4)]`, fewer indices than the
ref has dimensions) fails while the kernel is lowered: `ValueError: Can only store scalars to SMEM` / `Can
only load scalars from SMEM` (jax 0.12, mosaic/lowering.py), even for a one-element slice. The TPU interpreter
and `interpret=True` run it. Reported for the body's own SMEM parameters (`pltpu.SMEM(...)` scratch, a
`memory_space=pltpu.SMEM` block) whose rank is known, on the first such access in the body's source (where
JAX stops), in a kernel that may run compiled.
"""

from __future__ import annotations

import ast
import re
import sys

from ..analysis import reads
from ..analysis.comparisons import as_sequence
from ..analysis.evaluate import KERNEL_FACTORIES
from ..analysis.kernel_args import kernel_parameters, launch_field
from ..analysis.values import MemType
from ..analysis.kernel_model import TPU_TC

CODE = "PAL024"
NAME = "smem-vector-access"
SEVERITY = "error"
SUMMARY = "A TPU SMEM ref read or written as an array (acc[...], acc[0, :]): SMEM holds scalars only."


def message(store: bool, name: str, shape: tuple[int, ...]) -> str:
    verb, noun = ("store", "stored") if store else ("load", "read")
    shaped = f" of shape {tuple(shape)}" if shape is not None else ""
    return (f'JAX: "ValueError: Can only {verb} scalars to SMEM"; allocate {name} in VMEM (pltpu.VMEM) to use '
            f"it as an array. {name} is an SMEM ref{shaped}, and TPU SMEM is {noun} one element at "
            "a time (acc[i, j]).").replace("load scalars to", "load scalars from")


def check(ctx):
    rule = sys.modules[__name__]
    if not ctx.model.mentions("SMEM") or not ctx.calls_any(KERNEL_FACTORIES):
        return  # reported only of a kernel launched here, by a call of a factory (modelling kernels costs a keystroke)
    for kernel in ctx.kernels():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            if kernel.backend != TPU_TC or kernel.certain_interpret or kernel.entry.model is not ctx.model:
                continue
            body = kernel.entry.body
            if body is None or body.model is not ctx.model:
                continue
            found = []
            for param in kernel_parameters(ctx.project, kernel.entry):
                if param.space == "smem" and _tpu_smem(ctx.project, kernel.entry, param):
                    found += [(access, store, param) for access, store in vector_accesses(body.model, body.node, param)]
            if not found:
                continue
            access, store, param = min(found, key=lambda item: (item[0].lineno, item[0].col_offset))
            yield ctx.finding(rule, access, message(store, param.name, param.shape), (ctx.entry_related(kernel),),
                              facts={"kernel": kernel, "param": param, "model": body.model})


def _tpu_smem(project, entry, param) -> bool:
    """Is the parameter TPU SMEM: a `pltpu.SMEM(...)` scratch entry, or a block of a module that names no Mosaic
    GPU memory (a `plgpu.SMEM` in a TPU kernel fails otherwise: "Invalid memory space")?"""
    match = re.fullmatch(r"scratch_shapes\[(\d+)\]", param.origin)
    if match is None:
        return param.role != "scratch" and "plgpu" not in entry.model.text and "mosaic_gpu" not in entry.model.text
    items = as_sequence(launch_field(project, entry, "scratch_shapes"))
    index = int(match[1])
    item = items.items[index] if items is not None and index < len(items.items) else None
    return isinstance(item, MemType) and item.constructor == "pltpu.SMEM"


def vector_accesses(model, function: ast.AST, param) -> list[tuple[ast.Subscript, bool]]:
    """The subscripts of `param` in `function` (its nested functions too) that give more than one element, each
    with whether it is a store."""
    found = []
    for node in _subscripts(model, function).get(param.node.arg, ()):
        binding = model.lookup(node.value.id, model.scope_of(node), node.lineno)
        if binding is None or binding.node is not param.node:
            continue
        if not_scalar(node.slice, len(param.shape) if param.shape is not None else None):
            found.append((node, isinstance(node.ctx, ast.Store)))
    return found


def _subscripts(model, function: ast.AST) -> dict[str, list[ast.Subscript]]:
    """The subscripts of a name in `function` (nested functions too), by the name, in `ast.walk` order: one walk
    per function, kept until an edit under it (`model_patch`: "deep"; each SMEM ref of each kernel asks)."""
    return reads.kept_walk(model, "name-subscripts", function, lambda: _walk_subscripts(function))


def _walk_subscripts(function: ast.AST) -> dict[str, list[ast.Subscript]]:
    by_name: dict[str, list[ast.Subscript]] = {}
    for node in ast.walk(function):
        if node.__class__ is ast.Subscript and node.value.__class__ is ast.Name:
            by_name.setdefault(node.value.id, []).append(node)
    return by_name


def not_scalar(index: ast.expr, rank: int | None) -> bool:
    """Does indexing a ref of `rank` dimensions with `index` give an array (a slice, `pl.ds`; an Ellipsis or too
    few indices where the rank is known: `x[...]` of a 0-d ref is its one element)? False where it may give one
    element."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for part in parts:
        if isinstance(part, ast.Slice):
            return True
        if isinstance(part, ast.Constant) and part.value is Ellipsis:
            return rank is None and len(parts) > 1 or rank is not None and rank > 0
        if isinstance(part, ast.Call) and isinstance(part.func, (ast.Attribute, ast.Name)) and \
                (part.func.attr if isinstance(part.func, ast.Attribute) else part.func.id) in ("ds", "dslice"):
            return True
        if isinstance(part, ast.Starred):
            return False
    # Too few indices: counted only where they are written out (a name may hold a tuple of indices).
    written = isinstance(index, ast.Tuple) or isinstance(index, ast.Constant)
    return written and rank is not None and len(parts) < rank
