"""Where a `get_global` call sits: the kernel body around it, and every launch of that body.

A fix moves the buffer out of the body and into its launches, so it needs all of them: in this
module and in workspace modules that import it (a body and its `pallas_call` often live apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from ..analysis.kernels import EntryPoint, KernelIndex, reachable_functions
from ..analysis.values import Func, Partial
from .cst_locate import CannotFix
from .traced_once import refuse_allocated_in_loop, refuse_helper_called_twice, refuse_nested_traced_twice


@dataclass
class GlobalUse:
    """A `get_global` call directly in a kernel body, and the name its result is bound to."""

    model: object
    call: ast.Call
    function: ast.FunctionDef
    statement: ast.Assign | None  # `name = pl.get_global(...)`, removed by the fix
    name: str | None
    # `get = lambda: pl.get_global(...)` when the call is in a lambda called once as `name = get()`
    # (`statement`): removed by the fix as well.
    lambda_statement: ast.Assign | None = None


def global_use(model, call: ast.Call) -> GlobalUse | None:
    function = model.enclosing_function(call)
    if isinstance(function, ast.Lambda):
        found = _lambda_use(model, call, function)
        if found is None:
            raise CannotFix("the get_global is in a lambda, and not one bound to a name that is called once, "
                            "outside loops (`get = lambda: pl.get_global(...)`, `sem = get()`), so its buffer "
                            "has no one place")
        return found
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


def _single_name_assign(node: ast.AST | None, value: ast.AST) -> str | None:
    if (isinstance(node, ast.Assign) and node.value is value and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return node.targets[0].id
    return None


def _lambda_use(model, call: ast.Call, function: ast.Lambda) -> GlobalUse | None:
    """`get = lambda: pl.get_global(T)` (or `lambda what=T: pl.get_global(what)`) in a function that calls
    `get` once, `sem = get()`, outside any loop: the lambda is the get_global written another way, so the
    buffer is `sem` there."""
    args = function.args
    if (function.body is not call or args.posonlyargs or len(args.defaults) != len(args.args) or args.vararg
            or args.kwonlyargs or args.kwarg):
        return None  # parameters with defaults only (`lambda what=T: ...`): the call below passes none
    assign = model.parents.get(function)
    getter = _single_name_assign(assign, function)
    outer = model.enclosing_function(function)
    if getter is None or not isinstance(outer, ast.FunctionDef) or len(model.scopes[outer].bindings.get(getter, [])) != 1:
        return None
    loads = [n for n in ast.walk(outer) if isinstance(n, ast.Name) and n.id == getter and isinstance(n.ctx, ast.Load)]
    if len(loads) != 1:
        return None
    called = model.parents.get(loads[0])
    if not (isinstance(called, ast.Call) and called.func is loads[0] and not called.args and not called.keywords):
        return None
    statement = model.parents.get(called)
    name = _single_name_assign(statement, called)
    if name is None or len(model.scopes[outer].bindings.get(name, [])) != 1:
        return None
    node = statement
    while node is not outer:
        node = model.parents.get(node)
        if node is None or isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.Lambda, ast.FunctionDef,
                                             ast.AsyncFunctionDef, ast.ClassDef)) and node is not outer:
            return None  # traced more than once, or not by `outer`
    return GlobalUse(model, call, outer, statement, name, assign)


def launches(project, model, function: ast.AST) -> list[EntryPoint]:
    """Entry points whose body is (or may be, when picked from a dict at run time) `function` (bare
    or in `functools.partial`)."""
    found = []
    for source in [model, *project.importers(model)]:
        for entry in KernelIndex.of(project, source).entries:
            if entry not in found and any(body is function for body in possible_bodies(entry)):
                found.append(entry)
    return found


def possible_bodies(entry: EntryPoint) -> list[ast.AST]:
    """The body's function, or each function a launch may pick at run time from a dict of bodies."""
    if entry.body is not None:
        return [entry.body.node]
    return dict_of_bodies(entry) or []


def bound_positional(entry: EntryPoint) -> int | None:
    """Positional arguments bound before the kernel's own (`functools.partial`'s, a method's `self`)."""
    return bound_before(entry.kernel.body)


def bound_before(body) -> int:
    """`bound_positional` of a kernel's body value."""
    count, value = 0, body
    while isinstance(value, Partial):
        count += len(value.args)
        value = value.func
    if isinstance(value, Func) and value.self_value is not None:
        count += 1  # a bound method: `self` comes first
    return count


def keyword_bound(body) -> set[str]:
    """The parameters a kernel's body value binds by keyword (`functools.partial(kernel, config=config)`): the
    refs JAX passes by position must come before them."""
    names, value = set(), body
    while isinstance(value, Partial):
        names.update(name for name, _ in value.kwargs)
        value = value.func
    return names


def grid_rank(entry: EntryPoint) -> tuple[int | None, int | None]:
    """(rank, number of blocks) of the launch grid; (0, 1) without one; None where unknown."""
    from ..analysis.values import Const, Seq, Spec

    found = entry.kernel.kwarg("grid")
    if found is None:
        spec = entry.kernel.kwarg("grid_spec")  # `grid_spec=pl.GridSpec(grid=...)` carries it instead
        if spec is None:
            return 0, 1
        value = spec[0].get("grid") if isinstance(spec[0], Spec) else None
        if value is None:
            return (0, 1) if isinstance(spec[0], Spec) else (None, None)
    else:
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


def launches_running(project, model, function: ast.AST, interpreted: bool = False) -> list[EntryPoint]:
    """Every launch, in this module or one importing it, that runs `function` (reaches it from its body);
    with `interpreted`, only those that run it interpreted."""
    found = []
    for source in [model, *project.importers(model)]:
        for entry in KernelIndex.of(project, source).entries:
            if (entry.interpret or not interpreted) and entry.body is not None and any(
                    f.node is function for f in reachable_functions(project, entry.body)):
                found.append(entry)
    return found


def interpreted_anywhere(project, model, function: ast.AST) -> bool:
    """True when some kernel launched in this module or its importers runs `function` interpreted."""
    return bool(launches_running(project, model, function, interpreted=True))


@dataclass
class Plan:
    """Where a moved buffer's parameter goes: the launched bodies that take it (with their launches)
    and, when the get_global sits in a helper the bodies call, that helper and its calls, which pass
    the bodies' new parameter on."""

    use: GlobalUse
    bodies: list[tuple[object, ast.FunctionDef, list[EntryPoint]]]  # (module model, body, launches)
    helper: ast.FunctionDef | None = None
    calls: list[tuple[object, ast.Call]] = field(default_factory=list)  # (module model, call of the helper)
    # Other bodies the same launches may pick (`BODIES[name]`): they take the new parameter, unused.
    siblings: list[tuple[object, ast.FunctionDef]] = field(default_factory=list)
    # (module model, closure, body): a closure calling the helper, defined beside the launched body in the factory
    # that makes both and used only inside the body (a pipeline's step); it moves into the body, to see its parameter.
    moved: list[tuple[object, ast.FunctionDef, ast.FunctionDef]] = field(default_factory=list)
    # The function holding the get_global is no body, but one the launches reach through calls (a method of an
    # object the body calls, a table's function): a `local` plan, its buffer allocated where it is.
    reached: bool = False

    @property
    def entries(self) -> list[EntryPoint]:
        """Each launch once, though several bodies it may pick call the helper."""
        found: list[EntryPoint] = []
        for _, _, entries in self.bodies:
            found += [entry for entry in entries if not any(entry is f for f in found)]
        return found


def plan(project, model, use: GlobalUse, local: bool = False) -> Plan | None:
    """The bodies a fix gives the buffer to: the function holding the get_global if it is launched;
    else the launched body it is nested in (the parameter reaches it as a closure variable); else the
    launched bodies calling it (a helper, here or in another workspace module). CannotFix if none is.
    `local`: the fix allocates the buffer where the get_global is (run_scoped), so the use stays in its own
    function, and another binding of its name in the launched body (each `pl.when` branch's own) is no matter."""
    siblings: list = []
    if not local:
        refuse_allocated_in_loop(model, use)
    entries = single_body_launches(project, model, use.function, siblings)
    if entries:
        return Plan(use, [(model, use.function, entries)], siblings=siblings)
    outer = model.enclosing_function(use.function)
    while isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        entries = single_body_launches(project, model, outer, siblings)
        if entries:
            if local:
                return Plan(use, [(model, outer, entries)], siblings=siblings)
            if use.name is None or bound_elsewhere(outer, use):
                raise CannotFix(f"{use.name or 'the buffer'} is bound more than once in {outer.name}")
            refuse_nested_traced_twice(model, use, outer)
            return Plan(replace(use, function=outer), [(model, outer, entries)], siblings=siblings)
        outer = model.enclosing_function(outer)
    unlaunched = ("no kernel launch runs the function holding the get_global (it is no kernel body, is not "
                  "nested in one, and is no helper that kernel bodies call)")
    if local:  # the buffer stays in its function: what matters is which launches run it, through any call
        entries = launches_running(project, model, use.function)
        if entries:
            return Plan(use, [(model, use.function, entries)], reached=True)
    if not isinstance(use.function, ast.FunctionDef) or model.enclosing_function(use.function) is not None:
        raise CannotFix(unlaunched)
    entries = forwarding_launches(project, model, use.function)
    if entries:
        return Plan(use, [(model, use.function, entries)])
    calls = helper_calls(project, model, use.function)
    if not calls:
        raise CannotFix(unlaunched)
    refuse_helper_called_twice(model, use, calls)
    bodies: list = []
    siblings = []  # other bodies the launches may pick (`BODIES[name]`): those not calling the helper
    moved: list = []
    for source, call in calls:
        caller = source.enclosing_function(call)
        body, found = _launched_around(project, source, caller, siblings)
        if not found:
            body, found = _body_beside(project, source, caller, siblings)
            if not found:
                raise CannotFix(f"{use.function.name} is called outside a kernel body")
            if not any(c is caller for _, c, _ in moved):
                moved.append((source, caller, body))
        if not any(b is body for _, b, _ in bodies):
            bodies.append((source, body, found))
    siblings = [(m, f) for m, f in dict.fromkeys(siblings) if not any(f is b for _, b, _ in bodies)]
    return Plan(use, bodies, helper=use.function, calls=calls, siblings=siblings, moved=moved)


def _body_beside(project, model, closure, siblings: list) -> tuple[ast.AST | None, list[EntryPoint]]:
    """(the launched body, its launches) for a closure defined beside it in the function that makes both
    (`def compute(...)` then `def body(...)` handing `compute` to `plgpu.emit_pipeline_warp_specialized`), where
    the closure's name is read only inside that body, and the body binds no name the closure reads from outside:
    nested in the body, the closure means the same and sees the body's parameters."""
    factory = model.enclosing_function(closure) if isinstance(closure, ast.FunctionDef) else None
    if not isinstance(factory, ast.FunctionDef) or closure not in factory.body \
            or len(model.scopes[factory].bindings.get(closure.name, [])) != 1:
        return None, []
    reads = [n for n in ast.walk(factory) if isinstance(n, ast.Name) and n.id == closure.name]
    later = [f for f in factory.body[factory.body.index(closure) + 1:] if isinstance(f, ast.FunctionDef)]
    for body in later:
        inside = {id(n) for n in ast.walk(body)}
        if not reads or any(id(n) not in inside for n in reads) or closure.name in model.scopes[body].bindings:
            continue
        free = {n.id for n in ast.walk(closure) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                and n.id not in model.scopes[closure].bindings}
        if free & set(model.scopes[body].bindings):
            return None, []  # the body binds a name the closure reads from the factory: nested, it would change
        found = single_body_launches(project, model, body, siblings)
        return (body, found) if found else (None, [])
    return None, []


def forwarded_refs_call(lambda_node: ast.AST) -> ast.Call | None:
    """`F(a, b, *refs)`, the body of a launched `lambda *refs: F(a, b, *refs)`: the lambda hands JAX's refs on
    to `F` after the arguments it binds, as `functools.partial(F, a, b)` would. None for another lambda."""
    if not isinstance(lambda_node, ast.Lambda):
        return None
    spec, call = lambda_node.args, lambda_node.body
    if (spec.vararg is None or spec.args or spec.posonlyargs or spec.kwonlyargs or spec.kwarg
            or not isinstance(call, ast.Call) or not call.args or any(k.arg is None for k in call.keywords)):
        return None
    last = call.args[-1]
    if not (isinstance(last, ast.Starred) and isinstance(last.value, ast.Name) and last.value.id == spec.vararg.arg):
        return None
    names = [n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id == spec.vararg.arg]
    if len(names) != 1 or any(isinstance(a, ast.Starred) for a in call.args[:-1]):
        return None
    return call


def named_refs_call(lambda_node: ast.AST) -> ast.Call | None:
    """`F(x_ref, o_ref, decay=layer.decay)`, the body of a launched `lambda x_ref, o_ref: F(x_ref, o_ref, ...)`: the
    lambda hands each of its refs on, in order, as F's first positional arguments and nothing else (the rest by
    keyword, not naming the refs), so a new last ref of F is one more parameter of the lambda passed on after them.
    None for another lambda."""
    if not isinstance(lambda_node, ast.Lambda):
        return None
    spec, call = lambda_node.args, lambda_node.body
    if (not spec.args or spec.vararg or spec.posonlyargs or spec.kwonlyargs or spec.kwarg or spec.defaults
            or not isinstance(call, ast.Call) or any(k.arg is None for k in call.keywords)):
        return None
    names = [a.arg for a in spec.args]
    if [a.id if isinstance(a, ast.Name) else None for a in call.args] != names:
        return None
    if any(isinstance(n, ast.Name) and n.id in names for k in call.keywords for n in ast.walk(k.value)) or any(
            isinstance(n, ast.Name) and n.id in names for n in ast.walk(call.func)):
        return None
    return call


def forwarding_launches(project, model, function: ast.FunctionDef) -> list[EntryPoint]:
    """The launches whose body is a lambda handing its refs on to `function` (`forwarded_refs_call`): for them
    `function` is the body, and a new last parameter of it gets a new last ref. Empty where some launch or
    other code names `function` otherwise (a new parameter would go unfilled there)."""
    found, forwarding = [], set()
    sources = [model, *project.importers(model)]
    for source in sources:
        for entry in KernelIndex.of(project, source).entries:
            body = entry.body.node if entry.body is not None else None
            call = forwarded_refs_call(body) or named_refs_call(body)
            callee = project.evaluator.value(source, call.func) if call is not None else None
            if isinstance(callee, Func) and callee.node is function and callee.self_value is None:
                found.append(entry)
                forwarding.add(id(call.func))
    for source in sources if found else ():
        for node in ast.walk(source.tree):
            named = (isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load)) or (
                isinstance(node, ast.Attribute) and node.attr == function.name)
            if named and id(node) not in forwarding:
                value = project.evaluator.value(source, node)
                if isinstance(value, Func) and value.node is function:
                    return []
    return found


def _launched_around(project, model, function, siblings: list) -> tuple[ast.AST | None, list[EntryPoint]]:
    """(the launched body, its launches) of a helper's call site: the function holding the call, or the launched
    body it is nested in (a `plgpu.nd_loop` or `pl.when` function inside the body, which reaches the body's
    parameters as closure variables). The other bodies its launches may pick are added to `siblings`."""
    while isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        found = single_body_launches(project, model, function, siblings)
        if found:
            return function, found
        function = model.enclosing_function(function)
    return None, []


def locate(project, model, call: ast.Call, local: bool = False) -> tuple[GlobalUse, Plan | None, list[EntryPoint]] | None:
    """The get_global's use, its plan and the plan's launches (`local`: see `plan`); None where it is in no function."""
    use = global_use(model, call)
    if use is None:
        return None
    where = plan(project, model, use, local)
    return use, where, where.entries if where is not None else []


def single_body_launches(project, model, function: ast.AST, siblings: list | None = None) -> list[EntryPoint]:
    """`launches`, refused (CannotFix) where a launch picks its body at run time (`BODIES[name]`,
    a conditional): its new operand or scratch would reach the other bodies too. With `siblings`,
    a pick from a module-level dict of this module's functions is accepted, and the other bodies
    (which then take the new parameter, unused) are added to it as (model, function)."""
    from ..analysis.values import OneOf, Partial

    entries = launches(project, model, function)
    for entry in entries:
        picked = entry.body is None  # one of several bodies (launches found it among them)
        if not picked and is_call_form(entry) and entry.node.args:
            value = project.evaluator.value(entry.model, entry.node.args[0])
            while isinstance(value, Partial):  # `functools.partial(kernel, ...)`, `kernel = a if c else b`
                value = value.func
            picked = isinstance(value, OneOf) or isinstance(entry.node.args[0], (ast.Subscript, ast.IfExp))
            if picked and entry.body is not None and entry.body.node is function:
                # `def _call(body, ...): return pl.pallas_call(body, ...)`: the helper's calls passing this body
                # give its scratch (`launch_helper`), the other bodies' launches stay as they are.
                picked = helper_launch(project, entry, function) is None
        if picked:
            others = _dict_siblings(entry, function) if siblings is not None else None
            if others is None and siblings is not None:
                others = _branch_siblings(project, entry, function)
            if others is None:
                raise CannotFix("the launch picks its body at run time")
            siblings.extend((entry.model, other) for other in others if all(other is not f for _, f in siblings))
    return entries


def dict_of_bodies(entry: EntryPoint) -> list[ast.FunctionDef] | None:
    """The functions of `BODIES` in a launch of `BODIES[key]`, where BODIES is a module-level dict
    literal of this module's functions that is only ever read as `BODIES[...]` at launches, and each
    of those functions is named nowhere else (so every launch of them is one of these); or the functions a
    decorator registers in such a dict (`registered_bodies`). None otherwise."""
    from .registered_bodies import registered_bodies

    registered = registered_bodies(entry)
    if registered is not None:
        return registered
    if not (isinstance(entry.node, ast.Call) and entry.node.args and entry.kernel.node is entry.node):
        return None
    model, picked = entry.model, _picked_through_name(entry.model, entry.node.args[0])
    if not (isinstance(picked, ast.Subscript) and isinstance(picked.value, ast.Name)):
        return None
    binding = model.module_binding(picked.value.id)
    scope = model.scopes[model.tree].bindings.get(picked.value.id, [])
    if binding is None or len(scope) != 1 or not isinstance(binding.value, ast.Dict):
        return None
    values = binding.value.values
    functions = []
    for value in values:
        found = model.module_binding(value.id) if isinstance(value, ast.Name) else None
        if found is None or not isinstance(found.node, ast.FunctionDef) or found.node.decorator_list:
            return None
        functions.append(found.node)
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id == picked.value.id:
                subscript = model.parents.get(node)
                if not (subscript is picked or _launched_pick(model, subscript) or _keys_only(model, node)):
                    return None
            elif any(node.id == f.name for f in functions) and node not in values:
                return None
    return list(dict.fromkeys(functions))


def _picked_through_name(model, argument: ast.expr) -> ast.expr:
    """The launch's body argument, or what a local name holds where it is bound once, to a table pick, and read
    only there (`body = BODIES[jnp.dtype(x.dtype)]`, then `pl.pallas_call(body, ...)`)."""
    if not isinstance(argument, ast.Name):
        return argument
    function = model.enclosing_function(argument)
    binding = model.lookup(argument.id, model.scope_of(argument), argument.lineno)
    named = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == argument.id] if function else []
    loads = [n for n in named if isinstance(n.ctx, ast.Load)]
    if binding is None or binding.kind != "assign" or len(named) != 2 or loads != [argument] \
            or not isinstance(binding.value, ast.Subscript):
        return argument
    return binding.value


def _launched_pick(model, subscript: ast.AST) -> bool:
    """`BODIES[key]` written as a launch's first argument."""
    call = model.parents.get(subscript)
    return isinstance(subscript, ast.Subscript) and isinstance(call, ast.Call) and bool(call.args) \
        and call.args[0] is subscript


def _keys_only(model, node: ast.Name) -> bool:
    """A read of the table that sees its keys only: `for dtype in BODIES`, `key in BODIES`, `len(BODIES)`,
    `BODIES.keys()`."""
    parent = model.parents.get(node)
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, ast.Compare) and node in parent.comparators and all(
            isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
        return True
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
        return True
    return isinstance(parent, ast.Attribute) and parent.attr == "keys" and isinstance(model.parents.get(parent), ast.Call)


def _dict_siblings(entry: EntryPoint, function: ast.AST) -> list[ast.FunctionDef] | None:
    bodies = dict_of_bodies(entry)
    if bodies is None or not any(f is function for f in bodies):
        return None
    return [f for f in bodies if f is not function]


def _branch_siblings(project, entry: EntryPoint, function: ast.AST) -> list[ast.FunctionDef] | None:
    """The other bodies of a launch of a local name each branch binds to a function (`match mode: case "dense":
    body = _dense_body ...`, an `if`/`else`): every binding of the name in the launching function assigns a
    module-level, undecorated function of this module, named nowhere else in it nor in a module importing it (so
    each launch of them is this one, and a parameter added to them goes unfilled nowhere). None otherwise."""
    model = entry.model
    argument = entry.node.args[0] if isinstance(entry.node, ast.Call) and entry.node.args else None
    scope = model.enclosing_function(entry.node)
    if not isinstance(argument, ast.Name) or not isinstance(scope, ast.FunctionDef):
        return None
    bindings = model.scopes[scope].bindings.get(argument.id, [])
    functions, values = [], []
    for binding in bindings:
        value = binding.value if binding.kind == "assign" else None
        found = model.module_binding(value.id) if isinstance(value, ast.Name) else None
        if found is None or not isinstance(found.node, ast.FunctionDef) or found.node.decorator_list:
            return None
        functions.append(found.node)
        values.append(value)
    if not any(f is function for f in functions) or len(functions) < 2:
        return None
    names = {f.name for f in functions}
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) \
                and not any(node is v for v in values):
            return None
    if any(name in other.text for other in project.importers(model) for name in names):
        return None
    return [f for f in dict.fromkeys(functions) if f is not function]


def bound_elsewhere(function: ast.AST, use: GlobalUse) -> bool:
    """True when the variable's name is bound anywhere in `function` other than by the get_global."""
    targets = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == use.name
               and not isinstance(n.ctx, ast.Load)]
    arguments = [a for a in ast.walk(function) if isinstance(a, ast.arg) and a.arg == use.name]
    return len(targets) != 1 or bool(arguments)


def helper_calls(project, model, helper: ast.FunctionDef) -> list[tuple[object, ast.Call]]:
    """Every call of a module-level helper (of its class, for an `__init__`), here and in the workspace modules
    importing it; CannotFix when it is also used otherwise (passed on, stored, subclassed), where a new
    parameter would go unfilled."""
    from ..analysis.call_graph import object_calls, other_implementations, runs
    from ..analysis.values import ClassValue, Func

    constructed = constructed_class(model, helper)
    name = constructed.name if constructed is not None else helper.name
    if constructed is None and other_implementations(project, model, helper):
        raise CannotFix(f"{name} is defined again in a class of the same hierarchy, which a call of it may run "
                        "instead, and a new parameter would not fit")
    if constructed is not None:
        def this(value) -> bool:
            return isinstance(value, ClassValue) and value.node is constructed
    else:
        def this(value) -> bool:
            return isinstance(value, Func) and value.node is helper
    found = []
    for source in [model, *project.importers(model)]:
        calls = []
        through_objects = object_calls(project, source, helper, model) if constructed is None else []
        for call in [*source.calls_named(name), *through_objects]:
            if this(project.evaluator.value(source, call.func)) or (
                    constructed is None and runs(project, source, call.func, helper)):
                if (any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)) \
                        and not forwards_refs(source, call):
                    raise CannotFix(f"a call of {name} unpacks its arguments")
                calls.append(call)
        called = {id(call.func) for call in calls}
        for node in ast.walk(source.tree):
            named = (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) or (
                isinstance(node, ast.Attribute) and node.attr == name)
            if named and id(node) not in called and (this(project.evaluator.value(source, node)) or (
                    constructed is None and isinstance(node, ast.Attribute) and runs(project, source, node, helper))):
                partial = helper_partial(project, source, node) if constructed is None else None
                if partial is None:
                    raise CannotFix(f"{name} is used other than by {'constructing' if constructed else 'calling'} it")
                calls.append(partial)
        found += [(source, call) for call in calls]
    return found


def constructed_class(model, helper: ast.FunctionDef) -> ast.ClassDef | None:
    """The module-level class whose `__init__` `helper` is: its calls are those of the class (`PageWriter(...)`).
    None where a metaclass or a class decorator may change what a call of the class runs."""
    owner = model.parents.get(helper)
    if helper.name == "__init__" and isinstance(owner, ast.ClassDef) and model.parents.get(owner) is model.tree \
            and not owner.keywords and not owner.decorator_list:
        return owner
    return None


def forwards_refs(model, call: ast.Call) -> bool:
    """`helper(seq_idx, *args, **kwargs)` in a function taking `*args` (a launched body handing JAX's refs on, rpa
    v3's kernel loop): its last positional argument unpacks the caller's own `*args`, read nowhere else, and any
    `**` its own `**kwargs`. One more ref JAX passes the caller is one more argument of the helper, after the others:
    the call passes it unchanged."""
    caller = model.enclosing_function(call)
    spec = getattr(caller, "args", None)
    if not isinstance(caller, ast.FunctionDef) or spec.vararg is None or not call.args:
        return False
    last = call.args[-1]
    if not (isinstance(last, ast.Starred) and isinstance(last.value, ast.Name) and last.value.id == spec.vararg.arg):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args[:-1]):
        return False
    for keyword in call.keywords:
        if keyword.arg is None and not (spec.kwarg is not None and isinstance(keyword.value, ast.Name)
                                        and keyword.value.id == spec.kwarg.arg):
            return False
    reads = [n for n in ast.walk(caller) if isinstance(n, ast.Name) and n.id == spec.vararg.arg]
    return reads == [last.value]


def helper_partial(project, model, node: ast.expr) -> ast.Call | None:
    """`functools.partial(helper, a, b)` around a mention of the helper, binding positional arguments only (a loop
    body handed to `jax.lax.fori_loop`, which passes the rest): one more argument at its end is the helper's
    parameter after `b`. None for any other use."""
    from ..analysis.values import Api

    call = model.parents.get(node)
    if not (isinstance(call, ast.Call) and call.args and call.args[0] is node and not call.keywords
            and not any(isinstance(a, ast.Starred) for a in call.args)):
        return None
    callee = project.evaluator.value(model, call.func)
    return call if isinstance(callee, Api) and callee.name == "functools.partial" else None


def is_partial_of(call: ast.Call, helper: ast.FunctionDef) -> bool:
    """`call` is the `functools.partial(helper, ...)` that `helper_partial` found, not a call of the helper."""
    first = call.args[0] if call.args else None
    return (isinstance(first, ast.Name) and first.id == helper.name) or (
        isinstance(first, ast.Attribute) and first.attr == helper.name)


@dataclass
class HelperLaunch:
    """The helper around a launch whose body is the helper's parameter `parameter`, and the calls of it that pass
    the body a fix is about."""

    model: object
    helper: ast.FunctionDef
    parameter: str
    calls: list[tuple[object, ast.Call]]


def body_parameter(project, entry) -> tuple[ast.FunctionDef, str] | None:
    """(the helper, its parameter) where the launch's body argument is a plain parameter of the function holding
    the launch; None otherwise."""
    node = entry.node
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)
            and entry.kernel.node is node):
        return None
    model = entry.model
    helper = model.enclosing_function(node)
    if not isinstance(helper, ast.FunctionDef) or model.enclosing_function(helper) is not None \
            or not any(helper is statement for statement in model.tree.body):
        return None  # a module-level function: its calls are found by name (a method's bind `self` first)
    binding = model.lookup(node.args[0].id, model.scope_of(node.args[0]), node.lineno)
    if binding is None or binding.kind != "param":
        return None
    if [n for n in ast.walk(helper) if isinstance(n, ast.Name) and n.id == node.args[0].id
            and not isinstance(n.ctx, ast.Load)]:
        return None  # rebound in the helper
    return helper, node.args[0].id


def helper_launch(project, entry, body: ast.AST) -> HelperLaunch | None:
    """The `HelperLaunch` of `entry` for `body`: every call of the helper passes a known function as the body, and
    those passing `body` are the calls returned. None where the launch's body is no helper parameter; CannotFix
    where a call passes a body not known, or the helper is used otherwise than called."""
    from ..analysis.values import OneOf

    found = body_parameter(project, entry)
    if found is None or not isinstance(project.evaluator.value(entry.model, entry.node.args[0]), OneOf):
        return None  # one body only: the launch is its own, and takes the scratch itself
    helper, parameter = found
    args = helper.args
    if parameter not in [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]:
        return None
    position = [a.arg for a in args.posonlyargs + args.args].index(parameter) \
        if parameter in [a.arg for a in args.posonlyargs + args.args] else None
    passing = []
    for model, call in helper_calls(project, entry.model, helper):
        if not (isinstance(call.func, (ast.Name, ast.Attribute))):
            raise CannotFix(f"{helper.name} is used other than by calling it")
        given = call.args[position] if position is not None and position < len(call.args) else next(
            (k.value for k in call.keywords if k.arg == parameter), None)
        value = project.evaluator.value(model, given) if given is not None else None
        while isinstance(value, Partial):
            value = value.func
        if not isinstance(value, Func):
            raise CannotFix(f"a call of {helper.name} passes a body that is not known")
        if value.node is body:
            passing.append((model, call))
    if not passing:
        return None
    return HelperLaunch(entry.model, helper, parameter, passing)


def helper_mentions(project, model, helper: ast.FunctionDef, *, method: bool = False):
    """(module, name node) for every mention of a module-level helper in its module and its importers, each
    evaluated to the helper; CannotFix where its own module names it as something the evaluation cannot show
    is the helper (a rebinding would make the rewrite edit the wrong function). A method is named only as an
    attribute (`Buffers.acc(8)`)."""
    for source in [model, *project.importers(model)]:
        for node in ast.walk(source.tree):
            named = not method and isinstance(node, ast.Name) and node.id == helper.name and isinstance(
                node.ctx, ast.Load) or (isinstance(node, ast.Attribute) and node.attr == helper.name)
            if not named:
                continue
            value = project.evaluator.value(source, node)
            if not (isinstance(value, Func) and value.node is helper):
                if isinstance(node, ast.Name) and source is model:
                    raise CannotFix(f"{helper.name} is named where it is not known to be the helper")
                continue
            yield source, node
