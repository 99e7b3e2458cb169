"""PAL017 local-copy-src-sem: a local TPU copy (`pltpu.make_async_copy` / `pltpu.async_copy`) given `src_sem=`
in a kernel Mosaic TPU lowers for the TensorCore.

A local copy has no device_id; Mosaic TPU gives it no source semaphore, and jax 0.12 refuses one when it
lowers the copy's start (`_dma_start_lowering_rule` in jax/_src/pallas/mosaic/lowering.py):
`NotImplementedError: Source semaphore (`src_sem`) on a local copy without device_id is not implemented on
TensorCore.` A copy only waited on here (another kernel started it) fails at `.wait()`, which waits for the
read first: "`wait_read` on a local copy without device_id is not implemented on TensorCore."; at `.wait_recv()`
(`.wait_write()`), where Mosaic TPU verifies the wait it lowers: "VerificationError: ... 'tpu.wait_dma' op DMA
destination device_id or core_id must be specified when source semaphore is specified". The interpreters
run it (interpret=True, the TPU interpreter); jax 0.11 has no `src_sem`. JAX's SparseCore lowering says what
to do (a push stream aside): "pass `src_sem=None` and use `wait()`, which already guarantees completion of
this transfer" (the write completes after the read). Not reported where the kernel fails while tracing
first (another rule's finding on it: a send semaphore that is no ref, of the wrong shape or type).
"""

from __future__ import annotations

import ast
import sys

from ..analysis.local_copies import local_src_sem, refuses_local_src_sem
from . import (pal005_semaphore_index, pal008_semaphore_kernel_boundary, pal010_dma_semaphore_not_ref,
               pal013_signal_wait_semaphore_type, pal014_signal_wait_not_ref, pal015_dma_wait_semaphore_type)

CODE = "PAL017"
NAME = "local-copy-src-sem"
SEVERITY = "error"
SUMMARY = "A local TPU copy given src_sem= in a TensorCore kernel: Mosaic TPU has no source semaphore for it."

# Rules whose errors JAX raises while tracing, or lowering an earlier equation, before it lowers the copy.
FAILS_FIRST = (pal005_semaphore_index, pal008_semaphore_kernel_boundary, pal010_dma_semaphore_not_ref,
               pal013_signal_wait_semaphore_type, pal014_signal_wait_not_ref, pal015_dma_wait_semaphore_type)


def message(waited: str | None) -> str:
    """`waited`: the method of a copy only waited on here (None: the copy is started here)."""
    if waited is None:
        head = 'JAX: "NotImplementedError: Source semaphore (`src_sem`) on a local copy ... on TensorCore."'
    elif waited == "wait":
        head = 'JAX: "NotImplementedError: `wait_read` on a local copy ... is not implemented on TensorCore."'
    else:
        head = 'JAX: "VerificationError: ... device_id or core_id must be specified when source semaphore is specified"'
    return (f"{head}; drop src_sem. A copy on one device has no source semaphore on the TensorCore; its .wait() "
            "waits for the write, which ends after the read (JAX: \"pass `src_sem=None` and use `wait()`, which "
            "already guarantees completion of this transfer\").")


def first_wait(copy) -> ast.Call | None:
    """A copy only waited on here: its first wait (`.wait()`, `.wait_recv()`, `.wait_write()`), where JAX fails."""
    return min(copy.waits, key=lambda call: (call.lineno, call.col_offset), default=None)


def check(ctx):
    rule = sys.modules[__name__]
    if "src_sem" not in ctx.model.text:
        return
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            if not refuses_local_src_sem(ctx.project, kernel):
                continue
            copies = [(copy, node) for copy in kernel.dma_copies
                      if (node := local_src_sem(ctx.project, copy)) is not None]
            if not copies or ctx.reported_on(kernel, FAILS_FIRST):
                continue
            for copy, node in copies:
                if copy.model is not ctx.model:
                    continue
                wait = None if copy.starts else first_wait(copy)
                for place in copy.starts[:1] or ([wait] if wait is not None else []):
                    if id(place) in reported:
                        continue
                    reported.add(id(place))
                    related = (ctx.related(copy.model, node, "the send semaphore (src_sem)"), ctx.entry_related(kernel))
                    yield ctx.finding(rule, place, message(wait.func.attr if wait is not None else None), related,
                                      facts={"kernel": kernel, "entry": kernel.entry, "copy": copy.call,
                                             "model": copy.model, "semaphore": node})
