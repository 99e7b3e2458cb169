"""PAL013 signal-wait-semaphore-type: `pl.semaphore_signal` / `pl.semaphore_wait` on a semaphore they do not take.

Both check the ref while tracing (`check_sem_avals` in jax/_src/pallas/primitives.py): after the shape
(PAL005), its dtype must be a REGULAR or BARRIER semaphore (or the interpreter's int16). A TPU DMA
semaphore fails on every backend, TPU included: `ValueError: Must signal semaphores of the following types:
{...}. Got dma_sem.` A DMA semaphore is signalled by its copy and waited on through the copy descriptor.

The other way round: a TPU copy may be given a REGULAR semaphore to signal, but its descriptor's `.wait()` takes
only a DMA one (dma_wait's abstract evaluation, jax/_src/pallas/mosaic/primitives.py): `ValueError: dma_wait
requires a DMA semaphore, but got a regular semaphore. Use pl.semaphore_wait() instead.`
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import INTERPRET, MOSAIC_GPU
from ..analysis.result_uses import copy_waits
from .pal005_semaphore_index import traced_get_globals

CODE = "PAL013"
NAME = "signal-wait-semaphore-type"
SEVERITY = "error"
SUMMARY = ("pl.semaphore_signal / pl.semaphore_wait on a TPU DMA semaphore (or another ref that is no REGULAR or "
           "BARRIER semaphore), or a TPU copy's .wait() on a REGULAR one.")

ALLOWED = ("semaphore", "barrier_semaphore")


def message(kind: str, dtype: str, on_gpu: bool) -> str:
    quoted = f"ValueError: Must {kind} semaphores of the following types: {{...}}. Got {dtype}."
    if dtype == "dma_sem" and on_gpu:
        what = ("use a REGULAR semaphore. A TPU DMA semaphore is for TPU copies; signal and wait take a "
                "REGULAR (or BARRIER) semaphore: plgpu.SemaphoreType.REGULAR in a Mosaic GPU kernel")
    elif dtype == "dma_sem":
        what = ("wait on the copy (.wait()). A DMA semaphore is signalled by its copy and waited on through the "
                "copy descriptor (pltpu.make_async_copy(...).wait()); signal and wait take a REGULAR (or BARRIER) "
                "semaphore")
    else:
        what = "pass a semaphore. Signal and wait take a REGULAR (or BARRIER) semaphore ref"
    return (f'JAX: "{quoted}"; {what}. JAX checks this while tracing, on every backend, before it lowers '
            "anything.")


def copy_wait_message(dtype: str) -> str:
    kind = "a barrier semaphore" if dtype == "barrier_semaphore" else "a REGULAR semaphore"
    return ('JAX: "dma_wait requires a DMA semaphore, but got a regular semaphore"; wait with pl.semaphore_wait. '
            f"The copy's receive semaphore is {kind}: the copy signals it, but the descriptor's .wait() takes only a "
            "pltpu.SemaphoreType.DMA; wait on this one with pl.semaphore_wait(sem, value), or make it a DMA semaphore.")


def check(ctx):
    rule = sys.modules[__name__]
    if not ctx.model.mentions("emaphore"):
        return
    # (kernel, model, node, dtype, shape, uses, words, facts) of every semaphore signalled or waited on here.
    sites = [(kernel, site.model, site.call, site.memtype, site.uses) for kernel, site in ctx.kernels_reaching()]
    reached = {id(site[2]) for site in sites}
    sites += [(None, ctx.model, call, memtype, uses) for call, memtype, uses in traced_get_globals(ctx, reached)]
    found = [(kernel, model, call, memtype.dtype, memtype.shape, uses, "comes from here", {"get_global": call})
             for kernel, model, call, memtype, uses in sites if memtype is not None]
    for kernel in ctx.kernels_here_and_in_importers():
        found += [(kernel, sem.model, sem.node, sem.dtype, sem.shape, sem.uses, f"is {sem.origin}", {"semaphore": sem.node})
                  for sem in kernel.semaphores]
    reported: set[int] = set()
    for kernel, model, node, dtype, shape, uses, words, facts in found:
        with ctx.isolated(rule, node, model):
            if shape is None or dtype is None:
                continue
            if dtype in ALLOWED:
                yield from _copy_waits(ctx, rule, kernel, model, node, dtype, shape, uses, words, reported)
                continue
            failing = [(use,) for use in uses if use.kind in ("signal", "wait") and use.indices == len(shape)]
            for (use,) in first_in_trace(failing):  # tracing stops at the first one
                if use.model is not ctx.model or id(use.node) in reported:
                    continue
                reported.add(id(use.node))
                on_gpu = "get_global" in facts or _gpu_kernel(kernel)  # get_global is Mosaic GPU's
                related = (ctx.related(model, node, f"the semaphore, a {dtype}, {words}"),)
                yield ctx.finding(rule, use.node, message(use.kind, dtype, on_gpu), related,
                                  facts={"kernel": kernel, "model": model, "use": use, "dtype": dtype,
                                         "entry": kernel.entry if kernel is not None else None, **facts})


def _copy_waits(ctx, rule, kernel, model, node, dtype, shape, uses, words, reported):
    """A REGULAR or BARRIER semaphore a TPU copy signals, whose descriptor is waited on (`.wait()`)."""
    waits = [(use, wait) for use in uses if use.kind == "dma_dst" and use.indices == len(shape)
             for wait in copy_waits(use)]
    for use, wait in first_in_trace(waits):
        if use.model is not ctx.model or id(wait) in reported:
            continue
        reported.add(id(wait))
        related = (ctx.related(model, node, f"the semaphore, a {dtype}, {words}"),
                   ctx.related(use.model, use.node, "the copy it is given to"))
        yield ctx.finding(rule, wait, copy_wait_message(dtype), related,
                          facts={"kernel": kernel, "model": model, "use": use, "dtype": dtype,
                                 "entry": kernel.entry if kernel is not None else None, "semaphore": node})


def first_in_trace(failing: list[tuple]) -> list[tuple]:
    """Of the failing (use, ...) of one semaphore, those JAX can reach: tracing stops at the first error, so
    where they all sit in one function only the first in it; across functions (trace order not known) all."""
    places = {(id(use.model), id(use.model.enclosing_function(use.node))) for use, *_ in failing}
    if len(places) != 1:
        return failing
    return [min(failing, key=lambda item: (item[0].node.lineno, item[0].node.col_offset))]


def _gpu_kernel(kernel) -> bool:
    if kernel is None:
        return False
    backend = kernel.compiled_backend if kernel.backend == INTERPRET else kernel.backend
    return backend == MOSAIC_GPU
