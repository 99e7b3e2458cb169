"""Launches under `jax.vmap`: `method = jax.vmap(jax.vmap(pl.pallas_call(...), in_axes=(0, None, None)))` then
`method(x, w, b)`. Each vmap takes the mapped axis off the operands it maps (its batching rule runs the kernel
on one slice), so the body's refs are the operands' slices: `x[4,8,1024]` twice mapped on axis 0 is `[1024]`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .reaching import outside_own_statement, reaching_bindings
from .values import UNKNOWN, Api, Array, Const, KernelCall, Seq, ShapeDtype, Value

if TYPE_CHECKING:
    from .model import ModuleModel

# `Project` and `Frame` in annotations are names only: evaluate.py imports this module through call_sites.py
# (tests/test_architecture.py: no circle of modules but the one known).

_MAX_LAYERS = 8


def vmapped_kernel(project: "Project", model: "ModuleModel", call: ast.Call, frame: "Frame | None"):
    """(the KernelCall, [in_axes of each vmap, outermost first]) where `call` calls a kernel through
    `jax.vmap`s; None otherwise, or where an `in_axes` or the name's assignment is not known."""
    evaluator = project.evaluator
    expr, layers = call.func, []
    for _ in range(_MAX_LAYERS):
        if isinstance(expr, ast.Name):
            scope = model.scope_of(expr)
            binding = model.lookup(expr.id, scope, expr.lineno)
            if binding is not None:
                binding = outside_own_statement(model, binding, expr, scope)
            if binding is None or binding.kind != "assign" or binding.value is None \
                    or len(reaching_bindings(model, binding, expr, scope)) != 1:
                return None
            expr = binding.value
            continue
        if isinstance(expr, ast.Call) and expr.args and evaluator.value(model, expr.func) == Api("jax.vmap"):
            if len(expr.args) > 2 or any(k.arg not in ("in_axes", "out_axes") for k in expr.keywords):
                return None  # axis_name, spmd_axis_name, ...: not followed
            axes = next((k.value for k in expr.keywords if k.arg == "in_axes"), expr.args[1] if len(expr.args) > 1 else None)
            layers.append(Const(0) if axes is None else evaluator.value(model, axes, frame))
            expr = expr.args[0]
            continue
        value = evaluator.value(model, expr, frame)
        return (value, layers) if isinstance(value, KernelCall) and layers else None
    return None


def unbatched(operands: list[Value], layers: list[Value]) -> list[Value]:
    """The operands as the body sees them: each vmap's mapped axis taken off (outermost first); unknown
    where an axis is not known."""
    for axes in layers:
        if isinstance(axes, Seq) and len(axes.items) == len(operands):
            per_operand = list(axes.items)
        elif isinstance(axes, Const) and (axes.value is None or type(axes.value) is int):
            per_operand = [axes] * len(operands)
        else:
            return [UNKNOWN] * len(operands)
        operands = [_sliced(value, axis) for value, axis in zip(operands, per_operand)]
    return operands


def _sliced(value: Value, axis: Value) -> Value:
    if axis == Const(None):
        return value
    if not (isinstance(axis, Const) and type(axis.value) is int):
        return UNKNOWN
    if isinstance(value, (Array, ShapeDtype)) and value.shape is not None \
            and -len(value.shape) <= axis.value < len(value.shape):
        at = axis.value % len(value.shape)
        shape = value.shape[:at] + value.shape[at + 1:]
        return type(value)(shape, value.dtype, f"{value.source} mapped on axis {at}")
    return UNKNOWN
