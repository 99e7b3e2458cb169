"""PAL027 scratch-shape-dtype-struct: a `jax.ShapeDtypeStruct` given as a kernel's scratch or `pl.run_scoped` type.

A scratch list (`scratch_shapes` of `pl.pallas_call`, `scratch_types` of `plgpu.kernel` / `pl.kernel`) and
`pl.run_scoped` take memory-space types (`pltpu.VMEM(shape, dtype)`, `plgpu.SMEM(...)`, semaphores): a
`jax.ShapeDtypeStruct`, written or made by `jax.eval_shape` (the accumulator typed by what a block computes), says
no memory space, and JAX refuses it on every backend and interpreter (jax 0.12, checked compiled for TPU, Mosaic
GPU and Triton, under `interpret=True` and the TPU interpreter, as scratch and from `pl.run_scoped`):
`AttributeError: 'ShapeDtypeStruct' object has no attribute 'get_ref_aval'`. Reported where the struct is asked
for (the scratch list's element, the run_scoped argument).
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import MOSAIC_GPU, TPU_TC
from ..analysis.memory_spaces import placements, typed_leaves
from ..analysis.values import ShapeDtype

CODE = "PAL027"
NAME = "scratch-shape-dtype-struct"
SEVERITY = "error"
SUMMARY = "A jax.ShapeDtypeStruct (jax.eval_shape's too) as scratch or pl.run_scoped type: it has no memory space."

QUOTE = "AttributeError: 'ShapeDtypeStruct' object has no attribute 'get_ref_aval'"
# The on-chip buffer of each backend, for the advice and the fix.
OWN_BUFFER = {TPU_TC: "pltpu.VMEM", MOSAIC_GPU: "plgpu.SMEM"}


def buffer_type(kernel) -> str | None:
    """The memory type a buffer of `kernel` is written with: its backend's (the one it would compile for)."""
    return OWN_BUFFER.get(kernel.compiled_backend)


def message(kernel, placement) -> str:
    own = buffer_type(kernel)
    advice = f"use {own}(s.shape, s.dtype)" if own else "give it a memory space"
    allocated = "in the scratch list" if placement.kind == "scratch" else "to pl.run_scoped"
    return (f'JAX: "{QUOTE}"; {advice}. A ShapeDtypeStruct describes an array but says no memory space, which '
            f"a buffer given {allocated} must have.")


def check(ctx):
    rule = sys.modules[__name__]
    if "ShapeDtypeStruct" not in ctx.model.text and "eval_shape" not in ctx.model.text:
        return
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers(importers=ctx.calls_any(("pl.run_scoped",))):
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            for placement in placements(ctx.project, kernel, None, lambda value: typed_leaves(value, ShapeDtype)):
                if placement.model is not ctx.model or id(placement.use) in reported:
                    continue
                reported.add(id(placement.use))
                yield ctx.finding(rule, placement.use, message(kernel, placement), (ctx.entry_related(kernel),),
                                  facts={"kernel": kernel, "placement": placement})
