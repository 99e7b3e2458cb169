"""PAL006 global-semaphore-as-barrier: a `pl.get_global` semaphore passed where a barrier belongs.

`plgpu.barrier_wait`, `plgpu.barrier_arrive` and the `barrier=` of `plgpu.copy_gmem_to_smem` (and other
copies) take an SMEM `plgpu.Barrier`; a global semaphore fails while tracing with
`ValueError: barrier must be a SMEM reference, got Ref<gmem>{semaphore[]}`. So does a semaphore
allocated in `scratch_types` or with `pl.run_scoped` (`plgpu.SemaphoreType.REGULAR` or `.BARRIER`,
`Ref<gmem>{barrier_semaphore[]}`): a semaphore type where a `plgpu.Barrier` belongs.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.result_uses import calls_barrier_use
from ..analysis.values import Api, shape_text
from .pal005_semaphore_index import traced_get_globals
from .pal013_signal_wait_semaphore_type import first_in_trace

CODE = "PAL006"
NAME = "global-semaphore-as-barrier"
SEVERITY = "error"
SUMMARY = "A global semaphore used as a barrier (barrier_wait, barrier_arrive, copy ... barrier=)."


def check(ctx):
    rule = sys.modules[__name__]
    reported: set[int] = set()
    sites = [(kernel, site.model, site.call, site.memtype, site.uses) for kernel, site in ctx.kernels_reaching()]
    # Checked while tracing, before lowering: also a get_global no kernel reaches (in a jitted function).
    reached = {id(call) for _, _, call, _, _ in sites}
    sites += [(None, ctx.model, call, memtype, uses) for call, memtype, uses in traced_get_globals(ctx, reached)]
    for kernel, model, call, memtype, uses in sites:
        with ctx.isolated(rule, call, model):
            if memtype is None or memtype.space == "smem":
                continue  # whatever get_global is given, barrier_wait takes only an SMEM ref
            for use in uses:
                if use.kind != "barrier" or use.model is not ctx.model or id(use.node) in reported:
                    continue
                reported.add(id(use.node))
                picture = _picture(memtype.space, memtype.dtype, memtype.shape, use)
                where = kernel.scratch_advice() if kernel is not None else "in scratch_types or with pl.run_scoped"
                if _waits(ctx, use) and any(other.kind == "signal" for other in uses):
                    # A counter other blocks signal (split-K completion): a block-local barrier cannot see them.
                    message = (f'JAX: "ValueError: barrier must be a SMEM reference, got {picture}"; use '
                               "pl.semaphore_wait(sem, n). The semaphore is signalled with pl.semaphore_signal: a "
                               "counter of signals across the grid, n the number this block waits for; an SMEM "
                               "barrier orders arrivals within one block only.")
                else:
                    message = (f'JAX: "ValueError: barrier must be a SMEM reference, got {picture}"; use an SMEM '
                               f"plgpu.Barrier. Allocate it {where}. A global semaphore is for pl.semaphore_signal "
                               "and pl.semaphore_wait; barriers order copies and arrivals within a block.")
                related = (ctx.related(model, call, "the global semaphore comes from here"),)
                yield ctx.finding(rule, use.node, message, related,
                                  facts={"kernel": kernel, "get_global": call, "model": model, "use": use,
                                         "entry": kernel.entry if kernel is not None else None})
    yield from _allocated_semaphores(ctx, rule, reported)


def _picture(space: str, dtype: str | None, shape, use) -> str:
    """The ref as JAX's message prints it: `Ref<gmem>{semaphore[]}`."""
    shape = shape[use.indices or 0:] if shape is not None else None
    return f"Ref<{space}>{{{dtype or '...'}[{shape_text(shape, ',') if shape is not None else '...'}]}}"


def _allocated_semaphores(ctx, rule, reported: set[int]):
    """A Mosaic GPU semaphore of scratch_types or pl.run_scoped (a body parameter) used as a barrier."""
    if "barrier" not in ctx.model.text:
        return
    # Every finding is a barrier use of this module's (`use.model is ctx.model`): the importers' kernels
    # are searched only where one can be.
    for kernel in ctx.kernels_here_and_in_importers(calls_barrier_use(ctx.project, ctx.model)):
        for sem in kernel.semaphores:
            if sem.space != "gmem" or sem.dtype not in ("semaphore", "barrier_semaphore"):
                continue
            with ctx.isolated(rule, sem.node, sem.model):
                for (use,) in first_in_trace([(use,) for use in sem.uses if use.kind == "barrier"]):
                    if use.model is not ctx.model or id(use.node) in reported:
                        continue
                    reported.add(id(use.node))
                    kind = "BARRIER" if sem.dtype == "barrier_semaphore" else "REGULAR"
                    message = (f'JAX: "ValueError: barrier must be a SMEM reference, got '
                               f'{_picture(sem.space, sem.dtype, sem.shape, use)}"; use a plgpu.Barrier. '
                               f"Allocate it in place of plgpu.SemaphoreType.{kind}: barrier operations (barrier_wait, "
                               "barrier_arrive, a copy's barrier=) take an SMEM barrier; a semaphore is for "
                               "pl.semaphore_signal and pl.semaphore_wait.")
                    related = (ctx.related(sem.model, sem.node, f"the semaphore, a {sem.dtype}, is {sem.origin}"),)
                    yield ctx.finding(rule, use.node, message, related,
                                      facts={"kernel": kernel, "semaphore": sem.node, "model": sem.model,
                                             "use": use, "entry": kernel.entry})


def _waits(ctx, use) -> bool:
    """Is the barrier use a `plgpu.barrier_wait(...)` call?"""
    callee = ctx.project.evaluator.value(use.model, use.node.func) if isinstance(use.node, ast.Call) else None
    return isinstance(callee, Api) and callee.name == "plgpu.barrier_wait"
