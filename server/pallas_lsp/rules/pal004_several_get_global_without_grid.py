"""PAL004 several-get-global-without-grid: a Mosaic GPU kernel with no grid and no cluster that reserves
more global semaphores than JAX's resource estimator made room for.

A JAX bug (0.11.2 and 0.12): with no grid and no cluster axes, semaphores are block-local; the estimator
keeps the MAX of the sizes of the equations that reserve them, while lowering adds every `get_global`
up and never releases it. The second `get_global` (or a `run_scoped` semaphore after one) then fails:
`IndexError: Slice DynamicSlice(base=1, length=1) along axis 0 is out of bounds for shape [1]`.
A thread axis alone does not help; a `scratch_types` semaphore is allocated elsewhere and does not count.
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import MOSAIC_GPU, first_overflow, flatten_allocations
from ..analysis.kernels import get_global_calls
from ..analysis.values import int_text

CODE = "PAL004"
NAME = "several-get-global-without-grid"
SEVERITY = "error"
SUMMARY = "Two or more global semaphores in a Mosaic GPU kernel without grid or cluster axes (a JAX bug)."


def check(ctx):
    rule = sys.modules[__name__]
    if not (get_global_calls(ctx.project, ctx.model) or ctx.may_run_scoped_semaphore()):
        return  # nothing here reserves a semaphore: no kernel model needed
    reported: set[int] = set()
    for kernel in ctx.kernels():
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            if kernel.backend != MOSAIC_GPU or kernel.grid_axes is None or kernel.cluster_axes is None:
                continue
            block_local = kernel.grid_axes == () and kernel.cluster_axes == ()
            overflow = first_overflow(kernel.allocations, block_local)
            if overflow is None:
                continue
            allocation, used, limit = overflow
            if allocation.model is not ctx.model or id(allocation.node) in reported:
                continue
            reported.add(id(allocation.node))
            base = used - allocation.size
            what = "get_global" if allocation.kind == "get_global" else "run_scoped semaphore"
            short = f"IndexError: ... DynamicSlice(base={int_text(base)}, length={int_text(allocation.size)}) ... shape [{int_text(limit)}]"
            repeated = any(a.repeat and a.kind == "get_global" for a in flatten_allocations(kernel.allocations))
            if not block_local:
                message = (f'JAX: "{short}"; move get_global out of the cond\'s branch. Call it before the lax.cond / '
                           f"lax.switch and use the ref in the branch. Mosaic GPU lowers the first branch of a cond (lax.cond's "
                           "false one, lax.switch's first) twice and keeps the semaphores a get_global there reserved "
                           f"(a JAX bug): this {what} reserves semaphore {int_text(used)}, where the resource estimator, counting "
                           f"each get_global once, made room for {int_text(limit)}.")
            else:
                twice = (" A get_global in the first branch of a cond (lax.cond's false one, lax.switch's first) reserves "
                         "twice: Mosaic GPU lowers that branch twice.") if repeated else ""
                scratch = f"a {kernel.scratch_parameter} semaphore" if kernel.scratch_parameter else "a scratch semaphore"
                message = (f'JAX: "{short}"; use one REGULAR((n,)) and .at[i], or grid=(1,). '
                           f"This {what} reserves semaphore {int_text(used)} of a kernel with no grid and no cluster, where JAX's "
                           f"resource estimator made room for {int_text(limit)} (a JAX bug: it takes the largest, lowering adds them up); "
                           f"a thread axis does not help, {scratch} does not count.{twice}")
            others = tuple(ctx.related(a.model, a.node, f"reserves {int_text(a.size)} semaphore{'s' if a.size > 1 else ''} here")
                           for a in flatten_allocations(kernel.allocations) if a.node is not allocation.node and not a.repeat)
            yield ctx.finding(rule, allocation.node, message, (*others, ctx.entry_related(kernel)),
                              facts={"kernel": kernel, "allocation": allocation, "entry": kernel.entry,
                                     "backend": kernel.backend,
                                     "get_globals": [a.node for a in flatten_allocations(kernel.allocations) if a.kind == "get_global" and not a.repeat]})
