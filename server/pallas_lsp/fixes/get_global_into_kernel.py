"""Fix (PAL008): a `get_global` called outside any kernel, whose result is only passed into one kernel
launch, moves into that kernel's body.

    def body(x_ref, sem_ref, o_ref):              def body(x_ref, o_ref):
        pl.semaphore_signal(sem_ref)                  sem_ref = pl.get_global(REGULAR)
                                          ->          pl.semaphore_signal(sem_ref)
    @jax.jit                                      @jax.jit
    def run(x):                                   def run(x):
        sem = pl.get_global(REGULAR)                  return kernel(x)
        return kernel(x, sem)

A global semaphore exists only inside a Mosaic GPU kernel (`Cannot lower jaxpr with effects:
{SemaphoreEffect}` outside one), and a kernel takes none as an operand: the body asking for it
itself is the one way to give the launch that semaphore. The body's parameter keeps its name. Only
where the result is bound once and used only as one positional argument of one launch, the body
is a plain function of this module run by that launch alone (the semaphore's parameter without a
default), and the type's names are module-level
(or star-imported), or local names bound once for it alone, whose assignment moves along. A result bound
into the body with `functools.partial(body, ..., sem)` (the partial launched, or a name assigned it once)
counts as passed into that launch: the partial loses the argument and the body the parameter, where nothing
else names the body. The launch may be a call of a wrapper that only forwards its `*operands` to it
(`_through_wrapper`).
Where the result is used otherwise (signalled or read outside the kernel) no fix: which kernel, and
which part of it, the code was meant for is not known.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import kernel_launches
from ..analysis.kernels import unwrap_function
from ..analysis.launches import forwarding_call, forwards_to_launch
from ..analysis.values import Api
from .kernel_edits import CannotFix, FixBuilder, remove_statement, statement_with_comment, without_argument
from .sites import bound_before, launches

_MOSAIC_GPU = ("plgpu.kernel", "pl.kernel")  # a pl.kernel on another mesh: the re-analysis refuses it


def _moved_definitions(model, host: ast.FunctionDef, call: ast.Call, body: ast.FunctionDef) -> list[ast.Assign]:
    """The assignments in `host` that the type's local names need, moved into the body with the get_global
    (`what = plgpu.SemaphoreType.REGULAR` bound once and read only there); every other name must mean in the
    body what it means at the call (a module-level name, a star-imported one, a builtin)."""
    moved: list[ast.Assign] = []

    def check(expression: ast.expr, at: ast.AST, depth: int) -> None:
        for node in ast.walk(expression):
            if not isinstance(node, ast.Name):
                continue
            binding = model.lookup(node.id, model.scope_of(at), at.lineno)
            if binding is model.lookup(node.id, body, body.lineno) and (binding is None or
                                                                       binding is model.module_binding(node.id)):
                continue
            statement = binding.node if binding is not None else None
            if (depth == 0 and isinstance(statement, ast.Assign) and statement in host.body
                    and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                    and _only_use(model, host, node.id) is node):
                check(statement.value, statement, depth + 1)
                moved.append(statement)
                continue
            raise CannotFix(f"{node.id} is not a module-level name the body sees")

    check(call.args[0], call, 0)
    return sorted(moved, key=lambda s: s.lineno)


def _launched_partial(project, model, launch) -> ast.Call | None:
    """The `functools.partial(body, ...)` call a launch runs as its body (written in the launch, or a name of the
    launch's function assigned it once, only there), or None."""
    kernel = launch.kernel.node
    written = kernel.args[0] if isinstance(kernel, ast.Call) and kernel.args else None
    if isinstance(written, ast.Name):
        binding = model.lookup(written.id, model.scope_of(written), written.lineno)
        host = model.enclosing_function(written)
        if (binding is None or binding.kind != "assign" or host is None
                or _only_use(model, host, written.id) is not written):
            return None
        written = binding.value
    if not (isinstance(written, ast.Call) and written.args and isinstance(written.args[0], ast.Name)):
        return None
    callee = project.evaluator.value(model, written.func)
    return written if isinstance(callee, Api) and callee.name == "functools.partial" else None


def _only_use(model, function: ast.FunctionDef, name: str) -> ast.Name | None:
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in uses if isinstance(n.ctx, ast.Load)]
    return loads[0] if len(uses) == 2 and len(loads) == 1 else None


def _through_wrapper(project, model, call: ast.Call) -> tuple[ast.Call, int]:
    """(the launch, the operands it passes before the wrapper's) for a call of a wrapper that only forwards its
    `*operands` to a launch (`def body(*operands): return body_kernel(zeros, *operands)`, as PAL001's fix
    writes one). The wrapper must be called here only: another call would lose its semaphore operand."""
    wrapper = project.evaluator.value(model, call.func)
    inner = forwarding_call(wrapper.node)
    callers = [c for source in [model, *project.importers(model)] for c in source.calls
               if c is not call and getattr(project.evaluator.value(source, c.func), "node", None) is wrapper.node]
    if callers:
        raise CannotFix(f"{wrapper.node.name} is called elsewhere too, where the semaphore operand would be lost")
    starred = next(i for i, a in enumerate(inner.args) if isinstance(a, ast.Starred))
    return inner, starred


def fix(project, model, finding):
    call = finding.facts.get("get_global")
    if call is None or finding.facts.get("model") is not model or "jit" not in finding.facts:
        return None
    host = model.enclosing_function(call)
    statement = model.parents.get(call)
    if not (isinstance(host, ast.FunctionDef) and isinstance(statement, ast.Assign) and statement.value is call
            and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and statement in host.body and len(call.args) == 1 and not call.keywords):
        return None
    use = _only_use(model, host, statement.targets[0].id)
    passed_to = model.parents.get(use) if use is not None else None  # the launch, or the partial binding the body
    keyword = passed_to if isinstance(passed_to, ast.keyword) and passed_to.arg else None  # partial(body, sem=sem)
    if keyword is not None:
        passed_to = model.parents.get(keyword)
    run_call, forwarded = passed_to, 0
    if keyword is None and isinstance(passed_to, ast.Call) and use in passed_to.args \
            and forwards_to_launch(project, model, passed_to):
        run_call, forwarded = _through_wrapper(project, model, passed_to)
    found = [launch for launch in kernel_launches(project, model) if launch.call is run_call] if not keyword else []
    bound = [launch for launch in kernel_launches(project, model) if _launched_partial(project, model, launch)
             is passed_to] if passed_to is not None and not found else []
    if not (found or bound) or (use not in passed_to.args and keyword is None):
        raise CannotFix("the semaphore is used outside the kernel, not only passed into one launch: which kernel "
                        "code it was meant for is not known")
    launch = (found or bound)[0]
    if launch.kernel.api not in _MOSAIC_GPU:
        raise CannotFix("only a Mosaic GPU kernel has a global semaphore")
    body = unwrap_function(launch.kernel.body)
    function = body.node if body is not None and body.model is model else None
    if not isinstance(function, ast.FunctionDef):
        raise CannotFix("the kernel body is not a function of this module")
    entries = launches(project, model, function)
    runs = [l for source in [model, *project.importers(model)] for l in kernel_launches(project, source)
            if any(l.kernel.node is e.kernel.node for e in entries)]
    if len(entries) != 1 or [l.call for l in runs] != [launch.call]:
        raise CannotFix(f"{function.name} is run by other launches too")
    if bound and ([n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == function.name]
                  != [passed_to.args[0]] or project.importers_mentioning(model, function.name)):
        raise CannotFix(f"{function.name} is named elsewhere too, where its parameters would no longer fit")
    args = function.args
    if keyword is not None:  # the parameter of that name, positional-or-keyword or keyword-only
        names = [a.arg for a in (*args.args, *args.kwonlyargs)]
        position = names.index(keyword.arg) if keyword.arg in names else len(names)
        if args.posonlyargs or args.kwarg or position == len(names) or any(
                isinstance(a, ast.Starred) for a in passed_to.args):
            raise CannotFix(f"which parameter of {function.name} takes the semaphore is not known")
    else:
        position = (bound_before(launch.kernel.body) + forwarded + passed_to.args.index(use) if found
                    else passed_to.args.index(use) - 1)  # functools.partial(body, ..., sem): body's own parameter
        if args.posonlyargs or args.vararg or any(isinstance(a, ast.Starred) for a in passed_to.args) or \
                position >= len(args.args) - len(args.defaults):  # a defaulted parameter may take no operand
            raise CannotFix(f"which parameter of {function.name} takes the semaphore is not known")
    launch_call = passed_to
    moved = _moved_definitions(model, host, call, function)
    param = [*args.args, *args.kwonlyargs][position].arg
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition = file.function(function)
    target = file.find_ast(model, launch_call, cst.Call)
    if definition is None or target is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix("the body or the launch was not found")
    argument_index = (len(launch_call.args) + launch_call.keywords.index(keyword) if keyword is not None
                      else launch_call.args.index(use))
    allocate = cst.parse_statement(
        f"{param} = {imports.name('jax.experimental.pallas')}.get_global({ast.get_source_segment(model.text, call.args[0])})\n")
    definitions = [cst.parse_statement(statement_with_comment(builder, model, d) + "\n") for d in moved]
    docstring = (isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant)
                 and isinstance(function.body[0].value.value, str))

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        lines = list(updated.body.body)
        at = 1 if docstring else 0
        lines[at:at] = [*definitions, allocate]
        body = updated.body.with_changes(body=lines)
        if position >= len(args.args):  # keyword-only
            kept = [p for p in updated.params.kwonly_params if p.name.value != param]
            if not kept:  # the bare `*` goes with the last keyword-only parameter
                params = list(updated.params.params)
                if params:
                    params[-1] = params[-1].with_changes(comma=updated.params.kwonly_params[-1].comma)
                return updated.with_changes(params=updated.params.with_changes(
                    params=params, kwonly_params=[], star_arg=cst.MaybeSentinel.DEFAULT), body=body)
            if kept[-1] is not updated.params.kwonly_params[-1]:
                kept[-1] = kept[-1].with_changes(comma=updated.params.kwonly_params[-1].comma)
            return updated.with_changes(params=updated.params.with_changes(kwonly_params=kept), body=body)
        params = list(updated.params.params)
        removed = params.pop(position)
        if position == len(params) and params:
            params[-1] = params[-1].with_changes(comma=removed.comma)
        return updated.with_changes(params=updated.params.with_changes(params=params), body=body)

    file.rewrite(definition, change_body)
    file.rewrite(target, lambda updated: without_argument(updated, argument_index))
    remove_statement(builder, model, statement)
    for definition in moved:
        remove_statement(builder, model, definition, keep_comment=False)
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for {param} in {function.name}, not in {host.name}",
                       "safe", preferred=True)
