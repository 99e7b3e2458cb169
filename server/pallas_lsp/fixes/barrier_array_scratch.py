"""Fix (PAL001): a list of TMA barriers asked of get_global one by one becomes one barrier array in scratch.

    def _tma_barriers(cfg):                                              (the helper goes)
        return [pl.get_global(plgpu.Barrier(num_arrivals=1)) for _ in range(cfg.num_stages)]

    def kernel(w_gmem, out_gmem, w_smem, *, cfg):              ->    def kernel(w_gmem, out_gmem, w_smem, barriers, *, cfg):
        barriers = _tma_barriers(cfg)
        plgpu.copy_gmem_to_smem(..., barriers[s])                         plgpu.copy_gmem_to_smem(..., barriers.at[s])

    plgpu.kernel(..., scratch_types=[...])                     ->    scratch_types=[..., plgpu.Barrier(num_arrivals=1,
                                                                                                     num_barriers=cfg.num_stages)]

`plgpu.Barrier(num_barriers=n)` is n barriers, each as one `plgpu.Barrier()` is, and `barriers.at[s]` is barrier
`s` (what jax's own pipelined kernels write). The list is one buffer per item: one scratch parameter in place of
the list keeps them apart. Only for `[pl.get_global(plgpu.Barrier(...)) for _ in range(n)]` (the item not reading
the loop variable, the type giving no `num_barriers`) assigned to a name in the launched body, or returned by a
helper the body calls once for it; every read of the name an index (`barriers[s]`), and the count and the type
written the same at every launch.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import MemType
from .allocate_as_scratch import _before_keyword_bound
from .cst_locate import expression
from .kernel_edits import (CannotFix, FixBuilder, add_parameter, call_with_keyword, check_parameters,
                           edit_sequence_keyword)
from .scratch_comprehension import comprehension_around
from .sites import single_body_launches
from .type_in_scope import type_at_launches


def _count(model, comprehension: ast.ListComp) -> ast.expr | None:
    """`n` of `for _ in range(n)` (the builtin range), where the item does not read the loop variable."""
    clause = comprehension.generators[0]
    iterable = clause.iter
    if len(comprehension.generators) != 1 or clause.ifs or clause.is_async or not isinstance(clause.target, ast.Name):
        return None
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
            and len(iterable.args) == 1 and not iterable.keywords
            and model.lookup("range", model.scope_of(iterable), iterable.lineno) is None):
        return None
    if any(isinstance(n, ast.Name) and n.id == clause.target.id for n in ast.walk(comprehension.elt)):
        return None
    return iterable.args[0]


def _holder(model, comprehension: ast.ListComp):
    """(the statement `name = ...` to remove, name, body function, the helper to remove or None)."""
    statement = model.parents.get(comprehension)
    helper = None
    if isinstance(statement, ast.Return):  # `return [...]`, the only statement of a helper called once
        helper = model.enclosing_function(comprehension)
        calls = model.calls_named(helper.name) if isinstance(helper, ast.FunctionDef) else []
        mentions = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == getattr(helper, "name", "")]
        if not isinstance(helper, ast.FunctionDef) or helper.body != [statement] or len(calls) != 1 \
                or len(mentions) != 1 or helper.decorator_list:
            raise CannotFix("the barriers come from a helper that is not called once, or does more than return them")
        statement = model.parents.get(calls[0])
        if not (isinstance(statement, ast.Assign) and statement.value is calls[0]):
            raise CannotFix("the helper's list is not assigned to a name")
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        raise CannotFix("the list of barriers is not assigned to a name")
    function = model.enclosing_function(statement)
    if not isinstance(function, ast.FunctionDef) or statement not in function.body:
        raise CannotFix("the list of barriers is not assigned in the kernel body itself")
    return statement, statement.targets[0].id, function, helper


def _indexed_reads(model, function: ast.FunctionDef, statement: ast.Assign, name: str) -> list[ast.Subscript]:
    """Every read of the list: `name[i]`, none of it other (a length, a loop, the list handed on whole)."""
    binding = model.lookup(name, model.scope_of(statement), statement.lineno + 1)
    if len(model.scopes[function].bindings.get(name, [])) != 1:
        raise CannotFix(f"{name} is bound more than once in {function.name}")
    reads = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == name) or node is statement.targets[0]:
            continue
        if model.lookup(name, model.scope_of(node), node.lineno) is not binding:
            continue
        parent = model.parents.get(node)
        if not (isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Subscript) and parent.value is node
                and isinstance(parent.ctx, ast.Load) and not isinstance(parent.slice, ast.Slice)):
            raise CannotFix(f"{name} is used other than indexed one barrier at a time")
        reads.append(parent)
    return reads


def fix(project, model, call, value, code: str):
    comprehension = comprehension_around(model, call)
    if code != "PAL001" or not isinstance(comprehension, ast.ListComp) or comprehension.elt is not call \
            or not isinstance(value, MemType) or value.constructor != "plgpu.Barrier" or value.shape != ():
        return None
    count = _count(model, comprehension)
    made = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if count is None or not isinstance(made, ast.Call) or made.args \
            or any(k.arg in (None, "num_barriers") for k in made.keywords):
        raise CannotFix("not a list of one plgpu.Barrier(...) per item of range(n)")
    statement, name, function, helper = _holder(model, comprehension)
    check_parameters(function)
    reads = _indexed_reads(model, function, statement, name)
    entries = single_body_launches(project, model, function)
    if not entries or any(e.api != "plgpu.kernel" or e.model is not model or not isinstance(e.node, ast.Call)
                          for e in entries):
        raise CannotFix("the body is not launched by plgpu.kernel calls of this module")
    if any(e.interpret or e.maybe_interpret for e in entries):
        raise CannotFix("the kernel may run interpreted, and interpret=True runs no barrier (jax 0.12: "
                        "'NotImplementedError: barrier')")
    scratch = [e.kernel.kwarg("scratch_types") for e in entries]
    if any(found is not None and (found[1] is None or isinstance(found[1], ast.Dict) or (
            isinstance(found[1], ast.Call) and ast.unparse(found[1].func) == "dict")) for found in scratch):
        raise CannotFix("the launch's scratch is a dict, or not written at the launch")
    counted, typed = type_at_launches(project, model, count, entries), type_at_launches(project, model, made, entries)
    if counted is None or typed is None:
        raise CannotFix("the barrier type or count cannot be written at the launch")
    array = cst.Module([]).code_for_node(call_with_keyword(expression(typed), "num_barriers", counted))
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    add_parameter(builder, model, function, name, _before_keyword_bound(function, entries))
    nested = helper is not None and helper in function.body  # a helper nested in the body: both go, in one edit
    _remove_from_body(file, function, [helper, statement] if nested else [statement])
    if helper is not None and not nested:
        _remove_definition(file, model, helper)
    for read in reads:
        target = file.find_ast(model, read, cst.Subscript)
        if target is None:
            raise CannotFix("an index of the list was not found")
        file.rewrite(target, lambda updated: updated.with_changes(
            value=cst.Attribute(value=updated.value, attr=cst.Name("at"))))
    for entry in entries:
        edit_sequence_keyword(builder, entry, "scratch_types", array, first=False, add_if_missing=True)
    return builder.fix(f"pallas-lsp ({code}): Allocate the barriers {name} as one barrier array in scratch "
                       f"(num_barriers={counted})", "safe", preferred=True)


def _remove_definition(file, model, helper: ast.FunctionDef) -> None:
    """Drop a top-level helper's `def`, with the blank lines after it."""
    if helper not in model.tree.body:
        raise CannotFix("the helper is nested elsewhere than in the kernel body")
    file.remove_top_level(helper)


def _remove_from_body(file, function: ast.FunctionDef, statements: list[ast.stmt]) -> None:
    """Drop `statements` of the body's own block; the first statement left keeps the leading lines of the
    first dropped one (the body's layout above them)."""
    definition = file.function(function)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix("the kernel body was not found")
    dropped = {function.body.index(s) for s in statements}

    def drop(updated: cst.FunctionDef) -> cst.FunctionDef:
        body = list(updated.body.body)
        kept = [s for n, s in enumerate(body) if n not in dropped]
        first = min(dropped)
        if not kept:
            kept = [cst.SimpleStatementLine([cst.Pass()])]
        elif first < len(kept) and first < len(body):
            kept[first] = kept[first].with_changes(leading_lines=body[first].leading_lines)
        return updated.with_changes(body=updated.body.with_changes(body=kept))

    file.rewrite(definition, drop)
