"""Fix (PAL029): a list of one semaphore type as a scratch entry becomes one shaped semaphore, the array the body
indexes.

    [pltpu.SemaphoreType.DMA] * self.slots      ->   pltpu.SemaphoreType.DMA((self.slots,))
    (plgpu.SemaphoreType.REGULAR,) * 2          ->   plgpu.SemaphoreType.REGULAR((2,))
    [pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA]   ->   pltpu.SemaphoreType.DMA((2,))

Written where the entry is written (the launch's list, or the list a helper or method returns), with the count as
written, so it holds for every configuration. Only where the body reads the parameter as `sems.at[i]` alone: a
constant index (`sems[0]`) of a list is a ref, of an array a read of the semaphore's value.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..rules.pal029_semaphore_list_scratch import other_uses, written_entry
from .kernel_edits import CannotFix, FixBuilder
from .type_definition import _used_once


def fix(project, model, finding):
    kernel, param = finding.facts.get("kernel"), finding.facts.get("param")
    if kernel is None or param is None:
        return None
    entry = kernel.entry
    body = entry.body
    if other_uses(body.model, body.node, param.name):
        raise CannotFix(f"the body reads {param.name} otherwise than {param.name}.at[i] (a list's item is a ref, "
                        "an array's a semaphore's value)")
    params = [p.name for p in _scratch_params(project, entry)]
    written = written_entry(project, entry, SCRATCH_KEYWORDS[entry.api].keyword, params.index(param.name))
    if written is None:
        raise CannotFix("where the scratch entry is written was not found")
    where, expr, names = written
    if any(not _used_once(project, where, name) for name in names):
        raise CannotFix(f"{names[-1]} is used elsewhere too")
    text = _array(where, expr)
    builder = FixBuilder(project)
    file, _ = builder.file(where)
    target = file.find_ast(where, expr, cst.BaseExpression)
    if target is None:
        raise CannotFix("the scratch entry was not found")
    file.rewrite(target, lambda updated: cst.parse_expression(text))
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for one semaphore array ({text})", "safe", preferred=True)


def _scratch_params(project, entry):
    from ..analysis.kernel_args import kernel_parameters

    return [p for p in kernel_parameters(project, entry) if p.role == "scratch"]


def _array(model, expr: ast.expr) -> str:
    """`T((n,))` for `[T] * n`, `n * [T]`, `(T,) * n` and a display of one type written n times."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for seq, count in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(seq, (ast.List, ast.Tuple)) and len(seq.elts) == 1:
                return f"{model.source_segment(seq.elts[0])}(({model.source_segment(count)},))"
    if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts:
        written = {model.source_segment(e) for e in expr.elts}
        if len(written) == 1:
            return f"{written.pop()}(({len(expr.elts)},))"
    raise CannotFix("the list of semaphores is written in a form the array's count cannot be read from")
