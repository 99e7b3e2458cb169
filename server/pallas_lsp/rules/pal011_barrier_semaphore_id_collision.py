"""PAL011 barrier-semaphore-id-collision: under the TPU interpreter, the barrier semaphore's fixed id is
one of the kernel's own semaphore ids.

`pltpu.get_barrier_semaphore()` is the semaphore with id `collective_id` (of `pltpu.CompilerParams`).
The TPU interpreter (`interpret=pltpu.InterpretParams()`) numbers the semaphores it allocates as the
kernel starts (its semaphore-space operands and scratch) from 2000 up (mosaic/interpret/shared_memory.py,
`next_semaphore_id`), and leaves avoiding a clash to the caller: with `collective_id` in that range the
first use of either fails with `ValueError: Semaphore 2000 occurs as both fixed-id and internal.`
(reported as `JaxRuntimeError: INTERNAL: CpuCallback error ...`). Compiled for a TPU there is no clash.
"""

from __future__ import annotations

import sys

from ..analysis.values import int_text

CODE = "PAL011"
NAME = "barrier-semaphore-id-collision"
SEVERITY = "error"
SUMMARY = "TPU interpreter: collective_id is one of the ids (2000 up) it gives the kernel's own semaphores."

FIRST_INTERNAL_ID = 2000  # jax/_src/pallas/mosaic/interpret/shared_memory.py: next_semaphore_id


def check(ctx):
    rule = sys.modules[__name__]
    if "get_barrier_semaphore" not in ctx.model.text or not ctx.calls_any(("pltpu.get_barrier_semaphore",)):
        return  # every finding is a get_barrier_semaphore of this module's (`op.model is ctx.model`)
    for kernel in ctx.kernels_here_and_in_importers():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            cid, count = kernel.collective_id, kernel.start_semaphores
            if kernel.interpreter != "tpu" or cid is None or count is None:
                continue
            if not FIRST_INTERNAL_ID <= cid < FIRST_INTERNAL_ID + count:
                continue
            if not any(op.kind in ("signal", "wait") for op in kernel.semaphore_ops):
                continue  # nothing touches a semaphore: no clash is seen
            last = FIRST_INTERNAL_ID + count - 1
            ids = f"id {FIRST_INTERNAL_ID}" if count == 1 else f"ids {FIRST_INTERNAL_ID}-{int_text(last)}"
            message = (f'JAX: "ValueError: Semaphore {int_text(cid)} occurs as both fixed-id and internal."; use a collective_id '
                       f"below {FIRST_INTERNAL_ID}. The TPU interpreter gives this kernel's {int_text(count)} semaphore"
                       f"{'s' if count != 1 else ''} the {ids}, and get_barrier_semaphore() is the semaphore "
                       f"with id collective_id={int_text(cid)}; JAX reports it as JaxRuntimeError: INTERNAL: CpuCallback error.")
            for op in kernel.semaphore_ops:
                if op.kind == "barrier_semaphore" and op.model is ctx.model:
                    yield ctx.finding(rule, op.call, message, (ctx.entry_related(kernel),),
                                      facts={"kernel": kernel, "barrier": op.call, "model": op.model,
                                             "entry": kernel.entry})
