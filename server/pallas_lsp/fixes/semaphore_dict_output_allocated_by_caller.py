"""Fix (PAL008): a semaphore in a kernel's dict of outputs that the caller hands, as `outs["key"]`, to another
kernel becomes a semaphore the caller allocates with `plgpu.alloc_semaphore` and puts back in the dict.

    def produce(x):                                             def produce(x, ready):
      out_type = {"y": Y, "ready": SEM}                           out_type = {"y": Y}
      return plgpu.kernel(body, out_type=out_type)(x)   ->        return {**plgpu.kernel(body, out_type=out_type)(x, ready), "ready": ready}
    outs = produce(x)                                           outs = produce(x, plgpu.alloc_semaphore())
    consume(outs["y"], outs["ready"])                           consume(outs["y"], outs["ready"])

The tuple-output case is `semaphore_allocated_by_caller`'s; this one keeps the dict's shape, so every reader of
`outs` still finds its keys: the semaphore key now holds the ref `plgpu.alloc_semaphore()` made (jax 0.12 and
later, zero-initialised as the output was). The body's semaphore parameter moves from its place among the
outputs (the dict's keys in sorted order, its pytree order) to the end of its inputs. Only where the launch's
dict is bound to a name (`outs = plgpu.kernel(...)(x)`, or `outs = produce(x)` of a function whose one return,
its last statement, returns the launch), and that name is only read as `outs["key"]` (in place or in a function
of this module it is passed to), the semaphore's key only as an operand of other kernel launches: a dict
returned or iterated would carry the ref out (jax: 'mutable array references cannot be returned').
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.jax_version import jax_version
from ..analysis.launches import kernel_launches
from ..analysis.values import Func, MemType
from .kernel_edits import CannotFix, FixBuilder, unique_name
from .semaphore_allocated_by_caller import ALLOC_SEMAPHORE_SINCE, _appended, _only_into_kernels, _route, _shape_code
from .semaphore_out_of_out_type import _scratch_count, _without
from .sites import bound_before, launches


def _bound_to_name(model, call: ast.AST) -> ast.Assign | None:
    """The assignment whose whole value is `call`, binding its result (the dict) to one name."""
    statement = model.parents.get(call)
    if not (isinstance(call, ast.Call) and isinstance(statement, ast.Assign) and statement.value is call
            and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    return statement


def _key_of(node: ast.AST) -> str | None:
    """The constant string key of `outs["key"]` (a read)."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _only_read_by_key(project, model, loads: list[ast.Name], key: str, launched: set[int], depth: int = 0) -> bool:
    """Is each load of the dict's name `outs["k"]` (the semaphore's `key` only as an operand of another launch), or a
    positional argument of a function of this module whose parameter is only read so?"""
    for load in loads:
        parent = model.parents.get(load)
        if isinstance(parent, ast.Subscript) and parent.value is load:
            read = _key_of(parent)
            if read is None or read == key and not _only_into_kernels(project, model, [parent], launched):
                return False
            continue
        if not (isinstance(parent, ast.Call) and load in parent.args) or depth or any(
                isinstance(a, ast.Starred) for a in parent.args) or id(parent) in launched:
            return False
        callee = project.evaluator.value(model, parent.func)
        function = getattr(callee, "node", None)
        if not (isinstance(callee, Func) and callee.model is model and isinstance(function, ast.FunctionDef)):
            return False
        args = function.args
        index = parent.args.index(load) + (1 if getattr(callee, "self_value", None) is not None else 0)
        if args.posonlyargs or args.vararg or index >= len(args.args):
            return False
        parameter = args.args[index].arg
        inner = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == parameter]
        if not inner or any(not isinstance(n.ctx, ast.Load) for n in inner) or not _only_read_by_key(
                project, model, inner, key, launched, depth + 1):
            return False
    return True


def fix(project, model, finding):
    entry, out_type = finding.facts.get("entry"), finding.facts.get("out_type")
    if entry is None or entry.api != "plgpu.kernel" or entry.model is not model or not isinstance(out_type, ast.Dict):
        return None
    keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in out_type.keys]
    spans = [model.source.span(v) for v in out_type.values]
    if None in keys or len(set(keys)) != len(keys) or finding.span not in spans:
        return None
    index = spans.index(finding.span)
    key, leaf = keys[index], out_type.values[index]
    memtype = as_memtype(project.evaluator.value(model, leaf))
    if not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore):
        return None
    route = _route(project, model, entry, _bound_to_name)
    if route is None:
        return None
    launch, statement = route.launch, route.statement
    host = model.enclosing_function(statement)
    if host is None:
        return None
    name = statement.targets[0].id
    mentions = [n for n in ast.walk(host) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in mentions if isinstance(n.ctx, ast.Load)]
    launched = {id(other.call) for other in kernel_launches(project, model) if other.call is not launch}
    if len(mentions) - len(loads) != 1 or not loads or not _only_read_by_key(project, model, loads, key, launched):
        return None  # the dict is returned, iterated or handed on: the ref would go with it
    if len(keys) < 2:
        raise CannotFix("the semaphore is the only output")
    version = jax_version(project)
    if version is not None and version < ALLOC_SEMAPHORE_SINCE:
        raise CannotFix(f"jax {'.'.join(map(str, version))} has no plgpu.alloc_semaphore")
    body = entry.body
    function = body.node if body is not None and getattr(body, "model", None) is model else None
    if not isinstance(function, ast.FunctionDef) or [
            e.node for e in launches(project, model, function)] != [entry.node]:
        raise CannotFix("the body is not a plain function launched only here")
    if _scratch_count(entry) != 0 or any(k.arg is None for k in entry.node.keywords):
        raise CannotFix("with scratch, which parameter is the semaphore's is not known")
    args = function.args
    inputs = bound_before(entry.kernel.body) + len(launch.args)
    if args.posonlyargs or args.vararg or args.kwarg or args.defaults or launch.keywords or any(
            isinstance(a, ast.Starred) for a in launch.args) or len(args.args) != inputs + len(keys):
        raise CannotFix(f"which of {function.name}'s parameters take the inputs and outputs is not known")
    through = route.function
    if through is not None and (through.args.vararg or through.args.kwarg or through.args.kwonlyargs
                                or through.args.defaults or route.unpacked.keywords
                                or any(isinstance(a, ast.Starred) for a in route.unpacked.args)):
        raise CannotFix(f"where {through.name} would take the semaphore is not known")
    position = inputs + sorted(keys).index(key)  # outputs follow the dict's pytree order: keys sorted
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition = file.function(function)
    display = file.find_ast(model, out_type, cst.Dict)
    inner = file.find_ast(model, launch, cst.Call)
    if definition is None or display is None or inner is None:
        raise CannotFix("the body, out_type or the launch was not found")
    plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
    allocate = f"{plgpu}.alloc_semaphore{_shape_code(model, leaf, statement, memtype)}"
    key_code = ast.get_source_segment(model.text, out_type.keys[index])

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = list(updated.params.params)
        moved = params[position].with_changes(comma=params[inputs].comma)
        params = _without(params, position)
        params.insert(inputs, moved)
        if params[-1].comma is not cst.MaybeSentinel.DEFAULT and updated.params.params[-1].comma is cst.MaybeSentinel.DEFAULT:
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(params=updated.params.with_changes(params=params))

    def change_out_type(updated: cst.Dict) -> cst.Dict:
        return updated.with_changes(elements=_without(list(updated.elements), index))

    def with_semaphore(call: cst.Call, semaphore: str) -> cst.Dict:
        """`{**call(..., semaphore), "key": semaphore}`: the launch's dict with the semaphore put back."""
        return cst.Dict([cst.StarredDictElement(_appended(call, semaphore)),
                         cst.DictElement(cst.parse_expression(key_code), cst.Name(semaphore))])

    file.rewrite(definition, change_body)
    file.rewrite(display, change_out_type)
    if through is None:  # `outs = launch(...)`: the semaphore allocated just before
        semaphore = unique_name(model, host, key if key.isidentifier() else function.args.args[position].arg)
        line = file.find_ast(model, statement, cst.SimpleStatementLine)
        if line is None or len(line.body) != 1:
            raise CannotFix("the assignment was not found")
        file.rewrite(inner, lambda updated: with_semaphore(updated, semaphore))
        file.rewrite(line, lambda updated: cst.FlattenSentinel([
            cst.parse_statement(f"{semaphore} = {allocate}\n").with_changes(leading_lines=updated.leading_lines),
            updated.with_changes(leading_lines=[])]))
    else:  # `outs = produce(...)`: produce takes the semaphore, its caller allocates it
        semaphore = unique_name(model, through, key if key.isidentifier() else function.args.args[position].arg)
        outer = file.function(through)
        call = file.find_ast(model, route.unpacked, cst.Call)
        if outer is None or call is None:
            raise CannotFix(f"{through.name} or its call was not found")
        file.rewrite(inner, lambda updated: with_semaphore(updated, semaphore))
        file.rewrite(outer, lambda updated: updated.with_changes(params=updated.params.with_changes(
            params=[*updated.params.params[:-1], updated.params.params[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Param(cst.Name(semaphore))]
            if updated.params.params else [cst.Param(cst.Name(semaphore))])))
        file.rewrite(call, lambda updated: _appended_code(updated, allocate))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate {key_code} with plgpu.alloc_semaphore before the launch "
                       f"and pass it in, not as an output of {function.name}", "safe", preferred=True)


def _appended_code(call: cst.Call, code: str) -> cst.Call:
    """`call` with the expression `code` as a last positional argument."""
    arguments = list(call.args)
    if arguments:
        arguments[-1] = arguments[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*arguments, cst.Arg(cst.parse_expression(code))])
