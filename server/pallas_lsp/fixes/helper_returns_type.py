"""Fix (PAL001): a helper that returns a block-local buffer's get_global, called by kernel bodies (here or in
other workspace modules), returns the buffer's type instead, and each call allocates it with `pl.run_scoped`
for the rest of its block.

    def acquire_tile(width, dtype):                       def acquire_tile(width, dtype):
        return pl.get_global(plgpu.SMEM((64, width), dtype))  return plgpu.SMEM((64, width), dtype)

    def stage(x_ref, o_ref):                    ->     def stage(x_ref, o_ref):
        tile = common.acquire_tile(128, x_ref.dtype)       def scoped(tile):
        tile[...] = x_ref[...]                                 tile[...] = x_ref[...]
        ...                                                    ...
                                                           pl.run_scoped(scoped, common.acquire_tile(128, x_ref.dtype))

The type is still built by the helper, with what each call passes: right for every configuration, and no
names of the helper's module are needed where it is called. Only where every mention of the helper in the
workspace is such a call (`name = helper(...)`, in a block the rest of which can move into a nested function,
in a function compiled Mosaic GPU launches run), so that no other user of the helper expects a buffer.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import MemType
from .kernel_edits import CannotFix, FixBuilder, replace_expression, unique_name
from .run_scoped_allocation import (_block_of, _check_movable, _check_not_escaping, _check_not_read_after, _ends_in_return,
                                    _thread_axis)
from .sites import helper_mentions, launches_running

_BLOCK_LOCAL = {"smem", "tmem", "regs"}
_LAUNCHES = ("plgpu.kernel", "pl.kernel")


def fix(project, model, call: ast.Call, value, code: str):
    if code != "PAL001" or not isinstance(value, MemType) or not (
            value.space in _BLOCK_LOCAL or "Barrier" in value.constructor):
        return None
    helper = model.enclosing_function(call)
    if not (isinstance(helper, ast.FunctionDef) and helper in model.tree.body and not helper.decorator_list):
        return None
    returns = [n for n in ast.walk(helper) if isinstance(n, ast.Return) and model.enclosing_function(n) is helper]
    if len(returns) != 1 or returns[0].value is not call or len(call.args) != 1 or call.keywords \
            or isinstance(call.args[0], ast.Starred):
        return None
    sites = _call_sites(project, model, helper)
    builder = FixBuilder(project)
    argument = ast.get_source_segment(model.text, call.args[0])
    if argument is None:
        raise CannotFix("the get_global's argument was not found")
    replace_expression(builder, model, call, argument)
    for source, statement, function, axis in sites:
        _scope_rest(builder, source, statement, function, axis)
    callers = ", ".join(dict.fromkeys(function.name for _, _, function, _ in sites))
    return builder.fix(f"pallas-lsp ({code}): Allocate what {helper.name} gives with pl.run_scoped where it is called "
                       f"({callers}); {helper.name} returns its type (the helper and its call sites are edited)",
                       "safe", preferred=True)


def _call_sites(project, model, helper: ast.FunctionDef) -> list[tuple]:
    """(module, `name = helper(...)`, its function, the thread axis) for every mention of the helper in the
    workspace; CannotFix where one is anything else."""
    found = []
    for source, node in helper_mentions(project, model, helper):
        found.append(_call_site(project, source, node, helper))
    if not found:
        raise CannotFix(f"{helper.name} is never called")
    return found


def _call_site(project, source, node: ast.expr, helper: ast.FunctionDef) -> tuple:
    call = source.parents.get(node)
    statement = source.parents.get(call)
    if not (isinstance(call, ast.Call) and call.func is node and isinstance(statement, ast.Assign)
            and statement.value is call and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        raise CannotFix(f"{helper.name} is used other than as `name = {helper.name}(...)`")
    function = source.enclosing_function(statement)
    if not isinstance(function, ast.FunctionDef):
        raise CannotFix(f"{helper.name} is called outside a function")
    name = statement.targets[0].id
    if len(source.scopes[function].bindings.get(name, [])) != 1:
        raise CannotFix(f"{name} is bound more than once in {function.name}")
    entries = launches_running(project, source, function)
    if not entries or any(e.api not in _LAUNCHES or e.interpret or e.maybe_interpret for e in entries):
        raise CannotFix(f"{function.name} is not run only by compiled Mosaic GPU launches")
    axes = {_thread_axis(project, e) for e in entries}
    if len(axes) != 1 or None in axes:
        raise CannotFix("the kernel's thread axis is not known, so run_scoped's collective_axes is not")
    block, _ = _block_of(source, statement, function)
    rest = block[block.index(statement) + 1:]
    _check_movable(function, rest)
    _check_not_escaping(source, call, None, name, rest)
    _check_not_read_after(function, statement, name, rest)
    return source, statement, function, axes.pop()


def _scope_rest(builder: FixBuilder, model, statement: ast.Assign, function: ast.FunctionDef, axis: str) -> None:
    """`name = helper(...)` and the statements after it in its block become `def scoped(name): ...` and
    `pl.run_scoped(scoped, helper(...))`."""
    file, imports = builder.file(model)
    found = file.find_ast(model, statement, cst.BaseSmallStatement)
    line = file.parent(found) if found is not None else None
    owner = file.parent(line) if line is not None else None
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(owner, cst.IndentedBlock)
            and line in owner.body):
        raise CannotFix("the helper's call was not found")
    position = list(owner.body).index(line)
    name = statement.targets[0].id
    rest_ast = _rest(model, statement, function)
    scoped = unique_name(model, function, "scoped")
    type_code = ast.get_source_segment(model.text, statement.value)
    quoted = f"\"{axis}\"" if axis.isidentifier() else repr(axis)
    collective = f", collective_axes={quoted}" if axis else ""
    returns = "return " if _ends_in_return(rest_ast) else ""
    launch = cst.parse_statement(
        f"{returns}{imports.name('jax.experimental.pallas')}.run_scoped({scoped}, {type_code}{collective})\n")

    def change(updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        got = body[position]
        moved = body[position + 1:] or [cst.SimpleStatementLine([cst.Pass()])]
        inner = cst.FunctionDef(name=cst.Name(scoped), params=cst.Parameters([cst.Param(cst.Name(name))]),
                                body=cst.IndentedBlock(body=moved), leading_lines=got.leading_lines)
        return updated.with_changes(body=[*body[:position], inner, launch])

    file.rewrite(owner, change)


def _rest(model, statement: ast.stmt, function: ast.FunctionDef) -> list[ast.stmt]:
    block, _ = _block_of(model, statement, function)
    return block[block.index(statement) + 1:]
