"""Fix (PAL024): an SMEM scratch buffer the kernel uses only as an array is allocated in VMEM.

    scratch_shapes=[pltpu.SMEM((1, cfg.channels), jnp.float32)]   ->   [pltpu.VMEM((1, cfg.channels), jnp.float32)]

Mosaic TPU reads and writes SMEM one element at a time ("Can only store scalars to SMEM"); VMEM holds the same
shape and dtype and is read and written as arrays, and a scratch buffer lives for the whole grid in either. Where
every use of the buffer in the body is an array access (`acc[...]`, `acc[0, :]`) or its `.shape` / `.dtype`, the
kernel computes the same. Only for a scratch entry written as `pltpu.SMEM(...)` in the launch's scratch list (at
the launch, in its grid spec, or the list a local name holds).
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from ..rules.pal024_smem_vector_access import not_scalar
from .dma_semaphore import written_sequences
from .grid_spec import grid_spec_call, scratch_argument
from .kernel_edits import CannotFix, FixBuilder


def fix(project, model, finding):
    kernel, param = finding.facts.get("kernel"), finding.facts.get("param")
    if kernel is None or param is None or finding.facts.get("model") is not model:
        return None
    body = kernel.entry.body
    for node in ast.walk(body.node):
        if not (isinstance(node, ast.Name) and node.id == param.node.arg):
            continue
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is None or binding.node is not param.node:
            continue
        parent = model.parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and not_scalar(parent.slice, len(param.shape) if param.shape is not None else None):
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in ("shape", "dtype"):
            continue
        raise CannotFix(f"{param.name} is also read as a scalar or handed on: which memory that use needs is not "
                        "known")
    match = re.fullmatch(r"scratch_shapes\[(\d+)\]", param.origin)
    entry = kernel.entry
    if match is None or not isinstance(entry.node, ast.Call):
        raise CannotFix("the buffer is not a scratch entry of the launch")
    found = entry.kernel.kwarg("scratch_shapes")
    written = found[1] if found else None
    if written is None:
        spec = grid_spec_call(project, entry)
        written = scratch_argument(project, entry.model, spec) if spec is not None else None
    types = []
    for where, sequence in written_sequences(project, entry.model, written):
        elements = sequence.elts
        index = int(match[1])
        if index >= len(elements) or any(isinstance(e, ast.Starred) for e in elements):
            types = []
            break
        element = elements[index]
        if isinstance(element, ast.Call) and isinstance(element.func, ast.Attribute) and element.func.attr == "SMEM":
            types.append((where, element.func))
    if not types:
        raise CannotFix("the buffer's pltpu.SMEM(...) is not written in the launch's scratch list")
    builder = FixBuilder(project)
    for where, attribute in types:
        file, _ = builder.file(where)
        target = file.find_ast(where, attribute, cst.Attribute)
        if target is None:
            raise CannotFix("the buffer's type was not found")
        file.rewrite(target, lambda updated: updated.with_changes(attr=cst.Name("VMEM")))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate {param.name} in VMEM (used as an array)", "safe",
                       preferred=True)
