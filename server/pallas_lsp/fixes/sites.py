"""Where a `get_global` call sits: the kernel body around it, and every launch of that body.

A fix moves the buffer out of the body and into its launches, so it needs all of them: in this
module and in workspace modules that import it (a body and its `pallas_call` often live apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from ..analysis.kernels import EntryPoint, KernelIndex
from ..analysis.values import Func, Partial
from .cst_locate import CannotFix


@dataclass
class GlobalUse:
    """A `get_global` call directly in a kernel body, and the name its result is bound to."""

    model: object
    call: ast.Call
    function: ast.FunctionDef
    statement: ast.Assign | None  # `name = pl.get_global(...)`, removed by the fix
    name: str | None


def global_use(model, call: ast.Call) -> GlobalUse | None:
    function = model.enclosing_function(call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    parent = model.parents.get(call)
    if (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)):
        name = parent.targets[0].id
        bindings = model.scopes[function].bindings.get(name, [])
        if len(bindings) == 1:  # bound only here: the parameter can take the name
            return GlobalUse(model, call, function, parent, name)
    return GlobalUse(model, call, function, None, None)


def launches(project, model, function: ast.AST) -> list[EntryPoint]:
    """Entry points whose body is `function` (bare or in `functools.partial`)."""
    found = []
    for source in [model, *project.importers(model)]:
        for entry in KernelIndex.of(project, source).entries:
            body = entry.body
            if body is not None and body.node is function and entry not in found:
                found.append(entry)
    return found


def bound_positional(entry: EntryPoint) -> int | None:
    """Positional arguments bound before the kernel's own (`functools.partial`'s, a method's `self`)."""
    count, value = 0, entry.kernel.body
    while isinstance(value, Partial):
        count += len(value.args)
        value = value.func
    if isinstance(value, Func) and value.self_value is not None:
        count += 1  # a bound method: `self` comes first
    return count


def grid_rank(entry: EntryPoint) -> tuple[int | None, int | None]:
    """(rank, number of blocks) of the launch grid; (0, 1) without one; None where unknown."""
    from ..analysis.values import Const, Seq

    found = entry.kernel.kwarg("grid")
    if found is None:
        return 0, 1
    value = found[0]
    if isinstance(value, Const) and type(value.value) is int:
        return 1, value.value
    if isinstance(value, Seq):
        sizes = [v.value if isinstance(v, Const) and type(v.value) is int else None for v in value.items]
        blocks = 1
        for size in sizes:
            blocks = None if size is None or blocks is None else blocks * size
        return len(sizes), blocks
    return None, None


def is_call_form(entry: EntryPoint) -> bool:
    return isinstance(entry.node, ast.Call) and entry.kernel.node is entry.node and entry.body is not None \
        and not _is_decorator(entry)


def _is_decorator(entry: EntryPoint) -> bool:
    parent = entry.model.parents.get(entry.node)
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and entry.node in parent.decorator_list


def decorated_function(entry: EntryPoint) -> ast.AST | None:
    parent = entry.model.parents.get(entry.node)
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and entry.node in parent.decorator_list:
        return parent
    return None


def interpreted_anywhere(project, model, function: ast.AST) -> bool:
    """True when some kernel launched in this module or its importers runs `function` interpreted."""
    from ..analysis.kernels import reachable_functions

    for source in [model, *project.importers(model)]:
        for entry in KernelIndex.of(project, source).entries:
            if entry.interpret and entry.body is not None and any(
                    f.node is function for f in reachable_functions(project, entry.body)):
                return True
    return False


@dataclass
class Plan:
    """Where a moved buffer's parameter goes: the launched bodies that take it (with their launches)
    and, when the get_global sits in a helper the bodies call, that helper and its calls, which pass
    the bodies' new parameter on."""

    use: GlobalUse
    bodies: list[tuple[object, ast.FunctionDef, list[EntryPoint]]]  # (module model, body, launches)
    helper: ast.FunctionDef | None = None
    calls: list[tuple[object, ast.Call]] = field(default_factory=list)  # (module model, call of the helper)

    @property
    def entries(self) -> list[EntryPoint]:
        return [entry for _, _, entries in self.bodies for entry in entries]


def plan(project, model, use: GlobalUse) -> Plan | None:
    """The bodies a fix gives the buffer to: the function holding the get_global if it is launched;
    else the launched body it is nested in (the parameter reaches it as a closure variable); else the
    launched bodies calling it (a helper, here or in another workspace module). None if none is."""
    entries = single_body_launches(project, model, use.function)
    if entries:
        return Plan(use, [(model, use.function, entries)])
    outer = model.enclosing_function(use.function)
    while isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        entries = single_body_launches(project, model, outer)
        if entries:
            if use.name is None or bound_elsewhere(outer, use):
                raise CannotFix(f"{use.name or 'the buffer'} is bound more than once in {outer.name}")
            return Plan(replace(use, function=outer), [(model, outer, entries)])
        outer = model.enclosing_function(outer)
    if not isinstance(use.function, ast.FunctionDef) or model.enclosing_function(use.function) is not None:
        return None
    calls = helper_calls(project, model, use.function)
    if not calls:
        return None
    bodies: list = []
    for source, call in calls:
        body = source.enclosing_function(call)
        found = single_body_launches(project, source, body) if isinstance(body, ast.FunctionDef) else []
        if not found:
            raise CannotFix(f"{use.function.name} is called outside a kernel body")
        if not any(b is body for _, b, _ in bodies):
            bodies.append((source, body, found))
    return Plan(use, bodies, helper=use.function, calls=calls)


def single_body_launches(project, model, function: ast.AST) -> list[EntryPoint]:
    """`launches`, refused (CannotFix) where a launch picks its body at run time (`BODIES[name]`,
    a conditional): its new operand or scratch would reach the other bodies too."""
    from ..analysis.values import OneOf

    entries = launches(project, model, function)
    for entry in entries:
        if is_call_form(entry) and entry.node.args:
            value = project.evaluator.value(entry.model, entry.node.args[0])
            if isinstance(value, OneOf) or isinstance(entry.node.args[0], (ast.Subscript, ast.IfExp)):
                raise CannotFix("the launch picks its body at run time")
    return entries


def bound_elsewhere(function: ast.AST, use: GlobalUse) -> bool:
    """True when the variable's name is bound anywhere in `function` other than by the get_global."""
    targets = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == use.name
               and not isinstance(n.ctx, ast.Load)]
    arguments = [a for a in ast.walk(function) if isinstance(a, ast.arg) and a.arg == use.name]
    return len(targets) != 1 or bool(arguments)


def helper_calls(project, model, helper: ast.FunctionDef) -> list[tuple[object, ast.Call]]:
    """Every call of a module-level helper, here and in the workspace modules importing it; CannotFix
    when it is also used otherwise (passed on, stored), where a new parameter would go unfilled."""
    from ..analysis.values import Func

    found = []
    for source in [model, *project.importers(model)]:
        calls = []
        for call in source.calls_named(helper.name):
            value = project.evaluator.value(source, call.func)
            if isinstance(value, Func) and value.node is helper:
                if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                    raise CannotFix(f"a call of {helper.name} unpacks its arguments")
                calls.append(call)
        called = {id(call.func) for call in calls}
        for node in ast.walk(source.tree):
            named = (isinstance(node, ast.Name) and node.id == helper.name and isinstance(node.ctx, ast.Load)) or (
                isinstance(node, ast.Attribute) and node.attr == helper.name)
            if named and id(node) not in called:
                value = project.evaluator.value(source, node)
                if isinstance(value, Func) and value.node is helper:
                    raise CannotFix(f"{helper.name} is used other than by calling it")
        found += [(source, call) for call in calls]
    return found
