"""Fix (PAL019): a global-memory scratch of a `plgpu.kernel` becomes one more output, which the launcher drops.

    def workspace(self):                                   def workspace(self):
        return plgpu.GMEM((self.rows, 128), jnp.float32)  ->   return jax.ShapeDtypeStruct((self.rows, 128), jnp.float32)

    plgpu.kernel(body, out_type=out,                       plgpu.kernel(body, out_type=(out, spec.workspace()),
                 scratch_types=[spec.workspace()], ...)(x)              ...)(x)[0]

A kernel's own global memory is its outputs: XLA allocates them. The body is unchanged: it takes its inputs,
its outputs, then its scratch, so the first scratch parameter is the new last output's. Offered for the first
element of a scratch list display only (a later one would move past the scratch before it). The type becomes a
`jax.ShapeDtypeStruct` of the same shape and dtype where it is built (a helper used by such scratch alone), else
at the launch; every launch found gives its callers what it gave before (`[0]`, `[:n]`).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.memory_spaces import GPU
from .kernel_edits import CannotFix, FixBuilder, without_keyword
from .own_memory_space import built_for_refusing_kernels_only, built_inside, respell_constructor
from .workspace_as_output import add_output, take_old_results


def fix(project, model, finding):
    placement, kernel = finding.facts.get("placement"), finding.facts.get("kernel")
    if placement is None or kernel is None or finding.facts.get("platform") != GPU or placement.kind != "scratch":
        return None
    entry = kernel.entry
    written = entry.kernel.kwarg("scratch_types")
    scratch = written[1] if written else None
    if entry.api != "plgpu.kernel" or not isinstance(scratch, (ast.List, ast.Tuple)) or not scratch.elts \
            or scratch.elts[0] is not placement.use or placement.model is not entry.model:
        raise CannotFix("the workspace is not the first element of a scratch list written at the launch")
    memtype = placement.memtype
    made = memtype.made_at
    if made is None or len(made[1].args) != 2 or made[1].keywords:
        raise CannotFix("the workspace's shape and dtype are not written where it is built")
    made_model, made_call = made
    builder = FixBuilder(project)
    _, imports = builder.file(entry.model)
    if built_inside(placement.use, made_call):
        shape, dtype = (entry.model.segment(a) for a in made_call.args)
        output = f"{imports.name('jax')}.ShapeDtypeStruct({shape}, {dtype})"
    elif built_for_refusing_kernels_only(project, made_model, made_call, GPU) and project.is_workspace_file(made_model.path):
        respell_constructor(builder, made_model, made_call, "jax", "ShapeDtypeStruct")
        output = entry.model.segment(placement.use)
    else:
        raise CannotFix("the workspace's type is built by code other kernels use")
    launches = add_output(project, builder, [entry], output)
    file, _ = builder.file(entry.model)
    call = file.find_ast(entry.model, entry.kernel.node, cst.Call)
    sequence = file.find_ast(entry.model, scratch, (cst.List, cst.Tuple))
    if call is None or sequence is None:
        raise CannotFix("the launch's scratch list was not found")
    if len(scratch.elts) == 1:
        file.rewrite(call, _without_scratch_keyword)
    else:
        file.rewrite(sequence, lambda updated: updated.with_changes(elements=list(updated.elements)[1:]))
    take_old_results(builder, launches)
    return builder.fix(f"pallas-lsp ({finding.code}): Make the {memtype.constructor} workspace one more output of the "
                       "kernel, which the callers drop", "safe", preferred=True)


def _without_scratch_keyword(updated: cst.Call) -> cst.Call:
    return without_keyword(updated, "scratch_types", "the scratch_types keyword")
