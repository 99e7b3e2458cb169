"""Fix (PAL001, PAL002): a helper that returns several `get_global` buffers at once, unpacked by the kernel body
that calls it, returns their types instead, and the launch allocates them as scratch with that same call.

    def _running_best(rows):                              def _running_best(rows):
        best = pl.get_global(pltpu.VMEM((rows, 1), f32))      return (pltpu.VMEM((rows, 1), f32),
        arg = pl.get_global(pltpu.VMEM((rows, 1), i32))               pltpu.VMEM((rows, 1), i32))
        return best, arg
                                                  ->
    def kernel(rows, x_ref, o_ref):                        def kernel(rows, x_ref, o_ref, best, arg):
        best, arg = _running_best(rows)                        ...
        ...                                                pl.pallas_call(partial(kernel, br), ...,
    pl.pallas_call(partial(kernel, br), ...)                   scratch_shapes=[*_running_best(br)])

The types are still built by the helper, with what the launch binds for each of the call's arguments (`br` for
`rows`, through the partial; `kernel._running_best(br)` in an ops module that imports the kernel's module as
`kernel`): right for every configuration. The unpacked names become the body's last refs, in the same order. Only
where the helper is a module-level function whose statements are `name = pl.get_global(T)` and one `return` of
those names (or a `return` of the get_globals themselves), every mention of it in the workspace is the one
`a, b = helper(...)` of a launched body, and every launch of that body takes scratch (a TPU or interpreted
`pl.pallas_call`, a `plgpu.kernel`) written as a list, or none yet.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS, TPU_TC, compiled_backend
from ..analysis.values import Func
from .grid_spec import grid_spec_site
from .optional_scratch import runs_body
from .kernel_edits import CannotFix, FixBuilder, add_parameter, edit_sequence_keyword, remove_statement
from .sites import keyword_bound, launches_running
from .type_in_scope import type_at_launches


def _returned_types(model, helper: ast.FunctionDef) -> tuple[list[ast.Assign], list[ast.expr]] | None:
    """(the `name = pl.get_global(T)` statements, the `T`s in the order the helper returns them), or None where
    the helper is anything else."""
    body = helper.body[1:] if helper.body and isinstance(helper.body[0], ast.Expr) and isinstance(
        helper.body[0].value, ast.Constant) else helper.body
    if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Tuple):
        return None
    assigned: dict[str, ast.expr] = {}
    statements = []
    for statement in body[:-1]:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and _get_global_argument(statement.value) is not None
                and statement.targets[0].id not in assigned):
            return None
        assigned[statement.targets[0].id] = _get_global_argument(statement.value)
        statements.append(statement)
    types = []
    for element in body[-1].value.elts:
        if isinstance(element, ast.Name) and element.id in assigned:
            types.append(assigned.pop(element.id))
        elif _get_global_argument(element) is not None:
            types.append(_get_global_argument(element))
        else:
            return None
    if assigned or len(types) < 2:
        return None  # a buffer not returned, or one buffer (helper_type_scratch's)
    return statements, types


def _get_global_argument(node: ast.AST) -> ast.expr | None:
    """`T` of `pl.get_global(T)` (written with its one plain argument)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_global"
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)):
        return node.args[0]
    return None


def fix(project, model, call: ast.Call, value, code: str):
    if code not in ("PAL001", "PAL002"):
        return None
    helper = model.enclosing_function(call)
    if not (isinstance(helper, ast.FunctionDef) and helper in model.tree.body and not helper.decorator_list):
        return None
    found = _returned_types(model, helper)
    if found is None:
        return None
    _, types = found
    source, site, statement, body = _one_call_site(project, model, helper, len(types))
    entries = launches_running(project, source, body)
    if not entries or len({e.api for e in entries}) != 1:
        raise CannotFix(f"{body.name} is not run by launches of one kind")
    api = entries[0].api
    if api not in ("pl.pallas_call", "plgpu.kernel") or (api == "pl.pallas_call" and not all(
            compiled_backend(project, e) == TPU_TC or e.interpret for e in entries)):
        raise CannotFix(f"a {api} launch of {body.name} takes no scratch")
    if any(e.body is None or not runs_body(e, body) for e in entries):
        raise CannotFix(f"a launch reaches {body.name} other than as its body")
    keyword = SCRATCH_KEYWORDS[api].keyword
    for entry in entries:
        given = entry.kernel.kwarg(keyword)
        if grid_spec_site(project, entry) is not None or (given is not None and not isinstance(given[1], ast.List)):
            raise CannotFix(f"a launch's {keyword} is not a list written at the launch")
    carried = type_at_launches(project, source, site, entries)
    if carried is None:
        raise CannotFix(f"{helper.name}(...) cannot be written at the launch")
    builder = FixBuilder(project)
    written = [ast.get_source_segment(model.text, t) for t in types]
    if None in written:
        raise CannotFix("the types were not found")
    _returns_only(builder, model, helper, f"return {', '.join(written)}")
    remove_statement(builder, source, statement)
    bound = keyword_bound(entries[0].kernel.body)
    index = next((n for n, arg in enumerate(body.args.args) if arg.arg in bound), None)
    for offset, target in enumerate(statement.targets[0].elts):
        add_parameter(builder, source, body, target.id, None if index is None else index + offset)
    for entry in entries:
        edit_sequence_keyword(builder, entry, keyword, f"*{carried}", first=False, add_if_missing=True)
    names = ", ".join(t.id for t in statement.targets[0].elts)
    return builder.fix(f"pallas-lsp ({code}): Allocate {names} as scratch ({keyword}) with what {helper.name} "
                       f"returns, its types", "safe", preferred=True)


def _returns_only(builder: FixBuilder, model, helper: ast.FunctionDef, statement: str) -> None:
    """The helper's statements (its docstring kept) become the one `statement`, in one rewrite of its block."""
    file, _ = builder.file(model)
    node = file.function(helper)
    if node is None or not isinstance(node.body, cst.IndentedBlock):
        raise CannotFix(f"{helper.name} was not found")
    new = cst.parse_statement(statement + "\n")

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        body = list(updated.body.body)
        first = body[0]
        kept = [first] if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and isinstance(
            first.body[0], cst.Expr) and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)) \
            else []
        return updated.with_changes(body=updated.body.with_changes(body=[*kept, new]))

    file.rewrite(node, change)


def _one_call_site(project, model, helper: ast.FunctionDef, count: int):
    """(module, the call, `a, b = helper(...)`, the function it is in): the one mention of the helper in the
    workspace, unpacked into `count` plain names bound nowhere else in that function."""
    sites = []
    for source in [model, *project.importers(model)]:
        for node in ast.walk(source.tree):
            if (isinstance(node, ast.Name) and node.id == helper.name and isinstance(node.ctx, ast.Load)) or (
                    isinstance(node, ast.Attribute) and node.attr == helper.name):
                value = project.evaluator.value(source, node)
                if not (isinstance(value, Func) and value.node is helper):
                    if isinstance(node, ast.Name) and source is model:
                        raise CannotFix(f"{helper.name} is named where it is not known to be the helper")
                    continue
                sites.append((source, node))
    if len(sites) != 1:
        raise CannotFix(f"{helper.name} is used {len(sites)} times")
    source, node = sites[0]
    site = source.parents.get(node)
    statement = source.parents.get(site)
    if not (isinstance(site, ast.Call) and site.func is node and isinstance(statement, ast.Assign)
            and statement.value is site and len(statement.targets) == 1
            and isinstance(statement.targets[0], (ast.Tuple, ast.List))
            and len(statement.targets[0].elts) == count
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)):
        raise CannotFix(f"{helper.name} is used other than as `a, b = {helper.name}(...)`")
    body = source.enclosing_function(statement)
    if not isinstance(body, ast.FunctionDef) or source.parents.get(statement) is not body \
            or body.args.vararg or body.args.posonlyargs:
        raise CannotFix(f"{helper.name} is not called in a kernel body's own statements")
    for target in statement.targets[0].elts:
        if len(source.scopes[body].bindings.get(target.id, [])) != 1:
            raise CannotFix(f"{target.id} is bound more than once in {body.name}")
    return source, site, statement, body
