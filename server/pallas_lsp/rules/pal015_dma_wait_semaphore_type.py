"""PAL015 dma-wait-semaphore-type: a TPU copy waited on through its descriptor with a REGULAR semaphore.

A copy may be started with a REGULAR semaphore (TPU v6 and later) and then waited on with
`pl.semaphore_wait`, but its descriptor's `.wait()` (`wait_recv`, `wait_write`; `wait_read`, `wait_send` for
the send semaphore) binds `dma_wait`, whose abstract evaluation (jax/_src/pallas/mosaic/primitives.py) takes
a DMA semaphore only, on every backend and in interpret mode too: `ValueError: dma_wait requires a DMA
semaphore, but got a regular semaphore. Use pl.semaphore_wait() instead.` PAL013 is the other way round.
"""

from __future__ import annotations

import ast
import sys
from typing import NamedTuple

from ..analysis.local_copies import local_src_sem, refuses_local_src_sem
from ..analysis.result_uses import _starts
from .pal013_signal_wait_semaphore_type import first_in_trace

CODE = "PAL015"
NAME = "dma-wait-semaphore-type"
SEVERITY = "error"
SUMMARY = "A TPU copy's .wait() on a REGULAR (or BARRIER) semaphore: dma_wait takes a DMA semaphore."

QUOTE = "ValueError: dma_wait requires a DMA semaphore, but got a regular semaphore."
NOT_DMA = ("semaphore", "barrier_semaphore")
# The descriptor's methods that wait on each of its semaphores: `.wait()` waits for the read (its send
# semaphore, where there is one) and then for the write (its receive semaphore).
WAITS = {"dma_dst": ("wait", "wait_recv", "wait_write"), "dma_src": ("wait", "wait_read", "wait_send")}


class _Wait(NamedTuple):
    model: object
    node: ast.Call


# What a semaphore that only copies use is given to: nothing there counts it as a REGULAR semaphore.
COPY_USES = ("dma_dst", "dma_src", "copy", "select")


def message(dtype: str, method: str, dropped: bool = False, copies_only: bool = False) -> str:
    """`dropped`: the semaphore is a local copy's src_sem in a kernel lowered for the TensorCore (PAL017).
    `copies_only`: nothing but copies uses the semaphore, so a DMA semaphore is what it means; JAX's own hint
    (`pl.semaphore_wait`) comes second, since it waits on a copy only where the copy itself starts with a REGULAR
    semaphore (TPU v6 and later), and not on a remote copy's arrival."""
    kind = "BARRIER" if dtype == "barrier_semaphore" else "REGULAR"
    if copies_only and not dropped:
        return (f'JAX: "{QUOTE}"; allocate a pltpu.SemaphoreType.DMA. Only copies use this {kind} semaphore, and '
                f"the copy's .{method}() binds dma_wait, which takes a DMA semaphore only; JAX's hint, "
                "pl.semaphore_wait, waits on a copy only where it was started with a REGULAR semaphore (TPU v6 and "
                "later).")
    if dropped:
        return (f'JAX: "{QUOTE}"; drop src_sem. The copy\'s .{method}() waits for the read on its send semaphore, '
                f"which is {kind}, and a local copy takes no send semaphore on the TensorCore at all (PAL017): "
                "without it .wait() waits for the write, which ends after the read.")
    return (f'JAX: "{QUOTE}"; wait on it with pl.semaphore_wait. The copy\'s .{method}() binds dma_wait, which takes '
            f"a DMA semaphore only, and this one is {kind}; or allocate a pltpu.SemaphoreType.DMA and keep .{method}() "
            "(a copy started with a REGULAR semaphore, on TPU v6 and later, is waited on with pl.semaphore_wait).")


def descriptor_of(model, start: ast.Call) -> ast.Call | None:
    """The copy descriptor a `.start()` (or a starting `pltpu.async_copy(...)`) belongs to: the call itself, the
    call `.start()` is chained on, or the call the one name it is started through was assigned."""
    func = start.func
    if not (isinstance(func, ast.Attribute) and func.attr == "start"):
        return start
    if isinstance(func.value, ast.Call):
        return func.value
    if isinstance(func.value, ast.Name):
        binding = model.lookup(func.value.id, model.scope_of(func.value), func.value.lineno)
        if binding is not None and binding.kind == "assign" and isinstance(binding.value, ast.Call):
            return binding.value
    return None


def check(ctx):
    rule = sys.modules[__name__]
    if "wait" not in ctx.model.text or "emaphore" not in ctx.model.text:
        return
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        for sem in kernel.semaphores:
            if sem.dtype not in NOT_DMA:
                continue
            with ctx.isolated(rule, sem.node, sem.model):
                waits = []
                for use in sem.uses:
                    role = use.role if use.kind == "copy" else use.kind  # "copy": a descriptor only waited on here
                    if role not in WAITS or use.indices != len(sem.shape):
                        continue  # too few indices: PAL005 at the start, first
                    descriptor = use.descriptor or descriptor_of(use.model, use.node)
                    if descriptor is not None:
                        waits += [_Wait(use.model, w) for w in _starts(use.model, descriptor, WAITS[role])]
                for (wait,) in first_in_trace([(w,) for w in {id(w.node): w for w in waits}.values()]):
                    if wait.model is not ctx.model or id(wait.node) in reported:
                        continue
                    reported.add(id(wait.node))
                    related = (ctx.related(sem.model, sem.node, f"the semaphore, a {sem.dtype}, is {sem.origin}"),)
                    dropped = wait.node.func.attr == "wait" and _local_send_semaphore(ctx.project, kernel, sem)
                    copies_only = all(use.kind in COPY_USES for use in sem.uses)
                    yield ctx.finding(rule, wait.node, message(sem.dtype, wait.node.func.attr, dropped, copies_only),
                                      related,
                                      facts={"kernel": kernel, "model": wait.model, "semaphore": sem.node,
                                             "dtype": sem.dtype, "entry": kernel.entry})


def _local_send_semaphore(project, kernel, sem) -> bool:
    """Whether `sem` (a body or pl.run_scoped parameter) is, by name, the src_sem of one of the kernel's local copies
    in a kernel lowered for the TensorCore, where that argument is dropped rather than retyped."""
    if not refuses_local_src_sem(project, kernel):
        return False
    for copy in kernel.dma_copies:
        node = local_src_sem(project, copy)
        if isinstance(node, ast.Name):
            binding = copy.model.lookup(node.id, copy.model.scope_of(node), node.lineno)
            if binding is not None and binding.node is sem.node:
                return True
    return False
