"""PAL009 non-decrementing-wait: `pl.semaphore_wait(..., decrement=False)` where TPU code runs it.

The TPU interpreter (`interpret=pltpu.InterpretParams()`, `pltpu.force_tpu_interpret_mode()`) raises
`NotImplementedError: Non-decrementing wait is not supported.` (mosaic/interpret/interpret_pallas_call.py).
Compiled for a TPU, the same check in mosaic/lowering.py never fires: the lowering rule receives
`decrement` as an MLIR value, always true, and emits `tpu.sem_wait`, which decrements: a silent
miscompile, reported as a warning. Mosaic GPU and `interpret=True` honour `decrement=False`.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernel_model import TPU_TC
from ..analysis.values import Const

CODE = "PAL009"
NAME = "non-decrementing-wait"
SEVERITY = "error"
SUMMARY = "pl.semaphore_wait(..., decrement=False) in TPU code: the TPU interpreter refuses it, compiled it decrements."

FIX = "wait, then pl.semaphore_signal the value back"
ERROR = (f'JAX: "NotImplementedError: Non-decrementing wait is not supported."; {FIX}. The TPU interpreter '
         "implements only waits that decrement the semaphore.")
SILENT = (f"TPU ignores decrement=False: this wait decrements, with no error; {FIX}. "
          'JAX\'s check ("Non-decrementing wait is not supported.") never fires when compiling: the TPU lowering '
          "gets decrement as an MLIR value, always true, and emits tpu.sem_wait, which decrements. "
          "The TPU interpreter raises that error for the same wait.")
_TPU = (TPU_TC,)  # SparseCore registers the same lowering rule, but was not lowered to check it


def _decrement_node(call: ast.Call) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == "decrement"), None)


def check(ctx):
    rule = sys.modules[__name__]
    if "decrement" not in ctx.model.text or not ctx.calls_any(("pl.semaphore_wait",)):
        return  # every finding is a wait of this module's (`op.model is ctx.model`)
    kernels = ctx.kernels_here_and_in_importers()
    runs: dict[int, list] = {}  # id(wait) -> every kernel that runs it (its fix asks what each one does with it)
    for kernel in kernels:
        for op in kernel.semaphore_ops:
            if op.kind == "wait" and op.model is ctx.model:
                runs.setdefault(id(op.call), []).append(kernel)
    reported: set[int] = set()
    for kernel in kernels:
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            if kernel.interpreter == "tpu":
                message, severity = ERROR, "error"
            elif kernel.backend in _TPU and not kernel.certain_interpret:
                message, severity = SILENT, "warning"
            else:
                continue
            for op in kernel.semaphore_ops:
                node = _decrement_node(op.call) if op.kind == "wait" and op.model is ctx.model else None
                if node is None or id(op.call) in reported:
                    continue
                value = ctx.project.evaluator.value(op.model, node)
                if not (isinstance(value, Const) and not value.value):
                    continue  # decrement=True, or not known statically
                reported.add(id(op.call))
                yield ctx.finding(rule, op.call, message, (ctx.entry_related(kernel),), severity=severity,
                                  facts={"kernel": kernel, "kernels": tuple(runs[id(op.call)]), "wait": op.call, "model": op.model, "entry": kernel.entry})
