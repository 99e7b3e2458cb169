"""Fix (PAL008): a `get_global` made outside any kernel (in the function that launches the kernel, jitted or
not, or at module level) whose result only one kernel body reads, closing over it, moves into that body.

    DONE = pl.get_global(REGULAR)              def body(x_ref, o_ref):
                                                   DONE = pl.get_global(REGULAR)
    def body(x_ref, o_ref):               ->       pl.semaphore_signal(DONE)
        pl.semaphore_signal(DONE)

A global semaphore exists only inside a Mosaic GPU kernel (outside one: `Cannot lower jaxpr with effects`,
or at import `Evaluation rule for 'get_global' not implemented`); asked for in the body, it is the one
semaphore the launch's grid shares, which is what the closed-over name was meant to be. Only where the name
is bound once, every read of it is in one function of that scope (the body, or functions nested in it), that
function is the body of Mosaic GPU launches only, no importer names it (module level), and the type's names
mean in the body what they mean at the get_global. `get_global_into_kernel` covers a result passed to the
launch as an operand instead.
"""

from __future__ import annotations

import ast

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder, remove_statement, statement_with_comment
from .sites import launches

_MOSAIC_GPU = ("plgpu.kernel", "pl.kernel")


def _outermost_below(model, node: ast.AST, host: ast.AST | None) -> ast.AST | None:
    """The function holding `node` that is defined directly in `host` (None: the module)."""
    function = model.enclosing_function(node)
    while function is not None and model.enclosing_function(function) is not host:
        function = model.enclosing_function(function)
    return function


def fix(project, model, finding):
    call = finding.facts.get("get_global")
    if call is None or finding.facts.get("model") is not model:
        return None
    statement = model.parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and len(call.args) == 1 and not call.keywords):
        return None
    host = model.enclosing_function(call)
    if statement not in (host.body if isinstance(host, (ast.FunctionDef, ast.AsyncFunctionDef)) else model.tree.body):
        return None
    name = statement.targets[0].id
    scope = host if host is not None else model.tree
    mentions = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in mentions if isinstance(n.ctx, ast.Load)]
    if len(mentions) - len(loads) != 1 or not loads:
        return None  # bound more than once, or read nowhere (outside_kernel removes it)
    if any(model.lookup(name, model.scope_of(load), load.lineno) is not model.lookup(name, model.scope_of(call),
                                                                                       call.lineno) for load in loads):
        return None  # a read of another binding of the name
    bodies = {id(f): f for f in (_outermost_below(model, load, host) for load in loads)}
    if len(loads) == 1 and len(bodies) == 1 and isinstance(next(iter(bodies.values())), ast.Lambda):
        return _into_lambda(project, model, finding, statement, loads[0], next(iter(bodies.values())), host)
    if any(f is None or not isinstance(f, ast.FunctionDef) for f in bodies.values()):
        return None  # read where it is made (signalled outside the kernel): get_global_into_kernel says why not
    if len(bodies) != 1:
        raise CannotFix(f"{name} is read in several functions: which kernel it belongs in is not known")
    body = next(iter(bodies.values()))
    _check_body(project, model, call, name, body, body.name)
    if host is None and any(name in other.text for other in project.importers(model)):
        raise CannotFix(f"a module importing this one may name {name}")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    definition = file.function(body)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix("the body was not found")
    allocate = cst.parse_statement(statement_with_comment(builder, model, statement) + "\n")
    docstring = (isinstance(body.body[0], ast.Expr) and isinstance(body.body[0].value, ast.Constant)
                 and isinstance(body.body[0].value.value, str))

    # The body becomes the host's first statement: no blank line above it then.
    first = host is not None and host.body[:2] == [statement, body]

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        lines = list(updated.body.body)
        at = 1 if docstring else 0
        lines[at:at] = [allocate]
        return updated.with_changes(body=updated.body.with_changes(body=lines),
                                    **({"leading_lines": []} if first else {}))

    file.rewrite(definition, change_body)
    remove_statement(builder, model, statement, keep_comment=False)  # the comment moves with it
    where = host.name if host is not None else "at module level"
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for {name} in {body.name}, not "
                       f"{'in ' if host is not None else ''}{where}", "safe", preferred=True)


def _check_body(project, model, call: ast.Call, name: str, body: ast.AST, label: str) -> None:
    """CannotFix unless `body` is the body of Mosaic GPU launches only, where the type's names mean what they mean
    at the get_global and `name` is not bound."""
    entries = launches(project, model, body)
    if not entries or any(entry.api not in _MOSAIC_GPU for entry in entries):
        raise CannotFix(f"{label} is not the body of a Mosaic GPU kernel, which alone has global semaphores")
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and model.lookup(node.id, model.scope_of(call), call.lineno) is not \
                model.lookup(node.id, body, body.lineno):
            raise CannotFix(f"{node.id} means something else in {label}")
    if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
           or isinstance(n, ast.arg) and n.arg == name for n in ast.walk(body)):
        raise CannotFix(f"{label} binds {name} itself")


def _into_lambda(project, model, finding, statement: ast.Assign, load: ast.Name, body: ast.Lambda, host):
    """A lambda body (`lambda *refs: _axpy(done, *refs)`) reading the name once: the get_global is asked for there,
    in place of the name (a lambda has no statement to hold it)."""
    name, call = load.id, statement.value
    if host is None:
        raise CannotFix(f"the lambda reading {name} is at module level")
    _check_body(project, model, call, name, body, "the lambda")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, load, cst.Name)
    if target is None:
        raise CannotFix(f"{name} was not found in the lambda")
    code = model.segment(call, 10_000)
    file.rewrite(target, lambda updated: cst.parse_expression(code))
    remove_statement(builder, model, statement, keep_comment=False)
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for {name} in the kernel's lambda, not in {host.name}",
                       "safe", preferred=True)
