"""PAL010 dma-semaphore-not-ref: a TPU copy given a semaphore *value* (or a number) instead of a ref.

A copy's send and receive semaphores (`pltpu.make_async_copy(src, dst, sem, src_sem=...)`,
`pltpu.make_async_remote_copy(src, dst, send_sem, recv_sem, ...)`, `pltpu.async_copy`, ...) are refs
the DMA signals: a scratch `pltpu.SemaphoreType.DMA`, or one of an array through `sems.at[i]`.
`sems[i]` reads a value out of the ref, and a number is no ref at all; JAX fails when the copy starts
(dma_start's abstract evaluation, jax/_src/pallas/mosaic/primitives.py) with
`ValueError: DMA source semaphore must be a Ref.` (the send semaphore, `src_sem`) or
`ValueError: DMA destination semaphore must be a Ref.` (the receive semaphore, `sem`). A copy only waited
on, started by another kernel (the split async copy), fails at the wait (dma_wait's abstract evaluation):
`ValueError: Expected the destination semaphore to be a reference`. A local copy's send semaphore in a kernel
lowered for the TensorCore is dropped instead of repaired: Mosaic TPU takes none there (PAL017).
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.local_copies import local_src_sem, refuses_local_src_sem
from ..analysis.result_uses import COPY_APIS

CODE = "PAL010"
NAME = "dma-semaphore-not-ref"
SEVERITY = "error"
SUMMARY = "A TPU copy's send or receive semaphore is a value read out of a ref (sems[0]) or a number, not a ref."

_SIDE = {"dma_src": ("source", "send"), "dma_dst": ("destination", "receive")}


def _scratch_keyword(kernel) -> str:
    """The launch's own keyword (TPU launches lower their scratch); scratch_types for one not known."""
    found = SCRATCH_KEYWORDS.get(kernel.api)
    return found.keyword if found is not None else "scratch_types"


def message(kernel, model, role: str, node: ast.expr, not_ref: tuple[str, ast.expr], waited: bool = False,
            dropped: bool = False) -> str:
    """`dropped`: the send semaphore of a local copy the TensorCore lowering takes none for (PAL017)."""
    side, verb = _SIDE[role]
    what, expr = not_ref
    text = model.segment(expr, 40)
    held = "" if expr is node else f" ({model.segment(node, 20)} holds it)"
    quote = (f'JAX: "ValueError: Expected the {side} semaphore to be a reference"' if waited
             else f'JAX: "ValueError: DMA {side} semaphore must be a Ref."')
    if dropped:
        what_it_is = "is a number" if what == "number" else "reads the semaphore's value"
        return (f"{quote}; drop src_sem. {text}{held} {what_it_is}, and a local copy takes no send semaphore on the "
                "TensorCore (a ref there fails as the copy is lowered: PAL017); its .wait() waits for the write, "
                "which ends after the read.")
    if what == "loaded" and isinstance(expr, ast.Subscript) and selected_value(model, expr):
        return selected_message(model, expr, held)
    if what == "loaded" and isinstance(expr, ast.Subscript):
        return (f"{quote}; pass {ref_meant(model, expr)}, not {text}. {text}{held} reads the "
                f"semaphore's value; the copy's {verb} semaphore must be a semaphore ref or an .at[] view of one.")
    return (f"{quote}; pass a ref: a pltpu.SemaphoreType.DMA in {_scratch_keyword(kernel)}. "
            f"{text}{held} is a number; the copy's {verb} semaphore must be a semaphore ref the DMA can signal.")


def selected_value(model, expr: ast.expr) -> bool:
    """`expr` is one of what `pl.select_ref(i, *refs)` chooses between (the kernel model followed it there)."""
    call = model.parents.get(expr)
    return isinstance(call, ast.Call) and expr in call.args[1:] and \
        getattr(call.func, "attr", getattr(call.func, "id", None)) == "select_ref"


def selected_message(model, read: ast.Subscript, held: str) -> str:
    """A value read out of a semaphore ref among the refs of `pl.select_ref`: JAX raises a NotImplementedError
    without a message where the selection is used (it is a lazy transform of the refs; checked with jax 0.12, TPU
    lowering)."""
    text = model.segment(read, 40)
    return (f'JAX: "NotImplementedError" (pl.select_ref of a value); pass {ref_meant(model, read)}, not {text}. '
            f"{text}{held} reads the semaphore's value; pl.select_ref chooses between semaphore refs or .at[] "
            "views of them.")


def ref_meant(model, read: ast.Subscript) -> str:
    """What a read out of a semaphore ref stands for where a ref was meant: "the ref sem" for `sem[...]`, "the
    view sems.at[0]" for `sems[0]`."""
    whole = isinstance(read.slice, ast.Constant) and read.slice.value is Ellipsis
    base = model.segment(read.value, 40)
    return f"the ref {base}" if whole else f"the view {base}.at[{model.segment(read.slice, 30)}]"


def check(ctx):
    rule = sys.modules[__name__]
    if "async" not in ctx.model.text or not ctx.calls_any(COPY_APIS):
        return  # every finding is a copy of this module's (`copy.model is ctx.model`)
    reported: set[int] = set()
    for kernel in ctx.kernels_here_and_in_importers():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            for copy in kernel.dma_copies:
                if copy.model is not ctx.model:
                    continue
                # JAX checks the receive (destination) semaphore first, then the send (source) one.
                for role, node, not_ref in sorted(copy.semaphores, key=lambda s: s[0] != "dma_dst"):
                    if not_ref is None:
                        continue
                    # A copy only waited on (started by another kernel) has its receive semaphore checked at the wait.
                    waited = not copy.starts and role == "dma_dst"
                    for start in copy.starts or (copy.waits[:1] if waited else ()):
                        if id(start) in reported:
                            continue
                        reported.add(id(start))
                        related = (ctx.related(copy.model, node, f"the {_SIDE[role][1]} semaphore argument"),)
                        dropped = role == "dma_src" and refuses_local_src_sem(ctx.project, kernel) \
                            and local_src_sem(ctx.project, copy) is node
                        yield ctx.finding(rule, start, message(kernel, copy.model, role, node, not_ref, waited, dropped),
                                          related,
                                          facts={"kernel": kernel, "copy": copy.call, "model": copy.model,
                                                 "entry": kernel.entry, "semaphore": node, "not_ref": not_ref})
