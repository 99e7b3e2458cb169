"""Fix (PAL025): a Mosaic GPU kernel interpreted with `interpret=True` gets JAX's GPU interpreter instead.

    plgpu.kernel(body, ..., interpret=interpret)   ->   plgpu.kernel(body, ..., interpret=plgpu.InterpretGPUParams() if interpret else False)
    plgpu.kernel(body, ..., interpret=True)        ->   plgpu.kernel(body, ..., interpret=plgpu.InterpretGPUParams())

The switch keeps its meaning (interpreted where it was true, compiled where it was false): only which interpreter
runs the kernel changes, to the one that has Mosaic GPU's warp specialization, TMA copies and barriers. A switch
whose value the fix reads twice is written once where it is a name or an attribute; otherwise refused (a call
would run twice).
"""

from __future__ import annotations

import ast

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder


def fix(project, model, finding):
    kernel, switch = finding.facts.get("kernel"), finding.facts.get("switch")
    if kernel is None or not isinstance(switch, ast.keyword) or kernel.entry.model is not model:
        return None
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    params = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.InterpretGPUParams()"
    if isinstance(switch.value, ast.Constant) and switch.value.value is True:
        written = params
    elif isinstance(switch.value, (ast.Name, ast.Attribute)):
        written = f"{params} if {model.source_segment(switch.value)} else False"
    else:
        raise CannotFix("the interpret switch is an expression the rewrite would have to read twice")
    target = file.find_ast(model, switch.value, cst.BaseExpression)
    if target is None:
        raise CannotFix("the interpret= value was not found")
    file.rewrite(target, lambda updated: cst.parse_expression(written))
    return builder.fix(f"pallas-lsp ({finding.code}): Interpret with plgpu.InterpretGPUParams() (JAX's GPU "
                       "interpreter)", "safe", preferred=True)
