"""Fix (PAL007): `pl.run_scoped(f, buffers..., collective_axes=<grid axis>)` allocates per block.

Nothing `pl.run_scoped` allocates is shared across blocks (jax 0.12: "Only thread-collective allocations are
supported in run_scoped"): a tile or barrier asked for collective over a grid or cluster axis is one per block
however it is written, and dropping `collective_axes` says so; each block then stages its own data through
its own buffer, as the code that uses them already does. Only for a kernel without warpgroups (with them,
sharing the buffer among them, `collective_axes=<thread axis>`, or not is a choice), and only for buffers and
barriers: a semaphore shared across blocks is `pl.get_global`'s (run_scoped_to_get_global).
"""

from __future__ import annotations

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder, without_argument


def fix(project, model, finding):
    facts = finding.facts
    kernel, call = facts.get("kernel"), facts.get("run_scoped")
    if not facts.get("local") or kernel is None or call is None or facts.get("model") is not model:
        return None
    if kernel.thread_axes != ():
        raise CannotFix("the kernel has warpgroups: whether they share the allocation is a choice")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None:
        raise CannotFix("the run_scoped call was not found")

    def drop(updated: cst.Call) -> cst.Call:
        return without_argument(updated, next(i for i, a in enumerate(updated.args)
                                              if a.keyword is not None and a.keyword.value == "collective_axes"))

    if not any(a.keyword is not None and a.keyword.value == "collective_axes" for a in target.args):
        raise CannotFix("collective_axes is not written in the call")
    file.rewrite(target, drop)
    return builder.fix(f"pallas-lsp ({finding.code}): Drop collective_axes (each block allocates its own)",
                       "safe", preferred=True)
