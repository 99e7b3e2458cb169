"""Kernel bodies a decorator registers in a module-level dict, one of which a launch picks by key.

    _BODIES = {}                                  @register("silu")
                                                  def _silu(x_ref, o_ref, tile): ...
    def register(name):
        def wrap(body):                           def apply(name, x):
            _BODIES[name] = body                      body = _BODIES[name]
            return body                               return plgpu.kernel(body, ...)(x)
        return wrap

Every function the decorator registers may be the launch's body, so a fix that gives the body a new
parameter gives it to each of them. Only where the registry is read by that subscript alone (besides its
keys: `name in _BODIES`, `sorted(_BODIES)`), the decorator stores its parameter and returns it unchanged,
and no registered function is named anywhere else: then the launch's calls are every call of them.
"""

from __future__ import annotations

import ast

# Reads of the registry that see only its keys.
_KEY_READERS = {"sorted", "list", "len", "set", "tuple"}


def registered_bodies(entry) -> list[ast.FunctionDef] | None:
    """The functions the launch of `entry` may pick from a decorator-filled registry (see the module's
    docstring), in the order they are written; None where the launch picks from no such registry."""
    model = entry.model
    if not (isinstance(entry.node, ast.Call) and entry.node.args and entry.kernel.node is entry.node):
        return None
    picked = _picked_subscript(model, entry.node.args[0])
    if picked is None or not isinstance(picked.value, ast.Name):
        return None
    registry = picked.value.id
    bindings = model.scopes[model.tree].bindings.get(registry, [])
    if len(bindings) != 1 or bindings[0].kind != "assign" or not (
            isinstance(bindings[0].value, ast.Dict) and not bindings[0].value.keys):
        return None
    decorators = _registering_decorators(model, registry, picked)
    if not decorators:
        return None
    bodies = [node for node in model.tree.body if isinstance(node, ast.FunctionDef) and node.decorator_list
              and all(_decorator_name(d) in decorators for d in node.decorator_list)]
    registered = {id(body) for body in bodies}
    for node in model.tree.body:  # a function a registering decorator decorates, with others too: unknown
        if isinstance(node, ast.FunctionDef) and id(node) not in registered and any(
                _decorator_name(d) in decorators for d in node.decorator_list):
            return None
    names = {body.name for body in bodies}
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            return None  # named elsewhere: called or passed on where a new parameter would go unfilled
    return bodies or None


def _picked_subscript(model, node: ast.AST) -> ast.Subscript | None:
    """`D[key]` as the launch's body, written there or assigned once to the name it passes (in its function)."""
    if isinstance(node, ast.Subscript):
        return node
    if not isinstance(node, ast.Name):
        return None
    scope = model.scope_of(node)
    bindings = model.scopes[scope].bindings.get(node.id, []) if scope in model.scopes else []
    if len(bindings) != 1 or bindings[0].kind != "assign" or not isinstance(bindings[0].value, ast.Subscript):
        return None
    return bindings[0].value


def _decorator_name(decorator: ast.expr) -> str | None:
    """`register` of `@register("silu")` or `@register`."""
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return called.id if isinstance(called, ast.Name) else None


def _registering_decorators(model, registry: str, picked: ast.Subscript) -> set[str]:
    """The module-level decorators that store their parameter in the registry and return it: `def register(f)`,
    or `def register(name)` returning its nested `wrap(f)` that does; empty where the registry is read or
    written otherwise (but for `picked` and reads of its keys)."""
    found: set[str] = set()
    for node in ast.walk(model.tree):
        if not (isinstance(node, ast.Name) and node.id == registry) or node is picked.value:
            continue
        parent = model.parents.get(node)
        if isinstance(parent, ast.Assign) and node in parent.targets or isinstance(parent, ast.AnnAssign) \
                and parent.target is node:
            continue  # the registry's own binding
        if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _KEY_READERS:
            continue
        if isinstance(parent, ast.comprehension) and parent.iter is node or isinstance(parent, ast.For) \
                and parent.iter is node:
            continue
        store = model.parents.get(parent)
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store) and isinstance(store, ast.Assign) \
                and store.targets == [parent]:
            name = _storing_decorator(model, store)
            if name is not None:
                found.add(name)
                continue
        return set()
    return found


def _storing_decorator(model, store: ast.Assign) -> str | None:
    """The module-level decorator whose wrapper makes `store` (`D[key] = fn`, `fn` the wrapper's only parameter,
    returned unchanged as its last statement): the wrapper itself, or the factory returning it."""
    wrapper = model.enclosing_function(store)
    if not isinstance(wrapper, ast.FunctionDef) or store not in wrapper.body or wrapper.decorator_list:
        return None
    spec = wrapper.args
    if spec.vararg or spec.kwarg or spec.kwonlyargs or len([*spec.posonlyargs, *spec.args]) != 1:
        return None
    parameter = [*spec.posonlyargs, *spec.args][0].arg
    last = wrapper.body[-1]
    if not (isinstance(store.value, ast.Name) and store.value.id == parameter and isinstance(last, ast.Return)
            and isinstance(last.value, ast.Name) and last.value.id == parameter):
        return None
    if any(isinstance(n, ast.Name) and n.id == parameter and not isinstance(n.ctx, ast.Load)
           for n in ast.walk(wrapper)):
        return None  # rebound before it is returned
    outer = model.enclosing_function(wrapper)
    if outer is None and wrapper in model.tree.body:
        return wrapper.name
    if isinstance(outer, ast.FunctionDef) and outer in model.tree.body and not outer.decorator_list:
        returns = [n for n in ast.walk(outer) if isinstance(n, ast.Return) and model.enclosing_function(n) is outer]
        if len(returns) == 1 and isinstance(returns[0].value, ast.Name) and returns[0].value.id == wrapper.name:
            return outer.name
    return None
