"""PAL014 signal-wait-not-ref: `pl.semaphore_signal` / `pl.semaphore_wait` (or, in a TPU kernel, `pl.semaphore_read`)
given a value, not a semaphore ref.

Both check their argument while tracing (`check_sem_avals` in jax/_src/pallas/primitives.py), on every
backend and in every interpreter: before its shape (PAL005) and its type (PAL013), it must be a ref.
`sem[...]` or `sems[0]` reads a value out of a semaphore ref, and a number is no ref at all:
`ValueError: Cannot signal on a non-semaphore Ref: semaphore[]` (`... Ref: ~int32[]` for a number; `wait`
for a wait). `sems.at[0]` is the view of one semaphore that they take. (A TPU copy given such a value is
PAL010; a value read out of a `plgpu.alloc_semaphore` ref passed to a `plgpu.kernel` is PAL008.)
A `pl.select_ref(i, *sems)` selection is no ref they take (only a TPU copy takes one): signal, wait and read given
one fail while tracing on every backend, `ValueError: Triggering __jax_array__() during abstractification is no
longer supported.` `pl.semaphore_read` checks nothing else while tracing; Mosaic TPU lowers a value read out of a semaphore ref as a load
from semaphore memory and refuses it: `ValueError: Loads are only allowed on VMEM and SMEM references.` (Mosaic
GPU and the interpreters fail otherwise, with no message that names the ref: not reported there.)
"""

from __future__ import annotations

import ast
import sys

from ..analysis.result_uses import SEMAPHORE_OP_APIS
from .pal010_dma_semaphore_not_ref import ref_meant
from .pal013_signal_wait_semaphore_type import first_in_trace

CODE = "PAL014"
NAME = "signal-wait-not-ref"
SEVERITY = "error"
SUMMARY = "pl.semaphore_signal / pl.semaphore_wait given a value read out of a semaphore ref (sem[...], sems[0]) or a number."


def message(op, node: ast.expr, dtype: str | None = None, number: object = None) -> str:
    """`op`'s message; `node` is its semaphore argument (in op.model), op.not_ref's expression is in op.not_ref_model;
    `number`: the number it is, where known (a float is a weakly typed float32, whether written or named)."""
    kind, (what, expr), model = op.kind, op.not_ref, op.not_ref_model
    text = model.segment(expr, 40)
    held = "" if expr is node else f" ({op.model.segment(node, 20)} holds it)"
    if what == "selected":
        quoted = "ValueError: Triggering __jax_array__() during abstractification is no longer supported."
        return (f'JAX: "{quoted}"; pass a semaphore ref. {text}{held} is a pl.select_ref selection, which only a '
                f"TPU copy takes as its ref; pl.semaphore_{kind} takes a semaphore ref or an .at[] view of one (an "
                ".at[i] view of one array chooses at run time too).")
    if kind == "read":  # only a compiled TPU kernel's (kernel_model): a load from semaphore memory, at lowering
        quoted = "ValueError: Loads are only allowed on VMEM and SMEM references."
        meant = ref_meant(model, expr) if isinstance(expr, ast.Subscript) else "the semaphore ref"
        return (f'JAX: "{quoted}"; pass {meant}, not {text}. {text}{held} reads the semaphore\'s value out of '
                "semaphore memory, which Mosaic TPU cannot load; pl.semaphore_read takes a semaphore ref or an .at[] "
                "view of one.")
    if what == "loaded" and isinstance(expr, ast.Subscript):
        quoted = f"ValueError: Cannot {kind} on a non-semaphore Ref: {dtype + '[]' if dtype else '...'}"
        return (f'JAX: "{quoted}"; pass {ref_meant(model, expr)}, not {text}. {text}{held} reads '
                f"the semaphore's value; {kind} takes a semaphore ref or an .at[] view of one.")
    if number is None and isinstance(expr, ast.Constant):
        number = expr.value
    weak = "~float32[]" if isinstance(number, float) else "~int32[]"
    quoted = f"ValueError: Cannot {kind} on a non-semaphore Ref: {weak}"  # a Python number: a weakly typed scalar
    return (f'JAX: "{quoted}"; pass a semaphore ref. {text}{held} is a number; {kind} takes a semaphore ref '
            "(scratch, pl.run_scoped, pl.get_global) or an .at[] view of one.")


def check(ctx):
    rule = sys.modules[__name__]
    if not ctx.model.mentions("semaphore_") or not ctx.calls_any(SEMAPHORE_OP_APIS):
        return  # every finding is a semaphore op of this module's (`op.model is ctx.model`)
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            failing = [(op,) for op in kernel.semaphore_ops if op.not_ref is not None
                       and (op.kind != "read" or op.not_ref[0] == "selected")]
            # A read of a value fails when the TPU kernel is lowered, after tracing (where the others fail).
            failing = failing or [(op,) for op in kernel.semaphore_ops if op.not_ref is not None]
            for (op,) in first_in_trace(failing):  # tracing stops at the first one
                if op.model is not ctx.model or id(op.call) in reported:
                    continue
                reported.add(id(op.call))
                argument = op.call.args[0] if op.call.args else op.not_ref[1]
                related = (ctx.entry_related(kernel),)
                dtype = _read_from(kernel, op.not_ref_model, op.not_ref[1])
                value = ctx.project.evaluator.value(op.not_ref_model, op.not_ref[1]) if op.not_ref[0] == "number" else None
                yield ctx.finding(rule, op.call, message(op, argument, dtype, getattr(value, "value", None)), related,
                                  facts={"kernel": kernel, "op": op.call, "model": op.model, "entry": kernel.entry,
                                         "semaphore": argument, "not_ref": op.not_ref,
                                         "not_ref_model": op.not_ref_model})



def _read_from(kernel, model, expr: ast.expr) -> str | None:
    """The dtype of the kernel's semaphore a loaded value is read from (`sem[...]`, `sems.at[0][1]`), where that
    is one of the body's or a run_scoped body's semaphore parameters; None where not known."""
    base = expr
    while isinstance(base, ast.Subscript) or isinstance(base, ast.Attribute) and base.attr == "at":
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    binding = model.lookup(base.id, model.scope_of(base), base.lineno)
    return next((sem.dtype for sem in kernel.semaphores if binding is not None and sem.node is binding.node), None)
