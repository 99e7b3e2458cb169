"""PAL006 global-semaphore-as-barrier: a `pl.get_global` semaphore passed where a barrier belongs.

`plgpu.barrier_wait`, `plgpu.barrier_arrive` and the `barrier=` of `plgpu.copy_gmem_to_smem` (and other
copies) take an SMEM `plgpu.Barrier`; a global semaphore fails while tracing with
`ValueError: barrier must be a SMEM reference, got Ref<gmem>{semaphore[]}`.
"""

from __future__ import annotations

import sys

CODE = "PAL006"
NAME = "global-semaphore-as-barrier"
SEVERITY = "error"
SUMMARY = "A global semaphore used as a barrier (barrier_wait, barrier_arrive, copy ... barrier=)."


def check(ctx):
    rule = sys.modules[__name__]
    reported: set[int] = set()
    for kernel, site in ctx.kernels_reaching():
        memtype = site.memtype
        if memtype is None or not memtype.is_gpu_global_semaphore:
            continue
        for use in site.uses:
            if use.kind != "barrier" or use.model is not ctx.model or id(use.node) in reported:
                continue
            reported.add(id(use.node))
            shape = memtype.shape[use.indices or 0:] if memtype.shape is not None else None
            picture = f"Ref<gmem>{{semaphore[{','.join(map(str, shape))}]}}" if shape is not None else "Ref<gmem>{semaphore[...]}"
            message = (f'JAX: "ValueError: barrier must be a SMEM reference, got {picture}"; use an SMEM plgpu.Barrier. '
                       "Allocate it in scratch_types or with pl.run_scoped. A global semaphore is for pl.semaphore_signal and "
                       "pl.semaphore_wait; barriers order copies and arrivals within a block.")
            related = (ctx.related(site.model, site.call, "the global semaphore comes from here"),)
            yield ctx.finding(rule, use.node, message, related,
                              facts={"kernel": kernel, "get_global": site.call, "model": site.model, "use": use,
                                     "entry": kernel.entry})
