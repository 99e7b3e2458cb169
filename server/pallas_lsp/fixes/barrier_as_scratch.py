"""Fix (PAL006): a global semaphore used only as a barrier becomes an SMEM `plgpu.Barrier()` scratch.

Barrier operations (`plgpu.barrier_arrive`, `plgpu.barrier_wait`, a copy's `barrier=`) act within
a block, which is what the kernel asked for by calling them; a `plgpu.Barrier()` in
`scratch_types` is that block's barrier (one arrival: a TMA copy's completion or one
`barrier_arrive` of a kernel without a thread axis). Unsafe: the arrival count is a choice, so the
fix is applied only with `--unsafe-fixes`. Not offered where the semaphore is also signalled or
waited on as a semaphore, where the kernel has a thread axis (several arrivals), for a shaped
semaphore, or where the barrier is waited on but nothing arrives on it (the fixed kernel would
wait forever).
"""

from __future__ import annotations

import ast

from ..analysis.values import Api
from .allocate_as_scratch import move_to_scratch
from .kernel_edits import CannotFix, FixBuilder
from .sites import interpreted_anywhere, locate


def _operation(project, use) -> str:
    """"wait", "arrive" (barrier_arrive, or a copy completing on it) for a barrier use."""
    callee = project.evaluator.value(use.model, use.node.func) if isinstance(use.node, ast.Call) else None
    return "wait" if isinstance(callee, Api) and callee.name == "plgpu.barrier_wait" else "arrive"


def fix(project, model, finding):
    kernel, call = finding.facts.get("kernel"), finding.facts.get("get_global")
    if kernel is None or call is None or finding.facts.get("model") is not model:
        return None
    site = next((s for s in kernel.get_globals if s.call is call), None)
    memtype = site.memtype if site is not None else None
    if memtype is None or memtype.shape != () or not site.uses:
        return None
    if any(use.kind != "barrier" or use.indices != 0 for use in site.uses):
        raise CannotFix("the semaphore is also used as a semaphore")
    operations = {_operation(project, use) for use in site.uses}
    if "wait" in operations and "arrive" not in operations:
        raise CannotFix("nothing arrives on the barrier it waits on")
    if kernel.thread_axes != ():
        raise CannotFix("with a thread axis the number of arrivals is not known")
    use, where, entries = locate(project, model, call) or (None, None, [])
    if not entries or any(e.api != "plgpu.kernel" or e.model is not model for e in entries):
        raise CannotFix("only a plgpu.kernel launched in this module takes scratch_types here")
    if interpreted_anywhere(project, model, use.function):
        raise CannotFix("the kernel runs in interpret mode")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    note = move_to_scratch(builder, model, use, where, entries,
                           lambda: f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.Barrier()",
                           fallback="barrier_ref")
    through = (f", through {where.helper.name}" if where.helper is not None else "") + note
    return builder.fix(f"pallas-lsp ({finding.code}): Use an SMEM barrier, plgpu.Barrier() in scratch_types{through}",
                       "unsafe")
