"""Fix (PAL008): a semaphore output that the caller unpacks and hands to another kernel becomes a semaphore the
caller allocates with `plgpu.alloc_semaphore` and passes to both kernels.

    y, flags = plgpu.kernel(produce, out_type=(Y, SEM))(x)      flags = plgpu.alloc_semaphore()
    z = plgpu.kernel(consume, out_type=Z)(y, flags)        ->   y = plgpu.kernel(produce, out_type=Y)(x, flags)
                                                                z = plgpu.kernel(consume, out_type=Z)(y, flags)
    def produce(x_ref, y_ref, flags_ref): ...                   def produce(x_ref, flags_ref, y_ref): ...

A kernel returns no semaphore (jax 0.12: 'Kernels cannot return semaphores ... or via plgpu.alloc_semaphore
before the kernels that use them'); `plgpu.alloc_semaphore()` (jax 0.12 and later) is the semaphore that
outlives one kernel, zero-initialised as the output was, and the consumer already takes it as an operand. The
producer's semaphore parameter moves from its outputs to the end of its inputs. Only where the launch is
called right where its results are unpacked into names (`a, b = plgpu.kernel(...)(...)`; or `a, b = produce(x)`
of a `produce = plgpu.kernel(...)` named only there; or `a, b = self.stage_a(x)` of a function whose last
statement, its one return, returns the launch, which then takes the semaphore too), the semaphore is the last output of a
literal `out_type` with no scratch, the body is a plain function launched only there, and the unpacked
semaphore is only passed to other kernel launches (or to a function of this module that passes it on to one). The caller's other results keep their
names (`y, flags = ...` becomes `y = ...`), so every other reader of them still fits.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.jax_version import jax_version
from ..analysis.launches import kernel_launches
from ..analysis.values import Func, MemType
from .kernel_edits import CannotFix, FixBuilder, unique_name
from .pass_as_input import tuple_code
from .semaphore_out_of_out_type import _scratch_count, _without_last
from .sites import bound_before, launches

ALLOC_SEMAPHORE_SINCE = (0, 12)


@dataclass(frozen=True)
class _Route:
    """How the producer's results reach the unpacking: `launch` is the call whose arguments are the kernel's
    inputs; `unpacked` the call whose results `statement` unpacks (the launch itself, a call of the kernel's name,
    or of the function returning the launch); `function` that function, which then takes the semaphore too."""

    launch: ast.Call
    statement: ast.Assign
    unpacked: ast.Call
    function: ast.FunctionDef | None = None


def _unpacking(model, call: ast.AST) -> ast.Assign | None:
    """The assignment whose whole value is `call`, unpacking its results into names."""
    statement = model.parents.get(call)
    if not (isinstance(call, ast.Call) and isinstance(statement, ast.Assign) and statement.value is call
            and len(statement.targets) == 1 and isinstance(statement.targets[0], (ast.Tuple, ast.List))
            and all(isinstance(t, ast.Name) for t in statement.targets[0].elts)):
        return None
    return statement


def _route(project, model, entry, bound=_unpacking) -> _Route | None:
    """Where the kernel's results are unpacked: the kernel built and called in one expression, or bound to a name
    (`produce = plgpu.kernel(...)`, bound once in its scope, named only by one call), that call being the whole
    value of a tuple assignment; or returned as a function's last statement, its only return
    (`def stage_a(self, x): return plgpu.kernel(...)(x)`), the function's one call being unpacked."""
    parent = model.parents.get(entry.node)
    if isinstance(parent, ast.Call) and parent.func is entry.node:
        launch = parent
    elif isinstance(parent, ast.Assign) and parent.value is entry.node and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        scope = model.enclosing_function(parent) or model.tree
        mentions = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
        loads = [n for n in mentions if isinstance(n.ctx, ast.Load)]
        if len(mentions) != 2 or len(loads) != 1 or (scope is model.tree
                                                     and project.importers_mentioning(model, name)):
            return None
        launch = model.parents.get(loads[0])
        if not (isinstance(launch, ast.Call) and launch.func is loads[0]):
            return None
    else:
        return None
    statement = bound(model, launch)
    if statement is not None:
        return _Route(launch, statement, launch)
    returned = model.parents.get(launch)
    function = model.enclosing_function(launch)
    if not (isinstance(returned, ast.Return) and isinstance(function, ast.FunctionDef) and function.body[-1] is returned
            and not function.decorator_list and [n for n in ast.walk(function) if isinstance(n, ast.Return)
                                                 and model.enclosing_function(n) is function] == [returned]):
        return None
    calls = [call for _, call, _, _, _ in project.evaluator.call_sites_with_nodes(model, function)]
    mentions = [n for n in ast.walk(model.tree) if (isinstance(n, ast.Name) and n.id == function.name) or (
        isinstance(n, ast.Attribute) and n.attr == function.name)]
    if len(calls) != 1 or [calls[0].func] != mentions or project.importers_mentioning(model, function.name):
        return None
    statement = bound(model, calls[0])
    return _Route(launch, statement, calls[0], function) if statement is not None else None


def _only_into_kernels(project, model, loads: list[ast.Name], launched: set[int], depth: int = 0) -> bool:
    """Is each load a positional argument of a kernel launch (`launched`), or of a function of this module (a
    method called through its instance) that only passes its parameter on so?"""
    for load in loads:
        call = model.parents.get(load)
        if not (isinstance(call, ast.Call) and load in call.args):
            return False
        if id(call) in launched:
            continue
        callee = project.evaluator.value(model, call.func)
        function = getattr(callee, "node", None)
        if depth or not (isinstance(callee, Func) and callee.model is model and isinstance(function, ast.FunctionDef)):
            return False
        args = function.args
        index = call.args.index(load) + (1 if getattr(callee, "self_value", None) is not None else 0)
        if args.posonlyargs or args.vararg or index >= len(args.args) or any(
                isinstance(a, ast.Starred) for a in call.args):
            return False
        parameter = args.args[index].arg
        inner = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == parameter]
        if not inner or any(not isinstance(n.ctx, ast.Load) for n in inner) or not _only_into_kernels(
                project, model, inner, launched, depth + 1):
            return False
    return True


def _shape_code(model, leaf: ast.AST, statement: ast.stmt, memtype: MemType) -> str:
    """alloc_semaphore's arguments: the REGULAR((n,)) shape as written where its names mean the same at the
    caller (`(CONSUMERS,)`), else spelled from its value."""
    if (isinstance(leaf, ast.Call) and len(leaf.args) == 1 and not leaf.keywords and memtype.shape
            and all(model.lookup(n.id, model.scope_of(leaf), leaf.lineno)
                    is model.lookup(n.id, model.scope_of(statement), statement.lineno)
                    for n in ast.walk(leaf.args[0]) if isinstance(n, ast.Name))):
        return f"({ast.get_source_segment(model.text, leaf.args[0])})"
    return f"({tuple_code(memtype.shape)})" if memtype.shape else "()"


def fix(project, model, finding):
    entry, out_type = finding.facts.get("entry"), finding.facts.get("out_type")
    if entry is None or entry.api != "plgpu.kernel" or entry.model is not model:
        return None
    route = _route(project, model, entry)
    if route is None or not isinstance(out_type, (ast.Tuple, ast.List)) or len(out_type.elts) < 2:
        return None
    launch, statement = route.launch, route.statement
    targets = statement.targets[0].elts
    leaf = out_type.elts[-1]
    if model.source.span(leaf) != finding.span or len(targets) != len(out_type.elts):
        return None
    memtype = as_memtype(project.evaluator.value(model, leaf))
    if not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore):
        return None
    version = jax_version(project)
    if version is not None and version < ALLOC_SEMAPHORE_SINCE:
        raise CannotFix(f"jax {'.'.join(map(str, version))} has no plgpu.alloc_semaphore")
    name = targets[-1].id
    host = model.enclosing_function(statement)
    scope = host if host is not None else model.tree
    mentions = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in mentions if isinstance(n.ctx, ast.Load)]
    launched = {id(other.call) for other in kernel_launches(project, model) if other.call is not launch}
    if len(mentions) - len(loads) != 1 or not loads or not _only_into_kernels(project, model, loads, launched):
        return None  # not only handed to other kernels: semaphore_out_of_out_type's cases, or none
    body = entry.body
    function = body.node if body is not None and getattr(body, "model", None) is model else None
    if not isinstance(function, ast.FunctionDef) or [
            e.node for e in launches(project, model, function)] != [entry.node]:
        raise CannotFix("the body is not a plain function launched only here")
    if _scratch_count(entry) != 0 or any(k.arg is None for k in entry.node.keywords):
        raise CannotFix("with scratch, the semaphore's parameter is not the body's last")
    args = function.args
    inputs = bound_before(entry.kernel.body) + len(launch.args)
    if args.posonlyargs or args.vararg or args.kwarg or args.defaults or launch.keywords or any(
            isinstance(a, ast.Starred) for a in launch.args) or len(args.args) != inputs + len(out_type.elts):
        raise CannotFix(f"which of {function.name}'s parameters take the inputs and outputs is not known")
    through = route.function
    if through is not None and (through.args.vararg or through.args.kwarg or through.args.kwonlyargs
                                or through.args.defaults or route.unpacked.keywords
                                or any(isinstance(a, ast.Starred) for a in route.unpacked.args)):
        raise CannotFix(f"where {through.name} would take the semaphore is not known")
    position = len(args.args) - 1
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition = file.function(function)
    sequence = file.find_ast(model, out_type, (cst.Tuple, cst.List))
    line = file.find_ast(model, statement, cst.SimpleStatementLine)
    if definition is None or sequence is None or line is None or len(line.body) != 1:
        raise CannotFix("the body, out_type or the unpacking was not found")
    plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
    allocate = cst.parse_statement(f"{name} = {plgpu}.alloc_semaphore{_shape_code(model, leaf, statement, memtype)}\n")
    kept_targets = ", ".join(t.id for t in targets[:-1])
    shift = len(ast.get_source_segment(model.text, statement.targets[0])) - len(kept_targets)

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = list(updated.params.params)
        moved = params[position].with_changes(comma=params[inputs].comma)
        params = _without_last(params)
        params.insert(inputs, moved)
        return updated.with_changes(params=updated.params.with_changes(params=params))

    def change_out_type(updated):
        elements = _without_last(list(updated.elements))
        if len(elements) == 1:
            return elements[0].value.with_changes(lpar=[], rpar=[])
        return updated.with_changes(elements=elements)

    def change_line(updated: cst.SimpleStatementLine):
        assign = updated.body[0]
        kept = _without_last(list(assign.targets[0].target.elements))
        target = kept[0].value if len(kept) == 1 else assign.targets[0].target.with_changes(elements=kept)
        new = assign.with_changes(targets=[assign.targets[0].with_changes(target=target)],
                                  value=_appended(assign.value, name))
        new = new.visit(_Dedent(shift, statement.col_offset))  # lines aligned to a bracket follow it
        return cst.FlattenSentinel([allocate.with_changes(leading_lines=updated.leading_lines),
                                    updated.with_changes(body=[new], leading_lines=[])])

    file.rewrite(definition, change_body)
    file.rewrite(sequence, change_out_type)
    file.rewrite(line, change_line)
    if through is not None:  # the function returning the launch takes the semaphore and passes it in
        parameter = unique_name(model, through, name)
        outer = file.function(through)
        inner = file.find_ast(model, launch, cst.Call)
        if outer is None or inner is None:
            raise CannotFix(f"{through.name} or its launch was not found")
        file.rewrite(inner, lambda updated: _appended(updated, parameter))
        file.rewrite(outer, lambda updated: updated.with_changes(params=updated.params.with_changes(
            params=[*updated.params.params[:-1], updated.params.params[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Param(cst.Name(parameter))]
            if updated.params.params else [cst.Param(cst.Name(parameter))])))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate {name} with plgpu.alloc_semaphore before the launch "
                       f"and pass it in, not as an output of {function.name}", "safe", preferred=True)


def _appended(call: cst.Call, name: str) -> cst.Call:
    """`call` with `name` as a last positional argument."""
    arguments = list(call.args)
    if arguments:
        arguments[-1] = arguments[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*arguments, cst.Arg(cst.Name(name))])


class _Dedent(cst.CSTTransformer):
    """Continuation lines aligned to a bracket of the statement move left by `shift` columns with it (those
    at most one indent deeper than the statement, a hanging indent, stay)."""

    def __init__(self, shift: int, column: int):
        super().__init__()
        self.shift, self.column = shift, column

    def leave_ParenthesizedWhitespace(self, original, updated):
        value = updated.last_line.value
        if self.shift > 0 and len(value) - self.shift > self.column + 4 and value[:self.shift].isspace():
            return updated.with_changes(last_line=cst.SimpleWhitespace(value[self.shift:]))
        return updated
