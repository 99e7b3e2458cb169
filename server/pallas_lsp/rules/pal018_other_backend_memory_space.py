"""PAL018 other-backend-memory-space: a kernel's scratch or `pl.run_scoped` buffer in the other backend's memory space.

`pltpu.VMEM` (or any TPU type) in a compiled Mosaic GPU kernel: `NotImplementedError: Unsupported memory space:
vmem`; `plgpu.SMEM` (or GMEM, TMEM) in a compiled TPU kernel: `Invalid memory space: <MemorySpace.SMEM: 'smem'>`,
and under `pltpu.InterpretParams`: `KeyError: <MemorySpace.SMEM: 'smem'>` (jax 0.12; what each lowering accepts is
in `analysis/memory_spaces.py`). A type shared by code ported from one backend to the other is the usual cause.
Reported where the buffer is asked for (the scratch list's element, the run_scoped argument); silent for a kernel
an interpreter that places every type may run (`interpret=True`, the GPU interpreter), and for a Mosaic GPU
kernel's global-memory buffer (PAL019's).
"""

from __future__ import annotations

import sys

from ..analysis.memory_spaces import GPU, OWN_TYPE, refused_here

CODE = "PAL018"
NAME = "other-backend-memory-space"
SEVERITY = "error"
SUMMARY = "A scratch or pl.run_scoped buffer of the other backend's memory space (pltpu.VMEM in a Mosaic GPU kernel, plgpu.SMEM in a TPU one)."


def check(ctx):
    rule = sys.modules[__name__]
    text = ctx.model.text
    if "pltpu" not in text and "plgpu" not in text and "tpu" not in text and "mosaic_gpu" not in text:
        return
    for kernel, placement, where, quote in refused_here(ctx, rule, workspaces=False):
        yield ctx.finding(rule, placement.use, message(placement, where, quote), (ctx.entry_related(kernel),),
                          facts={"kernel": kernel, "placement": placement, "platform": where})


def message(placement, where: str, quote: str) -> str:
    made = placement.memtype.constructor
    own = OWN_TYPE[where].get(made)
    advice = f"; use {own}" if own else ""
    kind = "on-chip buffers are plgpu.SMEM (or plgpu.TMEM)" if where == GPU else "buffers are pltpu types (VMEM, SMEM)"
    allocated = "in the scratch list" if placement.kind == "scratch" else "from pl.run_scoped"
    return (f'JAX: "{quote}"{advice}. {made} is the other backend\'s memory space, allocated {allocated} of a kernel '
            f"{where} lowers, whose {kind}.")
