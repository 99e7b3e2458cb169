"""`jax.eval_shape(f, *args)`: the `jax.ShapeDtypeStruct` of what `f` returns, where that is one array.

Real code types a buffer by what a function computes (`jax.eval_shape(_block_partial, block)`), then hands the
struct where JAX wants a memory-space type (a scratch list, `pl.run_scoped`, `pl.get_global`): each refuses it
(`'ShapeDtypeStruct' object has no attribute 'get_ref_aval'`). Its shape and dtype are not computed here (that
would be tracing the function): only that it is one struct. A function that returns a tuple, list or dict display
gives a pytree of structs, and one whose returns are not all seen gives what is not known.
"""

from __future__ import annotations

import ast

from .returns import returns_in
from .values import UNKNOWN, Func, Partial, ShapeDtype, Value

_PYTREES = (ast.Tuple, ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)


def evaluated_shape(args: list[Value], source: str) -> Value:
    """`jax.eval_shape(fn, ...)`'s value: a ShapeDtype of unknown shape and dtype where `fn` (a user function,
    or a partial of one) returns one array expression at each `return`; unknown otherwise."""
    if not args:
        return UNKNOWN
    fn = args[0]
    while isinstance(fn, Partial):
        fn = fn.func
    if not isinstance(fn, Func):
        return UNKNOWN
    node = fn.node
    if isinstance(node, ast.Lambda):
        results = [node.body]
    else:
        results = [r.value for r in returns_in(getattr(node, "body", []))]
    if not results or any(r is None or isinstance(r, _PYTREES) for r in results):
        return UNKNOWN
    if any(isinstance(r, (ast.Name, ast.Call)) and not _array_like(r) for r in results):
        return UNKNOWN
    return ShapeDtype(None, None, source)


def _array_like(expr: ast.expr) -> bool:
    """A `return` expression that is one array: an arithmetic or a call of `jnp`/`lax`/a method of an array
    (`x.astype(...)`, `jnp.sum(...)`); a name or another call may hold a pytree."""
    if isinstance(expr, ast.Call):
        func = expr.func
        while isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name) and func.id == "jnp" or \
            isinstance(expr.func, ast.Attribute) and expr.func.attr in ("astype", "reshape", "sum", "max", "min",
                                                                         "mean", "T", "transpose")
    return False
