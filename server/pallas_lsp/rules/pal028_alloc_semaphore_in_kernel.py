"""PAL028 alloc-semaphore-in-kernel: `plgpu.alloc_semaphore()` called inside a Mosaic GPU kernel.

`plgpu.alloc_semaphore(shape=())` (jax 0.12) makes a GMEM semaphore ref on the host, for the caller to pass to the
kernels that share it. Called while the kernel body is traced, its `to_edtype` conversion reaches Mosaic GPU's
lowering, which has no rule for it: `NotImplementedError: Unimplemented primitive in Pallas Mosaic GPU lowering:
to_edtype ...` (checked for `plgpu.kernel` and `pl.kernel` over a `plgpu.Mesh`, used or not, shaped or not);
interpreted, JAX says `dtype=semaphore is not a valid dtype for JAX type promotion.`. Inside a kernel the global
semaphore is `pl.get_global(plgpu.SemaphoreType.REGULAR)` (shaped: `REGULAR((n,))`), zero at the start and shared
by the grid as alloc_semaphore's is. Reported on the call, in the body or a helper it runs.
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import MOSAIC_GPU, MOSAIC_GPU_WARP
from ..analysis.kernels import pallas_calls, reachable_functions

CODE = "PAL028"
NAME = "alloc-semaphore-in-kernel"
SEVERITY = "error"
SUMMARY = "plgpu.alloc_semaphore() inside a Mosaic GPU kernel: it is made on the host; use pl.get_global(REGULAR)."

COMPILED_QUOTE = "Unimplemented primitive in Pallas Mosaic GPU lowering: to_edtype"
INTERPRETED_QUOTE = "dtype=semaphore is not a valid dtype for JAX type promotion."
_GPU = (MOSAIC_GPU, MOSAIC_GPU_WARP)


def message(interpreted: bool) -> str:
    quote = INTERPRETED_QUOTE if interpreted else COMPILED_QUOTE
    return (f'JAX: "{quote}"; use pl.get_global(plgpu.SemaphoreType.REGULAR). plgpu.alloc_semaphore() makes a '
            "semaphore on the host, to pass to kernels; inside a kernel, pl.get_global allocates the global one.")


def check(ctx):
    rule = sys.modules[__name__]
    if not ctx.model.mentions("alloc_semaphore"):
        return
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        if kernel.compiled_backend not in _GPU or kernel.entry.body is None:
            continue
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            interpreted = kernel.backend not in _GPU
            for func in reachable_functions(ctx.project, kernel.entry.body):
                if func.model is not ctx.model:
                    continue
                for call in pallas_calls(ctx.project, func.model, "plgpu.alloc_semaphore"):
                    if func.model.enclosing_function(call) is not func.node or id(call) in reported:
                        continue
                    reported.add(id(call))
                    yield ctx.finding(rule, call, message(interpreted), (ctx.entry_related(kernel),),
                                      facts={"kernel": kernel, "call": call})
