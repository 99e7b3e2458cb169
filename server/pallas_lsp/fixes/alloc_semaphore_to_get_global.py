"""Fix (PAL028): `plgpu.alloc_semaphore()` called in a Mosaic GPU kernel becomes the global semaphore it meant.

    carry_ready = plgpu.alloc_semaphore()        ->   carry_ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
    flags = plgpu.alloc_semaphore((2,))          ->   flags = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))

Both are zero when the kernel starts and shared by its grid (jax 0.12): the kernel signals and waits as before.
The shape is kept as written (positional or `shape=`). Verified as every fix: where `get_global` does not run
(an interpreted kernel, PAL002), it is not offered.
"""

from __future__ import annotations

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder


def fix(project, model, finding):
    call = finding.facts.get("call")
    if call is None or finding.path != model.path:
        return None
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "shape")]
    if len(arguments) > 1 or any(k.arg not in ("shape",) for k in call.keywords):
        raise CannotFix("plgpu.alloc_semaphore is given more than its shape")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    pl = imports.name("jax.experimental.pallas")
    plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
    kind = f"{plgpu}.SemaphoreType.REGULAR"
    if arguments:
        kind += f"({model.source_segment(arguments[0])})"
    target = file.find_ast(model, call, cst.BaseExpression)
    if target is None:
        raise CannotFix("the plgpu.alloc_semaphore call was not found")
    file.rewrite(target, lambda updated: cst.parse_expression(f"{pl}.get_global({kind})"))
    return builder.fix(f"pallas-lsp ({finding.code}): Use pl.get_global(plgpu.SemaphoreType.REGULAR), the kernel's "
                       "global semaphore", "safe", preferred=True)
