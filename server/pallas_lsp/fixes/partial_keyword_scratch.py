"""Fix: a `get_global` the launcher binds to the body by keyword through `functools.partial` becomes its scratch.

    def body(w_hbm, o_vmem, *, rows, sem):                    def body(w_hbm, o_vmem, sem, *, rows):
        ...                                                         ...
    def launch(w):                                             def launch(w):
        extras = {"rows": 16,                          ->          extras = {"rows": 16}
                  "sem": pl.get_global(pltpu.SemaphoreType.DMA)}   return pl.pallas_call(
        return pl.pallas_call(                                          functools.partial(body, **extras), ...,
            functools.partial(body, **extras), ...)(w)                  scratch_shapes=[pltpu.SemaphoreType.DMA])(w)

The launcher runs outside the kernel, where `get_global` has no kernel to belong to (jax 0.12 for TPU: `No
ir_type_handler for aval type: AbstractRef`); the author meant a semaphore or buffer of the kernel, which the
launch's scratch gives, passed after the operands and outputs: the parameter becomes the body's last positional
one. The keyword is written in the partial itself (`sem=pl.get_global(T)`) or in a dict literal bound once and
unpacked only into it (`**extras`). Only where the body has no `*refs`, no launch binds the parameter otherwise, and
the type means the same at the launch; unsafe for a semaphore over a grid of several steps (scratch belongs to one
core, not to every core a "parallel" dimension may use).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.values import Api, Func, MemType
from .allocate_as_scratch import TPU_SCRATCH_SEMAPHORE_SCOPE, _movable_type, launch_blocks
from .default_argument_scratch import is_semaphore
from .kernel_edits import CannotFix, FixBuilder, edit_sequence_keyword
from .sites import is_call_form, single_body_launches
from .type_in_scope import _launched_body


def _bound_keyword(project, model, call: ast.Call) -> tuple[str, ast.Call, ast.AST] | None:
    """(keyword, the `functools.partial(body, ...)` call, the node to remove: its keyword or the dict item) where the
    get_global is bound by keyword to the body: in the partial, or in a dict literal bound once and unpacked only
    there."""
    parent = model.parents.get(call)
    if isinstance(parent, ast.keyword) and parent.arg:
        partial = model.parents.get(parent)
        return (parent.arg, partial, parent) if _is_partial(project, model, partial) else None
    if not isinstance(parent, ast.Dict) or call not in parent.values:
        return None
    key = parent.keys[parent.values.index(call)]
    statement = model.parents.get(parent)
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(statement, ast.Assign)
            and statement.value is parent and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    name = statement.targets[0].id
    scope = model.scope_of(statement)
    if len(model.scopes[scope].bindings.get(name, [])) != 1:
        return None
    reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    unpacked = model.parents.get(reads[0]) if len(reads) == 1 else None
    partial = model.parents.get(unpacked)
    if not (isinstance(unpacked, ast.keyword) and unpacked.arg is None and _is_partial(project, model, partial)):
        return None
    return key.value, partial, key


def _is_partial(project, model, node) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    value = project.evaluator.value(model, node.func)
    return isinstance(value, Api) and value.name == "functools.partial"


def fix(project, model, call: ast.Call, value, code: str):
    found = _bound_keyword(project, model, call)
    if found is None:
        return None
    keyword, partial, removed = found
    body = project.evaluator.value(model, partial.args[0])
    if not isinstance(body, Func) or body.self_value is not None or not isinstance(body.node, ast.FunctionDef):
        raise CannotFix("the partial binds no plain function of the workspace")
    function = body.node
    spec = function.args
    if spec.vararg is not None or spec.posonlyargs:
        raise CannotFix(f"{function.name} takes *{spec.vararg.arg if spec.vararg else 'refs'} or positional-only refs")
    positional = [a.arg for a in spec.args]
    if keyword in positional and (positional[-1] != keyword or spec.defaults):
        raise CannotFix(f"{keyword} is not {function.name}'s last positional parameter")
    if keyword not in positional and keyword not in [a.arg for a in spec.kwonlyargs]:
        raise CannotFix(f"{function.name} has no parameter {keyword}")
    if not isinstance(value, MemType):
        raise CannotFix("the get_global's type is not known")
    entries = single_body_launches(project, model, function)
    if not entries or not all(is_call_form(e) and _launched_body(project, model, e) is partial for e in entries):
        raise CannotFix("the partial is not the body of one launch")
    entry = entries[0]
    keyword_name = SCRATCH_KEYWORDS.get(entry.api)
    if keyword_name is None or entry.api != "pl.pallas_call" and not keyword_name.mosaic_gpu_lowers:
        raise CannotFix(f"{entry.api} takes no scratch this way")
    builder = FixBuilder(project)
    type_code = _movable_type(model, call, value, builder, entries)
    file, _ = builder.file(model)
    _remove(file, model, removed)
    if keyword not in positional:
        _to_positional(file, function, keyword)
    edit_sequence_keyword(builder, entry, keyword_name.keyword, type_code, first=False, add_if_missing=True)
    title = (f"pallas-lsp ({code}): Allocate {keyword}, which the launch's partial binds, as scratch of "
             f"{function.name} ({keyword_name.keyword})")
    if is_semaphore(value) and launch_blocks(entry) != 1:
        return builder.fix(f"{title} (unsafe: {TPU_SCRATCH_SEMAPHORE_SCOPE})", "unsafe")
    return builder.fix(title, "safe", preferred=True)


def _remove(file, model, removed: ast.AST) -> None:
    """Drop the partial's keyword, or the dict's item."""
    if isinstance(removed, ast.keyword):
        holder = model.parents.get(removed)
        target = file.find_ast(model, holder, cst.Call)
        index = [k for k in holder.keywords].index(removed)
        position = len(holder.args) + index
        if target is None:
            raise CannotFix("the partial was not found")
        file.rewrite(target, lambda updated: _without_arg(updated, position))
        return
    holder = model.parents.get(removed)
    target = file.find_ast(model, holder, cst.Dict)
    index = holder.keys.index(removed)
    if target is None:
        raise CannotFix("the dict was not found")

    def drop(updated: cst.Dict) -> cst.Dict:
        elements = list(updated.elements)
        del elements[index]
        if elements and index == len(elements):  # the last item went: the new last one ends as it ended
            elements[-1] = elements[-1].with_changes(comma=updated.elements[-1].comma)
        return updated.with_changes(elements=elements)

    file.rewrite(target, drop)


def _without_arg(updated: cst.Call, position: int) -> cst.Call:
    args = list(updated.args)
    del args[position]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(args=args)


def _to_positional(file, function: ast.FunctionDef, keyword: str) -> None:
    """Move a keyword-only parameter to the end of the positional ones (JAX passes scratch by position)."""
    target = file.function(function)
    if target is None:
        raise CannotFix(f"{function.name} was not found")

    def move(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = updated.params
        moved = next((p for p in params.kwonly_params if p.name.value == keyword), None)
        if moved is None or moved.default is not None:
            raise CannotFix(f"{keyword} has a default")
        kwonly = [p for p in params.kwonly_params if p is not moved]
        last = params.params[-1] if params.params else None
        positional = [*params.params[:-1], last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))] \
            if last is not None else []
        positional.append(moved.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if kwonly
                                             else cst.MaybeSentinel.DEFAULT))
        star = params.star_arg if kwonly else cst.MaybeSentinel.DEFAULT
        if kwonly:
            kwonly[-1] = kwonly[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(params=params.with_changes(params=positional, kwonly_params=kwonly, star_arg=star))

    file.rewrite(target, move)
