"""Launch wrappers: functions that hand their own arguments on to a kernel factory.

JAX's own tests launch their kernels through one (`def kernel(self, *args, **kwargs): ...; return
plgpu.kernel(*args, compiler_params=params, **kwargs)`, `def pallas_call(self, *args, **kwargs): return
pl.pallas_call(*args, interpret=self.INTERPRET, **kwargs)`): a call of it, `self.kernel(body, out_type=...)`,
is a launch of the factory with the same arguments, so the kernel it builds is modelled at that call, with
that call's keywords (and the wrapper's own ones, by value).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .values import KernelCall

if TYPE_CHECKING:
    from .model import ModuleModel

_NOT_A_WRAPPER = object()


def forwarded_call(function: ast.AST) -> ast.Call | None:
    """The call a launch wrapper hands its arguments on to: the function's one `return` gives a call whose
    positional arguments are its `*args` (first, so that they keep their places) and whose keywords spread its
    `**kwargs` where it takes them; None where `function` is no such wrapper. Kept on the node."""
    found = getattr(function, "_forwarded_call", _NOT_A_WRAPPER)
    if found is _NOT_A_WRAPPER:
        found = _forwarded_call(function)
        function._forwarded_call = found
    return found


def _forwarded_call(function: ast.AST) -> ast.Call | None:
    spec = getattr(function, "args", None)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or spec.vararg is None:
        return None
    nodes = list(_own_nodes(function))
    returns = [node for node in nodes if isinstance(node, ast.Return)]
    if len(returns) != 1:
        return None
    call = returns[0].value
    if isinstance(call, ast.Name):  # `result = launch(*args, ...)`, then `return result`
        bound = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                 and call.id in _target_names(n)]
        call = bound[0].value if len(bound) == 1 and isinstance(bound[0], ast.Assign) else None
    if not isinstance(call, ast.Call):
        return None
    first = call.args[0] if call.args else None
    if not (isinstance(first, ast.Starred) and isinstance(first.value, ast.Name) and first.value.id == spec.vararg.arg):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args[1:]):
        return None
    if spec.kwarg is not None and not any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == spec.kwarg.arg
                                          for k in call.keywords):
        return None
    return call


def _target_names(statement: ast.AST) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _own_nodes(function: ast.AST):
    """The nodes of a function's body, not those of functions or classes nested in it."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def rehome(kernel: KernelCall, model: "ModuleModel", call: ast.Call, forwarded: ast.Call) -> KernelCall:
    """The kernel a wrapper built at `forwarded` (its own call of the factory), as built at `call` (the call of
    the wrapper, in `model`): each keyword's node is the one `call` wrote, where it passed it through the
    wrapper's `**kwargs`; a keyword the wrapper writes itself keeps its value only."""
    own = {k.arg for k in forwarded.keywords if k.arg}
    written = {k.arg: k.value for k in call.keywords if k.arg}
    kwargs = tuple((key, value, None if key in own else written.get(key)) for key, value, _ in kernel.kwargs)
    return KernelCall(kernel.api, model, call, kernel.body, kwargs)
