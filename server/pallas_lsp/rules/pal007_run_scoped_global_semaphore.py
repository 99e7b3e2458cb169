"""PAL007 run-scoped-global-semaphore: `pl.run_scoped` asked for a semaphore shared across blocks.

On Mosaic GPU, `run_scoped` allocates per block (or per thread group with `collective_axes=<thread
axis>`); a semaphore collective over a grid or cluster axis is what `pl.get_global` is for. JAX's
resource estimator fails with `ValueError: Only thread-collective allocations are supported in
run_scoped. To allocate global semaphores, use pl.get_global.` Nor can it allocate a BARRIER semaphore
(`plgpu.SemaphoreType.BARRIER`), in any kernel: `NotImplementedError: Unsupported memory space: gmem`.
The same refusal meets a buffer or barrier (`plgpu.SMEM`, `plgpu.Barrier`) with `collective_axes` naming a
grid or cluster axis: nothing run_scoped allocates is shared across blocks.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernel_model import MOSAIC_GPU

CODE = "PAL007"
NAME = "run-scoped-global-semaphore"
SEVERITY = "error"
SUMMARY = "pl.run_scoped of a Mosaic GPU semaphore collective over grid or cluster axes (use pl.get_global), or of a BARRIER one."

QUOTE = "Only thread-collective allocations are supported in run_scoped"


BARRIER_QUOTE = "NotImplementedError: Unsupported memory space: gmem"


def check(ctx):
    rule = sys.modules[__name__]
    reported: set[int] = set()
    if "BARRIER" in ctx.model.text and "run_scoped" in ctx.model.text:
        yield from _barrier_semaphores(ctx, reported)
    if not (ctx.may_run_scoped_semaphore() or "collective_axes" in ctx.model.text):
        return  # no run_scoped of a semaphore type, nor collective axes, here: no kernel model needed
    for kernel in ctx.kernels():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            if kernel.backend != MOSAIC_GPU or kernel.thread_axes is None:
                continue
            for site in kernel.run_scoped:
                if site.model is not ctx.model or site.collective_axes is None or id(site.call) in reported:
                    continue
                if site.collective_axes == kernel.thread_axes or (not site.collective_axes and not kernel.thread_axes):
                    continue
                known = set((kernel.grid_axes or ()) + (kernel.cluster_axes or ()))
                allocates = _allocates(ctx, site)
                if allocates is None:
                    continue  # no semaphore known among types not all known: nothing certain
                local = allocates == "local"
                if local and set(site.collective_axes) & known:
                    axes = ", ".join(repr(a) for a in site.collective_axes)
                    message = (f'JAX: "{QUOTE}"; drop collective_axes=({axes}). They span blocks of the grid or '
                               "cluster; run_scoped allocates per block (or shared by the warpgroups with the "
                               "thread axis), and a buffer or barrier is never shared across blocks.")
                elif local:
                    continue
                elif not site.collective_axes and kernel.thread_axes:
                    # With warpgroups the estimator takes only the thread axis as block-local (_is_block_local_scope).
                    thread = kernel.thread_axes[0]
                    message = (f'JAX: "{QUOTE}"; add collective_axes="{thread}". In a kernel with warpgroups '
                               f"(thread axis {thread!r}) a run_scoped semaphore is shared by them: it needs collective_axes={thread!r}.")
                elif set(site.collective_axes) & known:  # only a grid or cluster axis is certain to be refused
                    axes = ", ".join(repr(a) for a in site.collective_axes)
                    message = (f'JAX: "{QUOTE}"; use pl.get_global(plgpu.SemaphoreType.REGULAR). collective_axes=({axes}) '
                               "spans blocks of the grid or cluster; run_scoped allocates per block (or per thread group with the thread axis).")
                else:
                    continue
                reported.add(id(site.call))
                yield ctx.finding(rule, site.call, message, (ctx.entry_related(kernel),),
                                  facts={"kernel": kernel, "run_scoped": site.call, "model": site.model,
                                         "collective_axes": site.collective_axes, "entry": kernel.entry,
                                         "local": local})


def _allocates(ctx, site) -> str | None:
    """"semaphore" where the run_scoped gives its body a Mosaic GPU semaphore, "local" where only buffers and
    barriers (every type known), None where not known."""
    from ..analysis.evaluate import as_memtype
    from ..analysis.values import MemType

    call = site.call
    types = [a for a in call.args[1:] if not isinstance(a, ast.Starred)]
    types += [k.value for k in call.keywords if k.arg not in (None, "collective_axes")]
    kinds = [as_memtype(ctx.project.evaluator.value(site.model, t)) for t in types]
    if any(isinstance(m, MemType) and m.space == "gmem" and m.dtype in ("semaphore", "barrier_semaphore")
           for m in kinds):
        return "semaphore"
    known = types and all(isinstance(m, MemType) for m in kinds) and not any(isinstance(a, ast.Starred) for a in call.args)
    return "local" if known else None


def _barrier_semaphores(ctx, reported: set[int]):
    """A Mosaic GPU BARRIER semaphore (`plgpu.SemaphoreType.BARRIER`) from `pl.run_scoped`: its resource estimator
    allocates only semaphores of the REGULAR kind there and refuses the memory space of any other, whatever the
    grid and however it is used (checked with jax 0.12: `Unsupported memory space: gmem`)."""
    rule = sys.modules[__name__]
    for kernel in ctx.kernels_here_and_in_importers():
        if kernel.backend != MOSAIC_GPU:
            continue
        for sem in kernel.semaphores:
            if sem.dtype != "barrier_semaphore" or sem.space != "gmem" or sem.allocated_at is None:
                continue
            model, call = sem.allocated_at
            if model is not ctx.model or id(call) in reported:
                continue
            with ctx.isolated(rule, call, model):
                reported.add(id(call))
                message = (f'JAX: "{BARRIER_QUOTE}"; allocate a plgpu.SemaphoreType.REGULAR. run_scoped allocates '
                           f"REGULAR semaphores in a Mosaic GPU kernel; {sem.node.arg} is a BARRIER one, which it "
                           "cannot place.")
                yield ctx.finding(rule, call, message, (ctx.entry_related(kernel),),
                                  facts={"kernel": kernel, "run_scoped": call, "model": model, "entry": kernel.entry,
                                         "semaphore": sem.node, "barrier": True})
