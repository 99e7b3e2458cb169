"""Fix (PAL001): a buffer or barrier asked of `pl.get_global` in a function that `pl.run_scoped` already runs
(`@functools.partial(pl.run_scoped, ...)`) is allocated by that run_scoped, with the others, as a new parameter.

    @functools.partial(pl.run_scoped,                      @functools.partial(pl.run_scoped,
                       out_smem=plgpu.SMEM(...),                              out_smem=plgpu.SMEM(...),
                       collective_axes="wg")          ->                      c_barrier=plgpu.Barrier(num_barriers=n),
    def _scope(out_smem):                                                     collective_axes="wg")
        c_barrier = pl.get_global(plgpu.Barrier(num_barriers=n))  def _scope(out_smem, c_barrier):
        ...                                                            ...

What the author of such a scope writes (jax's hopper_matmul_mgpu, tokamax): the scope's allocations are the
function's for its whole run, and collective over the scope's `collective_axes` as its other buffers are. The
type stays as written; only where its names mean the same at the decorator (none bound in the function), the
get_global is `name = pl.get_global(T)` in the function's own body, the name bound nowhere else there, and the
function takes no `*args`, `**kwargs` or positional-only parameters.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import site_interpreter
from ..analysis.values import Api, MemType
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder, add_parameter, appended, check_parameters, remove_statement
from .sites import launches_running

_SCOPED_SPACES = {"smem", "tmem", "regs", "vmem"}  # what run_scoped allocates per block (and barriers)


def _run_scoped_decorator(project, model, function: ast.FunctionDef) -> ast.Call | None:
    """`function`'s `functools.partial(pl.run_scoped, ...)` decorator."""
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and decorator.args):
            continue
        partial = project.evaluator.value(model, decorator.func)
        first = project.evaluator.value(model, decorator.args[0])
        if isinstance(partial, Api) and partial.name == "functools.partial" and isinstance(first, Api) \
                and first.name == "pl.run_scoped":
            return decorator
    return None


def _run_scoped_call(project, model, function: ast.FunctionDef) -> ast.Call | None:
    """The one `pl.run_scoped(function, T1, ...)` call that runs `function` (written beside it, in the same
    scope), where the function is named nowhere else: what it allocates is the function's alone."""
    scope = model.scope_of(function)
    mentions = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == function.name
                and isinstance(n.ctx, ast.Load)]
    if len(mentions) != 1 or len(model.scopes[scope].bindings.get(function.name, [])) != 1:
        return None
    call = model.parents.get(mentions[0])
    if not (isinstance(call, ast.Call) and call.args and call.args[0] is mentions[0]
            and model.scope_of(call) is scope):
        return None
    runner = project.evaluator.value(model, call.func)
    if not (isinstance(runner, Api) and runner.name == "pl.run_scoped"):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    return call


def fix(project, model, call, value, code: str):
    if code != "PAL001" or not isinstance(value, MemType):
        return None
    if not (value.space in _SCOPED_SPACES or "Barrier" in value.constructor):
        return None
    function = model.enclosing_function(call)
    if not isinstance(function, ast.FunctionDef):
        return None
    decorator = _run_scoped_decorator(project, model, function) or _run_scoped_call(project, model, function)
    if decorator is None:
        return None
    called = decorator.args[0] is not function and not function.decorator_list
    if "Barrier" in value.constructor and any(
            site_interpreter(project, e, site) == "hlo" for e in launches_running(project, model, function)
            for site in [*e.interpret, *e.maybe_interpret]):
        raise CannotFix("interpret=True runs no barrier (jax 0.12: 'NotImplementedError: barrier')")
    statement = model.parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement in function.body):
        raise CannotFix("the get_global is not `name = pl.get_global(...)` in the run_scoped function's own body")
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        raise CannotFix("get_global has no plain argument")
    check_parameters(function)
    name = statement.targets[0].id
    stores = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name
              and not isinstance(n.ctx, ast.Load)]
    parameters = [a.arg for a in function.args.args + function.args.kwonlyargs]
    if len(stores) != 1 or name in parameters:
        raise CannotFix(f"{name} is bound more than once in {function.name}")
    if any(k.arg == name for k in decorator.keywords):
        raise CannotFix(f"the run_scoped of {function.name} already allocates a {name}")
    where = (model.scope_of(decorator), decorator.lineno) if called else (model.scope_of(function), function.lineno)
    for node in ast.walk(call.args[0]):
        if isinstance(node, ast.Name) and model.lookup(node.id, model.scope_of(call), call.lineno) is not \
                model.lookup(node.id, *where):
            raise CannotFix(f"{node.id} means something else at the run_scoped of {function.name}")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    partial = file.find_ast(model, decorator, cst.Call)
    if partial is None:
        raise CannotFix("the run_scoped decorator was not found")
    positional = called and all(k.arg == "collective_axes" for k in decorator.keywords)
    if called and positional and (len(decorator.args) - 1 != len(function.args.args) or function.args.defaults):
        raise CannotFix(f"the run_scoped's types do not line up with {function.name}'s parameters")
    type_code = ast.get_source_segment(model.text, call.args[0]) or ast.unparse(call.args[0])

    def allocate(updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        new = cst.Arg(expression(type_code), keyword=cst.Name(name),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
        if called and positional:  # `pl.run_scoped(staged, T1, T2)`: the types line up with the parameters
            new = cst.Arg(expression(type_code))
        at = next((n for n, arg in enumerate(args) if arg.keyword is not None
                   and arg.keyword.value == "collective_axes"), None)
        if at is None:
            return updated.with_changes(args=appended(args, new))
        return updated.with_changes(args=[*args[:at], new.with_changes(comma=args[at - 1].comma), *args[at:]])

    file.rewrite(partial, allocate)
    remove_statement(builder, model, statement)
    add_parameter(builder, model, function, name, None)
    return builder.fix(f"pallas-lsp ({code}): Allocate {name} in the pl.run_scoped that runs {function.name}",
                       "safe", preferred=True)
