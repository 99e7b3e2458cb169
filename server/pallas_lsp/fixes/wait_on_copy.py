"""Fix (PAL013): a copy's DMA semaphore waited on with `pl.semaphore_wait` is waited on through the copy.

    pltpu.make_async_copy(x_hbm.at[rows], chunk, sem).start()      copy = pltpu.make_async_copy(x_hbm.at[rows], chunk, sem)
    pl.semaphore_wait(sem)                                    ->   copy.start()
                                                                   copy.wait()

`pl.semaphore_wait` takes a REGULAR or BARRIER semaphore (jax 0.12: "Must wait semaphores of the following types:
... Got dma_sem."); a DMA semaphore is waited on through a copy descriptor, whose `.wait()` waits until the
semaphore has counted the bytes of its destination. Where the copy that signals the semaphore is started in the
same block before the wait, its descriptor is waited on (named first where it is started inline). Where it is
made elsewhere (a helper `_start_fetch(..., slot)` called for the next step), the wait builds a descriptor of
the same copy, its arguments written with the names at the wait (`pltpu.make_async_copy(src, buf.at[slot],
sems.at[slot]).wait()`: the helper's parameters taken from the semaphore the wait names, and from its calls where
every call passes the same name); where the source cannot be written so, the destination stands for it, as in
JAX's own `make_async_copy(ref, ref, sem).wait()` (the wait reads only the sizes and the semaphore). Only for a
wait of one copy (no count, or 1), on a semaphore that local copies (`make_async_copy`, `async_copy`) of one
descriptor signal.
"""

from __future__ import annotations

import ast
import copy as copying

import libcst as cst

from ..analysis.values import Api, Const, Func
from .kernel_edits import CannotFix, FixBuilder, unique_name

_LOCAL_COPIES = ("pltpu.make_async_copy", "pltpu.async_copy")  # (src_ref, dst_ref, sem), both local


def fix(project, model, finding):
    facts = finding.facts
    kernel, use, node = facts.get("kernel"), facts.get("use"), facts.get("semaphore")
    if kernel is None or use is None or use.kind != "wait" or facts.get("dtype") != "dma_sem" or use.model is not model:
        return None
    sem = next((s for s in kernel.semaphores if s.node is node), None)
    if sem is None:
        return None
    wait = use.node
    statement = model.parents.get(wait)
    function = model.enclosing_function(wait)
    if not isinstance(statement, ast.Expr) or function is None:
        raise CannotFix("the wait is not a statement of its own in a function")
    waited = _waited_semaphore(project, model, wait)
    descriptors = {id(u.descriptor): (u.descriptor, u.model) for u in sem.uses if u.kind == "dma_dst" and u.descriptor is not None}
    if len(descriptors) != 1 or any(u.kind in ("dma_src", "copy", "signal") for u in sem.uses):
        raise CannotFix("not one local copy signals the semaphore (which copy the wait is for is not known)")
    ((descriptor, where),) = descriptors.values()
    api = project.evaluator.value(where, descriptor.func)
    if not (isinstance(api, Api) and api.name in _LOCAL_COPIES):
        raise CannotFix("the semaphore is signalled by a copy that is not a local make_async_copy / async_copy")
    src, dst, copy_sem = (_argument(descriptor, i, k) for i, k in ((0, "src_ref"), (1, "dst_ref"), (2, "sem")))
    if None in (src, dst, copy_sem) or _argument(descriptor, 3, "src_sem") is not None:
        raise CannotFix("the copy's source, destination and semaphore are not written as its arguments")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    line = file.parent(file.find_ast(model, statement, cst.BaseSmallStatement))
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        raise CannotFix("the wait shares its line with another statement")
    started = _started_before(project, model, statement, descriptor, where) \
        if ast.unparse(copy_sem) == ast.unparse(waited) else None
    if started is not None:
        name = _wait_named(builder, file, model, function, started, descriptor, api.name)
        file.rewrite(line, lambda updated: updated.with_changes(body=[cst.Expr(cst.parse_expression(f"{name}.wait()"))]))
        return builder.fix(f"pallas-lsp ({finding.code}): Wait on the copy ({name}.wait())", "safe", preferred=True)
    written = _at_the_wait(project, model, wait, where, descriptor, copy_sem, waited, (dst, src))
    if written is None:
        raise CannotFix("the copy's destination cannot be written with the names at the wait")
    dst_text, src_text = written
    make = f"{imports.name('jax.experimental.pallas.tpu')}.make_async_copy"
    rebuilt = f"{make}({src_text or dst_text}, {dst_text}, {ast.get_source_segment(model.text, waited)}).wait()"
    file.rewrite(line, lambda updated: updated.with_changes(body=[cst.Expr(cst.parse_expression(rebuilt))]))
    return builder.fix(f"pallas-lsp ({finding.code}): Wait on the copy (make_async_copy(...).wait())", "safe",
                       preferred=True)


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _waited_semaphore(project, model, wait: ast.Call) -> ast.expr:
    """The wait's semaphore, where it waits for one copy: no count, or a count of 1, and no `decrement=`."""
    if any(isinstance(a, ast.Starred) for a in wait.args) or any(k.arg in (None, "decrement") for k in wait.keywords) \
            or len(wait.args) > 2:
        raise CannotFix("the wait's arguments are not a semaphore and a count")
    waited, count = _argument(wait, 0, "sem_or_view"), _argument(wait, 1, "value")
    if waited is None:
        raise CannotFix("the wait names no semaphore")
    if count is not None and project.evaluator.value(model, count) != Const(1):
        raise CannotFix("the wait counts more than one copy (a descriptor's .wait() waits for one)")
    return waited


def _started_before(project, model, statement: ast.stmt, descriptor: ast.Call, where):
    """The statement before the wait, in its block, that makes the copy: `copy = make_async_copy(...)` (then
    `copy.start()`), `copy = async_copy(...)`, or `make_async_copy(...).start()`; None if there is none."""
    if where is not model:
        return None
    block = next((getattr(model.parents.get(statement), f) for f in ("body", "orelse", "finalbody")
                  if statement in getattr(model.parents.get(statement), f, ())), None)
    if block is None:
        return None
    for before in reversed(block[:block.index(statement)]):
        if isinstance(before, ast.Assign) and before.value is descriptor and len(before.targets) == 1 \
                and isinstance(before.targets[0], ast.Name):
            return before
        if isinstance(before, ast.Expr) and isinstance(before.value, ast.Call) \
                and isinstance(before.value.func, ast.Attribute) and before.value.func.value is descriptor:
            return before
        if any(node is descriptor for node in ast.walk(before)):
            return None  # made some other way (in a `pl.when`, a list): not named here
    return None


def _wait_named(builder, file, model, function, started: ast.stmt, descriptor: ast.Call, api: str) -> str:
    """The descriptor's name, binding it first where it was started inline (`make_async_copy(...).start()`)."""
    if isinstance(started, ast.Assign):
        name = started.targets[0].id
        later = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Store) and n is not started.targets[0]]
        if later:
            raise CannotFix(f"{name} is bound again in the function")
        return name
    name = unique_name(model, function, "copy")
    made = ast.get_source_segment(model.text, descriptor)
    method = started.value.func.attr
    line = file.parent(file.find_ast(model, started, cst.BaseSmallStatement))
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or made is None:
        raise CannotFix("the copy shares its line with another statement")

    def split(updated: cst.SimpleStatementLine):
        bound = cst.parse_statement(f"{name} = {made}\n").with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([bound, updated.with_changes(leading_lines=[], body=[
            cst.Expr(cst.parse_expression(f"{name}.{method}()"))])])

    file.rewrite(line, split)
    return name


def _at_the_wait(project, model, wait, where, descriptor, copy_sem, waited, expressions):
    """The copy's destination and source as written at the wait (the source None where it cannot be): the copy's
    own where it is made in the wait's function, else its helper's parameters replaced by the wait's semaphore
    expression's parts and by the one name every call of the helper passes."""
    helper = where.enclosing_function(descriptor)
    if helper is model.enclosing_function(wait) and where is model:
        if ast.unparse(copy_sem) != ast.unparse(waited):
            return None
        return tuple(ast.get_source_segment(model.text, e) for e in expressions)
    if where is not model or not isinstance(helper, ast.FunctionDef) or _nested_in(model, helper):
        return None
    params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args, *helper.args.kwonlyargs]]
    bound: dict[str, ast.expr] = {}
    if not _unify(copy_sem, waited, set(params), bound):
        return None
    calls = model.calls_named(helper.name)
    if not calls or any(not isinstance(c.func, ast.Name) or not isinstance(project.evaluator.value(model, c.func), Func)
                        for c in calls):
        return None
    written = []
    for expression in expressions:
        mapping = dict(bound)
        for name in {n.id for n in ast.walk(expression) if isinstance(n, ast.Name) and n.id in params} - set(mapping):
            passed = _same_name_passed(model, calls, helper, params.index(name), name, wait)
            if passed is None:
                mapping = None
                break
            mapping[name] = passed
        written.append(ast.unparse(_substituted(expression, mapping)) if mapping is not None else None)
    return (written[0], written[1]) if written[0] is not None else None


def _nested_in(model, function) -> bool:
    return model.enclosing_function(function) is not None


def _unify(pattern: ast.AST, target: ast.AST, params: set[str], bound: dict) -> bool:
    """Does `pattern` (in the helper) match `target` (at the wait), its parameters standing for parts of it?"""
    if isinstance(pattern, ast.Name) and pattern.id in params:
        if pattern.id in bound:
            return ast.dump(bound[pattern.id]) == ast.dump(target)
        bound[pattern.id] = target
        return True
    if type(pattern) is not type(target):
        return False
    for field, value in ast.iter_fields(pattern):
        other = getattr(target, field, None)
        if field == "ctx":
            continue
        if isinstance(value, list):
            if not isinstance(other, list) or len(value) != len(other) or \
                    not all(_unify(a, b, params, bound) if isinstance(a, ast.AST) else a == b for a, b in zip(value, other)):
                return False
        elif isinstance(value, ast.AST):
            if not isinstance(other, ast.AST) or not _unify(value, other, params, bound):
                return False
        elif value != other:
            return False
    return True


def _same_name_passed(model, calls, helper, index: int, param: str, wait) -> ast.Name | None:
    """The name every call of the helper passes for its parameter, where that name means the same at the wait."""
    passed = []
    for call in calls:
        argument = call.args[index] if index < len(call.args) else \
            next((k.value for k in call.keywords if k.arg == param), None)
        if not isinstance(argument, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        passed.append((argument, model.lookup(argument.id, model.scope_of(call), call.lineno)))
    names = {name.id for name, _ in passed}
    at_wait = model.lookup(passed[0][0].id, model.scope_of(wait), wait.lineno) if passed else None
    if len(names) != 1 or at_wait is None or any(binding is not at_wait for _, binding in passed):
        return None
    return passed[0][0]


def _substituted(expression: ast.expr, mapping: dict[str, ast.expr]) -> ast.expr:
    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name):
            return copying.deepcopy(mapping[node.id]) if node.id in mapping else node

    return Substitute().visit(copying.deepcopy(expression))
