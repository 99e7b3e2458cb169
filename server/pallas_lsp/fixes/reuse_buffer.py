"""Fix (PAL012): two scratch buffers of one type whose lives do not overlap become one.

    def scale(x_gmem, o_gmem, in_tile, out_tile, landed):        def scale(x_gmem, o_gmem, in_tile, landed):
      plgpu.copy_gmem_to_smem(x_gmem, in_tile, landed)              plgpu.copy_gmem_to_smem(x_gmem, in_tile, landed)
      plgpu.barrier_wait(landed)                                    plgpu.barrier_wait(landed)
      out_tile[...] = in_tile[...] * 1.5                  ->        in_tile[...] = in_tile[...] * 1.5
      plgpu.commit_smem()                                           plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(out_tile, o_gmem)                     plgpu.copy_smem_to_gmem(in_tile, o_gmem)
    scratch_types=[SMEM(s, t), SMEM(s, t), plgpu.Barrier(1)]      scratch_types=[SMEM(s, t), plgpu.Barrier(1)]

The kernel computes the same: every use of the second buffer comes after the last use of the first (where both
are in one statement, `second[...] = f(first[...])` loads the first whole before storing the second), and the last
use of the first is a load, not a copy still in flight. Only where each buffer is a positional scratch parameter of
the body, written in the launch's own `scratch_types` list with the same text, and used only in statements of the
body's own block as `buf[...]` or handed to `plgpu.copy_gmem_to_smem` / `plgpu.copy_smem_to_gmem` (nothing else
may hold it: a helper, a closure, a view). Verification then asks that the kernel fits.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.values import Api, MemType, Partial
from .kernel_edits import CannotFix, FixBuilder, _literal_held_for
from .semaphore_out_of_out_type import _without

_COPIES = ("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem")


def fix(project, model, finding):
    kernel = finding.facts.get("kernel")
    entry = finding.facts.get("entry")
    if kernel is None or entry is None or entry.api not in ("plgpu.kernel", "pl.kernel") or entry.model is not model:
        return None
    body = entry.body
    if body is None or body.model is not model or not isinstance(body.node, ast.FunctionDef) \
            or isinstance(entry.kernel.body, Partial) and entry.kernel.body.args:
        raise CannotFix("the body is not a function of this module launched as it is")
    if _named_elsewhere(project, model, body.node):
        raise CannotFix("the body is used elsewhere, which its parameters must still fit")
    found = entry.kernel.kwarg("scratch_types")
    if found is None or found[1] is None:
        raise CannotFix("the scratch is not written at the launch")
    written = found[1] if isinstance(found[1], (ast.List, ast.Tuple)) else _literal_held_for(model, found[1])
    if written is None or any(isinstance(e, ast.Starred) for e in written.elts):
        raise CannotFix("the scratch types are not a list written for this launch")
    params = body.node.args
    if params.vararg is not None or params.posonlyargs or len(params.args) < len(written.elts):
        raise CannotFix("the body does not take each scratch buffer as a parameter")
    scratch_params = params.args[len(params.args) - len(written.elts):]
    pair = _reusable_pair(project, model, body.node, written.elts, scratch_params)
    if pair is None:
        raise CannotFix("no two scratch buffers of one type have lives that do not overlap")
    kept, dropped = pair
    keep_name, drop_name = scratch_params[kept].arg, scratch_params[dropped].arg

    builder = FixBuilder(project)
    file, _ = builder.file(model)
    for node in _uses(body.node, drop_name):
        target = file.find_ast(model, node, cst.Name)
        if target is None:
            raise CannotFix("a use of the buffer was not found")
        file.rewrite(target, lambda updated: updated.with_changes(value=keep_name))
    function = file.function(body.node)
    sequence = file.find_ast(model, written, (cst.List, cst.Tuple))
    if function is None or sequence is None:
        raise CannotFix("the body or its scratch list was not found")
    position = params.args.index(scratch_params[dropped])
    file.rewrite(function, lambda updated: updated.with_changes(params=updated.params.with_changes(
        params=_without(list(updated.params.params), position))))
    file.rewrite(sequence, lambda updated: updated.with_changes(elements=_without(list(updated.elements), dropped)))
    return builder.fix(f"pallas-lsp ({finding.code}): Reuse {keep_name} for {drop_name} (one scratch buffer: "
                       f"{drop_name} is used only after {keep_name}'s last read)", "safe")


def _reusable_pair(project, model, body: ast.FunctionDef, types: list[ast.expr],
                   params: list[ast.arg]) -> tuple[int, int] | None:
    """(the buffer kept, the one it replaces), scratch positions, for the first two of one type whose uses do not
    overlap; None where there are none."""
    texts = [ast.dump(t) for t in types]
    for first in range(len(types)):
        memtype = as_memtype(project.evaluator.value(model, types[first]))
        if not (isinstance(memtype, MemType) and memtype.space == "smem"):
            continue
        for second in range(first + 1, len(types)):
            if texts[second] != texts[first]:
                continue
            spans = [_life(project, model, body, params[i].arg) for i in (first, second)]
            if None in spans:
                continue
            (a_start, a_end, a_ends_in_load), (b_start, b_end, _) = spans
            if a_end < b_start or a_end == b_start and a_ends_in_load and _loads_then_stores(
                    body.body[a_end], params[first].arg, params[second].arg):
                return first, second
            if b_end < a_start or b_end == a_start and spans[1][2] and _loads_then_stores(
                    body.body[b_end], params[second].arg, params[first].arg):
                return second, first
    return None


def _life(project, model, body: ast.FunctionDef, name: str) -> tuple[int, int, bool] | None:
    """(first, last) index of the body's statements that use `name`, and whether the last use is a load only;
    None where a use is not `name[...]` or a copy's argument in a statement of the body's own block."""
    statements = {}
    for index, statement in enumerate(body.body):
        for node in ast.walk(statement):
            statements[id(node)] = index
    uses = _uses(body, name)
    if not uses:
        return None
    found = []  # (statement index, handed to a copy)
    for use in uses:
        index = statements.get(id(use))
        if index is None or isinstance(body.body[index], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                or _inside_function(model, use, body):
            return None
        parent = model.parents.get(use)
        if isinstance(parent, ast.Subscript) and parent.value is use:
            found.append((index, False))
        elif isinstance(parent, ast.Call) and use in parent.args and _is_copy(project, model, parent):
            found.append((index, True))
        else:
            return None
    first, last = min(i for i, _ in found), max(i for i, _ in found)
    return first, last, not any(copied for i, copied in found if i == last)


def _named_elsewhere(project, model, function: ast.FunctionDef) -> bool:
    """Is the body named more than once where it is visible (another launch, a call), or in another module?"""
    scope = model.scope_of(function)
    names = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == function.name]
    if len(names) != 1:
        return True
    return isinstance(scope, ast.Module) and any(function.name in other.text for other in project.importers(model))


def _inside_function(model, node: ast.AST, body: ast.FunctionDef) -> bool:
    return model.enclosing_function(node) is not body


def _is_copy(project, model, call: ast.Call) -> bool:
    callee = project.evaluator.value(model, call.func)
    return isinstance(callee, Api) and callee.name in _COPIES


def _uses(body: ast.FunctionDef, name: str) -> list[ast.Name]:
    return [node for statement in body.body for node in ast.walk(statement)
            if isinstance(node, ast.Name) and node.id == name]


def _loads_then_stores(statement: ast.stmt, loaded: str, stored: str) -> bool:
    """`stored[...] = f(loaded[...])`: the statement loads `loaded` whole before it stores `stored`."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == stored):
        return False
    if any(isinstance(n, ast.Name) and n.id == loaded for n in ast.walk(target)):
        return False
    return not any(isinstance(n, ast.Name) and n.id == stored for n in ast.walk(statement.value))
