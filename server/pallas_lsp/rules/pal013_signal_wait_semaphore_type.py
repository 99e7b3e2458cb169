"""PAL013 signal-wait-semaphore-type: `pl.semaphore_signal` / `pl.semaphore_wait` on a semaphore they do not take.

Both check the ref while tracing (`check_sem_avals` in jax/_src/pallas/primitives.py): after the shape
(PAL005), its dtype must be a REGULAR or BARRIER semaphore (or the interpreter's int16). A TPU DMA
semaphore fails on every backend, TPU included: `ValueError: Must signal semaphores of the following types:
{...}. Got dma_sem.` A DMA semaphore is signalled by its copy and waited on through the copy descriptor.
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import INTERPRET, MOSAIC_GPU, SEMAPHORE_DTYPES
from ..analysis.barrier_refs import BARRIER_DTYPES, kernel_barriers, run_scoped_barriers
from .pal005_semaphore_index import traced_get_globals

CODE = "PAL013"
NAME = "signal-wait-semaphore-type"
SEVERITY = "error"
SUMMARY = "pl.semaphore_signal / pl.semaphore_wait on a TPU DMA semaphore (or another ref that is no REGULAR or BARRIER semaphore)."

ALLOWED = ("semaphore", "barrier_semaphore")


def message(kind: str, dtype: str, on_gpu: bool) -> str:
    quoted = f"ValueError: Must {kind} semaphores of the following types: {{...}}. Got {dtype}."
    if dtype in BARRIER_DTYPES:
        call = "plgpu.barrier_wait(barrier)" if kind == "wait" else "plgpu.barrier_arrive(barrier)"
        what = (f"use {call}. A plgpu.Barrier is waited on and arrived at with the barrier operations; "
                "pl.semaphore_signal and pl.semaphore_wait take a REGULAR (or BARRIER) semaphore")
    elif dtype == "dma_sem" and on_gpu:
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
    if "Barrier" in ctx.model.text:  # a plgpu.Barrier given to signal or wait
        found += _barriers(ctx)
    if "semaphore_signal" in ctx.model.text or "semaphore_wait" in ctx.model.text:
        found += _array_operands(ctx)
    reported: set[int] = set()
    for kernel, model, node, dtype, shape, uses, words, facts in found:
        with ctx.isolated(rule, node, model):
            if shape is None or dtype is None or dtype in ALLOWED:
                continue
            failing = [(use,) for use in uses if use.kind in ("signal", "wait") and use.indices == len(shape)]
            for (use,) in first_in_trace(failing):  # tracing stops at the first one
                if use.model is not ctx.model or id(use.node) in reported:
                    continue
                reported.add(id(use.node))
                on_gpu = "get_global" in facts or "barrier" in facts or _gpu_kernel(kernel)  # get_global is Mosaic GPU's
                related = (ctx.related(model, node, f"the semaphore, a {dtype}, {words}"),)
                yield ctx.finding(rule, use.node, message(use.kind, dtype, on_gpu), related,
                                  facts={"kernel": kernel, "model": model, "use": use, "dtype": dtype,
                                         "entry": kernel.entry if kernel is not None else None, **facts})


def _array_operands(ctx) -> list[tuple]:
    """The found-tuples of body parameters JAX passes an array of known dtype (an int32 counter made by the
    launcher, passed as an operand): no semaphore, whatever the body does with it."""
    from ..analysis.kernel_args import kernel_parameters
    from ..analysis.result_uses import parameter_uses

    found = []
    for kernel in ctx.kernels_here_and_in_importers(importers=False):
        body = kernel.entry.body
        if body is None or body.model is not ctx.model:
            continue
        for param in kernel_parameters(ctx.project, kernel.entry):
            if param.dtype is None or param.shape is None or param.dtype in (*SEMAPHORE_DTYPES, *BARRIER_DTYPES, "int16"):
                continue  # int16: the interpreter's semaphores, which signal and wait take
            uses = parameter_uses(ctx.project, body, param.node)
            if any(use.kind in ("signal", "wait") for use in uses):
                found.append((kernel, body.model, param.node, param.dtype, param.shape, uses, f"is {param.origin}",
                              {"operand": param.node}))
    return found


def _barriers(ctx) -> list[tuple]:
    """The found-tuples of the barriers of this module's kernels' scratch and of its run_scoped calls."""
    found, seen = [], set()
    refs = [(kernel, ref) for kernel in ctx.kernels_here_and_in_importers() for ref in kernel_barriers(ctx.project, kernel)]
    refs += [(None, ref) for ref in run_scoped_barriers(ctx.project, ctx.model)]
    for kernel, ref in refs:
        if id(ref.node) not in seen:
            seen.add(id(ref.node))
            found.append((kernel, ref.model, ref.node, ref.dtype, ref.shape, list(ref.uses), f"is {ref.origin}",
                          {"barrier": ref.node}))
    return found


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
