"""A buffer moved out of a function that a kernel traces more than once must not outlive each trace.

Each trace of `pl.get_global` allocates a buffer of its own: a helper called twice in a body (or in a
Python loop) gets two. Scratch, an operand or an output is one buffer for the whole kernel. Where each
call's buffer outlives the call (returned, bound to another name, put in a container), the calls'
buffers would become one and the kernel would compute something else (`cur = widen(x_ref)`,
`prev = widen(prev_ref)`: both would read the last one written). Where it does not, one buffer used by
the calls in turn is what they did. `pl.run_scoped` at the get_global keeps one buffer per trace, so it
needs no such check.
"""

from __future__ import annotations

import ast

from .cst_locate import CannotFix

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Control flow that traces a function it is handed once (jax 0.12: lax.fori_loop, lax.scan, ... trace the
# body once; pl.when / pl.loop decorate a function and trace it once).
_TRACE_ONCE = {"fori_loop", "scan", "while_loop", "cond", "switch", "when", "loop", "run_scoped", "map",
               "emit_pipeline", "remat", "checkpoint", "named_call", "custom_vjp", "custom_jvp"}
CONTAINER_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft"}
_PASSING = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred, ast.Attribute, ast.Subscript, ast.IfExp)


def _outlives(parents, node: ast.AST) -> bool:
    """`node` (the buffer) leaves the statement that uses it: returned, yielded, bound to a name or
    attribute, or put in a container. An element read or written (`buf[...]`) or the buffer handed to a
    call (a copy, a store) stays."""
    child, parent = node, parents.get(node)
    if isinstance(parent, ast.Subscript) and parent.value is child:
        return False  # buf[...]: its values, not the buffer
    while parent is not None:
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return True
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and getattr(parent, "value", None) is child:
            return True
        if isinstance(parent, ast.Call):
            method = parent.func
            return (parent.func is not child and isinstance(method, ast.Attribute)
                    and method.attr in CONTAINER_METHODS)
        if not isinstance(parent, _PASSING):
            return False
        child, parent = parent, parents.get(parent)
    return False


def outlives_its_function(model, use) -> bool:
    """The get_global's buffer leaves the function holding it."""
    if use.name is None or use.statement is None:
        return _outlives(model.parents, use.call)
    scope_nodes = ast.walk(use.function)
    return any(isinstance(n, ast.Name) and n.id == use.name and isinstance(n.ctx, ast.Load)
               and _outlives(model.parents, n) for n in scope_nodes)


def in_loop(model, node: ast.AST, stop: ast.AST) -> bool:
    """`node` is in a loop or comprehension of `stop` (each iteration traces it again)."""
    parent = model.parents.get(node)
    while parent is not None and parent is not stop:
        if isinstance(parent, _LOOPS):
            return True
        parent = model.parents.get(parent)
    return False


def _callee_name(func: ast.AST) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _traces(model, name: ast.AST, within: ast.AST) -> int:
    """How many times a read of a function's name traces it in `within`: 1 for a call or a hand-over to
    control flow that traces once, 2 for one in a loop or handed to anything else (`map`, `jax.tree.map`)."""
    if in_loop(model, name, within):
        return 2
    parent = model.parents.get(name)
    if isinstance(parent, ast.Call) and parent.func is name:
        return 1
    if isinstance(parent, ast.Call) and _callee_name(parent.func) in _TRACE_ONCE:
        return 1
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Call) and _callee_name(parent.func.func) in _TRACE_ONCE:
        return 1  # pl.when(c)(f)
    return 2


def refuse_allocated_in_loop(model, use) -> None:
    """CannotFix where the get_global is in a loop of its own function and its buffer outlives an iteration."""
    if in_loop(model, use.call, use.function) and outlives_its_function(model, use):
        raise CannotFix("the get_global is in a loop and each iteration's buffer outlives it: one buffer for the "
                        "kernel would be shared by all of them")


def refuse_nested_traced_twice(model, use, outer: ast.AST) -> None:
    """CannotFix where `use.function`, nested in the launched body `outer`, is traced more than once and
    its buffer outlives each trace (or the get_global is in a loop of its own function)."""
    function = use.function
    if not outlives_its_function(model, use):
        return
    reads = [n for n in ast.walk(outer) if isinstance(n, ast.Name) and n.id == function.name
             and isinstance(n.ctx, ast.Load)]
    traces = sum(_traces(model, n, outer) for n in reads)
    if traces > 1 or in_loop(model, function, outer) or in_loop(model, use.call, function):
        raise CannotFix(f"{function.name} is traced more than once and each trace's buffer outlives it: "
                        "one buffer for the kernel would be shared by all of them")


def refuse_helper_called_twice(model, use, calls) -> None:
    """CannotFix where a helper holding the get_global is called more than once by one function (or in a
    loop) and its buffer outlives each call: the calls would share the one buffer passed in."""
    if not outlives_its_function(model, use):
        return
    by_caller: dict[int, int] = {}
    for source, call in calls:
        caller = source.enclosing_function(call)
        count = 2 if in_loop(source, call, caller) or in_loop(model, use.call, use.function) else 1
        by_caller[id(caller)] = by_caller.get(id(caller), 0) + count
    if any(count > 1 for count in by_caller.values()):
        raise CannotFix(f"{use.function.name} is called more than once by a kernel and each call's buffer "
                        "outlives the call: one buffer passed in would be shared by all of them")
