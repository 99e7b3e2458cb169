"""Fix (PAL011): a `collective_id` among the TPU interpreter's own semaphore ids becomes one below them.

    compiler_params=pltpu.CompilerParams(collective_id=2000)   ->   ...CompilerParams(collective_id=0)

The TPU interpreter numbers the semaphores it allocates from 2000 up and gives `get_barrier_semaphore()`
the fixed id `collective_id` (jax/_src/pallas/mosaic/interpret/shared_memory.py): an id in that range fails
("Semaphore 2000 occurs as both fixed-id and internal."), one below 2000 never meets an interpreter id,
whatever the kernel allocates. The id only picks the kernel's barrier semaphore, and JAX does not promise
two kernels of one `collective_id` the same one (`pltpu.CompilerParams`: "using the same collective_id does
not guarantee that the same barrier semaphore will be allocated between kernels"); compiled for a TPU any id
does. So the rewrite keeps the kernel's meaning, on the interpreter and compiled. The new id is the smallest
one no `collective_id=` of the module names, so that no two kernels written apart come to share one. Only for
an int literal written in the `pltpu.CompilerParams(...)` call (a name or a config attribute is the author's
to change, and may be shared).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.call_of import callee
from ..rules.pal011_barrier_semaphore_id_collision import FIRST_INTERNAL_ID
from .kernel_edits import CannotFix, FixBuilder


def _literal_ids(model) -> set[int]:
    """Every int literal written as `collective_id=` in the module."""
    return {keyword.value.value for node in ast.walk(model.tree) if isinstance(node, ast.Call)
            for keyword in node.keywords
            if keyword.arg == "collective_id" and isinstance(keyword.value, ast.Constant)
            and type(keyword.value.value) is int}


def fix(project, model, finding):
    kernel = finding.facts.get("kernel")
    if kernel is None or finding.facts.get("model") is not model:
        return None
    found = kernel.entry.kernel.kwarg("compiler_params")
    name, call, where = callee(project, kernel.entry.model, found[1] if found else None)
    if name != "pltpu.CompilerParams" or call is None:
        raise CannotFix("the compiler parameters are not a pltpu.CompilerParams(...) call found from the launch")
    node = next((k.value for k in call.keywords if k.arg == "collective_id"), None)
    if not (isinstance(node, ast.Constant) and type(node.value) is int):
        raise CannotFix("the collective_id is not a number written in the pltpu.CompilerParams(...) call: "
                        "where else it is used is not known")
    used = _literal_ids(where)
    new_id = next(i for i in range(FIRST_INTERNAL_ID) if i not in used)
    builder = FixBuilder(project)
    file, _ = builder.file(where)
    target = file.find_ast(where, node, cst.Integer)
    if target is None:
        raise CannotFix("the collective_id's number was not found")
    file.rewrite(target, lambda updated: updated.with_changes(value=str(new_id)))
    return builder.fix(f"pallas-lsp ({finding.code}): Use collective_id={new_id}, below the TPU interpreter's own "
                       f"semaphore ids ({FIRST_INTERNAL_ID} up)", "safe", preferred=True)
