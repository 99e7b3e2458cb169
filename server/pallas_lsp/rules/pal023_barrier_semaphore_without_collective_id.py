"""PAL023 barrier-semaphore-without-collective-id: `pltpu.get_barrier_semaphore()` in a TPU kernel whose
compiler parameters give no `collective_id`.

The barrier semaphore is the one XLA sets aside for the launch's `collective_id` (`pltpu.CompilerParams`).
Compiled for a TPU, jax 0.12 refuses a kernel that asks for it without one: `ValueError: collective_id has to
be specified when using a custom barrier (cannot auto-allocate without lowering context)` (tpu_custom_call.py),
unless a tag names it (`get_barrier_semaphore("ring")`, given an id by JAX) or JAX is told to give ids itself
(`jax_pallas_auto_assign_collective_ids`). The TPU interpreter (`pltpu.InterpretParams`) reads the id as
`int(collective_id)` in a CPU callback, tag or not: `TypeError: int() argument must be ... not 'NoneType'`
(reported as `JaxRuntimeError: INTERNAL: CpuCallback error`). Reported only where the parameters are known to
have none: no `compiler_params`, or a `pltpu.CompilerParams(...)` call, at the launch or made by a helper,
a method or a constant, without `collective_id=` and without `**keywords`.
"""

from __future__ import annotations

import sys

from ..analysis.compiler_params import auto_assigns_ids, launch_params
from ..analysis.kernel_model import TPU_TC

CODE = "PAL023"
NAME = "barrier-semaphore-without-collective-id"
SEVERITY = "error"
SUMMARY = "pltpu.get_barrier_semaphore() in a TPU kernel whose compiler parameters give no collective_id."

COMPILED = ('JAX: "ValueError: collective_id has to be specified when using a custom barrier ..."; give the kernel a '
            "collective_id. get_barrier_semaphore() is the semaphore XLA sets aside for the collective_id of the "
            "kernel's pltpu.CompilerParams{where}; JAX adds: (cannot auto-allocate without lowering context).")
INTERPRETED = ('JAX: "TypeError: int() argument must be ... not \'NoneType\'"; give the kernel a collective_id. '
               "The TPU interpreter gives get_barrier_semaphore() the semaphore whose id is the collective_id of the "
               "kernel's pltpu.CompilerParams{where}; JAX reports it as JaxRuntimeError: INTERNAL: CpuCallback error.")


def check(ctx):
    rule = sys.modules[__name__]
    if "get_barrier_semaphore" not in ctx.model.text or not ctx.calls_any(("pltpu.get_barrier_semaphore",)):
        return  # every finding is a get_barrier_semaphore of this module's (`op.model is ctx.model`)
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            # A tag names the barrier, and compiled JAX gives it an id; the TPU interpreter does not read tags.
            tags_too = kernel.interpreter == "tpu" and kernel.certain_interpret
            ops = [op for op in kernel.semaphore_ops if op.kind == "barrier_semaphore" and op.model is ctx.model
                   and (tags_too or not (op.call.args or op.call.keywords)) and id(op.call) not in reported]
            if not ops or kernel.entry.api != "pl.pallas_call":
                continue
            if kernel.interpreter == "tpu":
                message = INTERPRETED
            elif kernel.backend == TPU_TC and not kernel.certain_interpret:
                message = COMPILED
            else:
                continue
            params = launch_params(ctx.project, kernel.entry)
            if params is None or not params.surely_without_collective_id \
                    or auto_assigns_ids(ctx.model, kernel.entry.model, params.model):
                continue
            related = [ctx.entry_related(kernel)]
            if params.call is None:
                where = " (the launch gives no compiler_params)"
            else:
                where = " (they give none)"
                related.append(ctx.related(params.model, params.call, "the kernel's compiler parameters"))
            for op in ops:
                reported.add(id(op.call))
                yield ctx.finding(rule, op.call, message.format(where=where), tuple(related),
                                  facts={"kernel": kernel, "barrier": op.call, "model": op.model,
                                         "entry": kernel.entry, "params": params})
