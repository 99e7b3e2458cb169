"""Fix (PAL018): the other backend's memory-space type becomes this backend's own, where the type is made.

    def scratch_types(self):                                   def scratch_types(self):
        return [pltpu.VMEM((self.block_q, 128), jnp.float32)] ->   return [plgpu.SMEM((self.block_q, 128), jnp.float32)]

`pltpu.VMEM` / `pltpu.SMEM` in a Mosaic GPU kernel become `plgpu.SMEM` (its on-chip buffer); `plgpu.SMEM` / `TMEM`
in a TPU kernel become `pltpu.VMEM`. Shape and dtype are kept, so the kernel computes the same; JAX accepts the
result (checked for every pair in tests/fixes). The constructor is edited where it is called (a helper, a config
method, another module) only where every kernel of the workspace that allocates that call's type is one of this
backend's that refuses it; where a kernel of the other backend allocates it too, the use is edited instead
(`pltpu.VMEM(STAGING.shape, STAGING.dtype)`), when the use is a name; else no fix.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import kernel_models
from ..analysis.memory_spaces import OWN_TYPE, TPU, TPU_INTERPRETER, placements, platform, refusal
from .kernel_edits import CannotFix, FixBuilder, replace_expression

_MODULES = {"plgpu": "jax.experimental.pallas.mosaic_gpu", "pltpu": "jax.experimental.pallas.tpu"}


def fix(project, model, finding):
    placement, where = finding.facts.get("placement"), finding.facts.get("platform")
    if placement is None or where not in OWN_TYPE:
        return None
    memtype = placement.memtype
    own = OWN_TYPE[where].get(memtype.constructor)
    if own is None:
        raise CannotFix(f"{memtype.constructor} has no counterpart on this backend")
    if memtype.made_at is None:
        raise CannotFix("where the type is built is not known")
    made_model, made_call = memtype.made_at
    if len(made_call.args) > 2 or any(k.arg not in ("shape", "dtype") for k in made_call.keywords) \
            or not project.is_workspace_file(made_model.path):
        raise CannotFix("the type is built with more than a shape and a dtype, or outside the workspace")
    builder = FixBuilder(project)
    prefix, attr = own.split(".")
    if built_inside(placement.use, made_call) or built_for_refusing_kernels_only(project, made_model, made_call, where):
        respell_constructor(builder, made_model, made_call, _MODULES[prefix], attr)
        written = "where it is built"
    elif isinstance(placement.use, (ast.Name, ast.Attribute)):
        _, imports = builder.file(placement.model)
        used = placement.model.segment(placement.use)
        replace_expression(builder, placement.model, placement.use,
                           f"{imports.name(_MODULES[prefix])}.{attr}({used}.shape, {used}.dtype)")
        written = "here (the other backend's kernels use it too)"
    else:
        raise CannotFix("the type is shared with the other backend's kernels, and the use is no name to rewrite")
    return builder.fix(f"pallas-lsp ({finding.code}): Use {own} in place of {memtype.constructor}, {written}",
                       "safe", preferred=True)


def respell_constructor(builder: FixBuilder, made_model, made_call: ast.Call, module: str, attr: str) -> None:
    """`pltpu.VMEM(shape, dtype)` -> `plgpu.SMEM(shape, dtype)` where it is built: the arguments stay as written."""
    file, imports = builder.file(made_model)
    target = file.find_ast(made_model, made_call, cst.Call)
    if target is None:
        raise CannotFix("the type's constructor was not found")
    spelled = cst.parse_expression(f"{imports.name(module)}.{attr}")
    file.rewrite(target, lambda updated: updated.with_changes(func=spelled))


def built_inside(node: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(node))


def built_for_refusing_kernels_only(project, made_model, made_call: ast.Call, where: str) -> bool:
    """Every kernel of the workspace allocating the type `made_call` builds (one of the module that builds it,
    or of a module importing it) is one whose lowering refuses it, on this backend."""
    same = {where} if where not in (TPU, TPU_INTERPRETER) else {TPU, TPU_INTERPRETER}
    kernels = {id(k): k for m in [made_model, *project.importers(made_model)] for k in kernel_models(project, m)}
    found = False
    for kernel in kernels.values():
        place = platform(kernel)
        for placement in placements(project, kernel, place or ""):
            made = placement.memtype.made_at
            if made is None or made[1] is not made_call:
                continue
            if place not in same or refusal(place, placement.memtype) is None:
                return False
            found = True
    return found
