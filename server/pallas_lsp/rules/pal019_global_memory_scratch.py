"""PAL019 global-memory-scratch: a Mosaic GPU kernel asks for a global-memory array as scratch or from `pl.run_scoped`.

A compiled Mosaic GPU kernel allocates on-chip buffers only (SMEM, TMEM); a `plgpu.GMEM` array (or `pl.ANY`,
`pltpu.HBM`) in `scratch_types` or `pl.run_scoped` is refused: `NotImplementedError: Unsupported memory space:
gmem` (jax 0.12, the resource estimator). Global memory a kernel writes is one of its outputs: XLA allocates it,
and an output the launcher drops is a workspace in all but name. GMEM semaphores are not arrays, and are not
reported; an interpreter runs such a buffer and is not reported either.
"""

from __future__ import annotations

import sys

from ..analysis.memory_spaces import refused_here

CODE = "PAL019"
NAME = "global-memory-scratch"
SEVERITY = "error"
SUMMARY = "A global-memory array (plgpu.GMEM, pl.ANY) as a Mosaic GPU kernel's scratch or pl.run_scoped buffer: make it an output."


def check(ctx):
    rule = sys.modules[__name__]
    text = ctx.model.text
    if "GMEM" not in text and "ANY" not in text and "HBM" not in text and "scratch" not in text:
        return
    for kernel, placement, where, quote in refused_here(ctx, rule, workspaces=True):
        allocated = "in scratch_types" if placement.kind == "scratch" else "from pl.run_scoped"
        message = (f'JAX: "{quote}"; make it one more output of the kernel, which the launcher drops. '
                   f"{placement.memtype.constructor} asks for global memory {allocated}, which a Mosaic GPU "
                   "kernel does not allocate: its global buffers are its operands and outputs.")
        yield ctx.finding(rule, placement.use, message, (ctx.entry_related(kernel),),
                          facts={"kernel": kernel, "placement": placement, "platform": where})
