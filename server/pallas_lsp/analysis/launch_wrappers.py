"""Launch wrappers: functions that hand their own arguments on to a kernel factory.

JAX's own tests launch their kernels through one (`def kernel(self, *args, **kwargs): ...; return
plgpu.kernel(*args, compiler_params=params, **kwargs)`, `def pallas_call(self, *args, **kwargs): return
pl.pallas_call(*args, interpret=self.INTERPRET, **kwargs)`): a call of it, `self.kernel(body, out_type=...)`,
is a launch of the factory with the same arguments, so the kernel it builds is modelled at that call, with
that call's keywords (and the wrapper's own ones, by value). A launcher may also build the kernel around the body
it is handed (`BodyLauncher`: `mosaic_gpu_test.py`'s `pallas_call` runs it in `plgpu.emit_pipeline` inside a kernel
of its own): a call of it launches the body in that kernel.
"""

from __future__ import annotations

import ast
import collections
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import walk_nodes
from .values import UNKNOWN, Const, Func, KernelCall, Partial, Value

if TYPE_CHECKING:
    from .model import ModuleModel

_NOT_A_WRAPPER = object()


def forwarded_call(function: ast.AST) -> ast.Call | None:
    """The call a launch wrapper hands its arguments on to: the function's one `return` gives a call whose
    positional arguments are its `*args` (first, so that they keep their places), or whose first is one of its
    parameters (the body) where it spreads its `**kwargs` into the call's keywords, as it must where it takes
    them; None where `function` is no such wrapper. Kept on the node."""
    found = getattr(function, "_forwarded_call", _NOT_A_WRAPPER)
    if found is _NOT_A_WRAPPER:
        found = _forwarded_call(function)
        function._forwarded_call = found
    return found


def _forwarded_call(function: ast.AST) -> ast.Call | None:
    spec = getattr(function, "args", None)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if spec.vararg is None and spec.kwarg is None:  # neither `*args` nor `**kwargs` to hand on: told before
        return None  # walking the body (asked of every function a call of a module with kernels may call)
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
    if spec.vararg is not None:
        if not (isinstance(first, ast.Starred) and isinstance(first.value, ast.Name) and first.value.id == spec.vararg.arg):
            return None
    elif not (spec.kwarg is not None and isinstance(first, ast.Name)
              and first.id in {a.arg for a in [*spec.posonlyargs, *spec.args]}):
        # `def _kernel(cfg, name, body, **kwargs): return plgpu.kernel(body, kernel_name=name, **kwargs)`: the
        # body is its own parameter, the launch's keywords its **kwargs
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


# ---- launchers that build the kernel around the body they are handed ------------------------------------------


@dataclass(frozen=True)
class BodyLauncher:
    """A launcher that builds its kernel around the body it is handed, as `mosaic_gpu_test.py`'s `pallas_call` does:

        def pallas_call(self, kernel_fn=None, *, out_shape, scratch_shapes=(), ...):
          def decorator(fn):
            @self.kernel(out_type=out_shape, scratch_types=scratch_shapes, grid=parallel_grid, ...)
            def wrapper(*args_gmem):
              ...
              def pipeline(indices, *args):
                fn(*args, *scratch_refs)
              ...
            return wrapper
          return decorator(kernel_fn) if kernel_fn is not None else decorator

    The kernel is the nested function the factory decorates (`wrapper`); the body runs in it, handed every ref
    the kernel gets in JAX's order (only starred arguments, or the kernel's own parameters in order): so a call
    `self.pallas_call(body, out_shape=...)` launches `body` in a kernel of that factory, whose keywords are the
    launcher's arguments where the factory is handed the launcher's own parameter (`out_type=out_shape`), and
    unknown where the launcher computes them (`grid=parallel_grid`)."""

    body_param: str  # the launcher's parameter that takes the body
    factories: tuple[ast.Call, ...]  # decorators that may build the kernel around it, outermost first


_NOT_A_LAUNCHER = object()


def body_launcher(function: ast.AST) -> BodyLauncher | None:
    """The launcher `function` is (`BodyLauncher`), else None. Kept on the node (an edit inside it drops it:
    `model_patch`)."""
    found = getattr(function, "_body_launcher", _NOT_A_LAUNCHER)
    if found is _NOT_A_LAUNCHER:
        found = _body_launcher(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        function._body_launcher = found
    return found


def _nested_functions(function: ast.FunctionDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The defs nested in `function`, in `ast.walk` order: the walk leaves expressions out (no def is in
    one), and a breadth-first walk that leaves out subtrees keeps the others in their order. Asked of
    every function a call in a module with kernels may call: most are no launcher."""
    found = []
    queue = collections.deque([function])
    while queue:
        node = queue.popleft()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(child)
            queue.append(child)
    return found


def _body_launcher(function: ast.FunctionDef) -> BodyLauncher | None:
    nested = _nested_functions(function)
    decorated = [n for n in nested if any(isinstance(d, ast.Call) for d in n.decorator_list)]
    if not decorated:  # most functions: no nested def decorated by a call, told without walking expressions
        return None
    walked = walk_nodes(function)  # asked of every function a call evaluates: one walk, no generators
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    # What the body is called by inside the kernel: the launcher's parameter, or the parameter of a nested
    # function it is handed to (`decorator(kernel_fn)`, or `decorator` returned for a later call with the body).
    handed = {inner.args.args[0].arg: inner.name for inner in nested if inner.args.args and inner not in decorated}
    in_kernels = {id(node) for kernel in decorated for node in ast.walk(kernel)}  # one walk, not one per call
    runs_body = [call for call in walked if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                 and (call.func.id in params or call.func.id in handed) and not call.keywords
                 and id(call) in in_kernels]
    if len(runs_body) != 1:
        return None
    call = runs_body[0]
    kernels = [kernel for kernel in decorated if call in ast.walk(kernel) and _hands_every_ref(call, kernel)]
    name = call.func.id
    if name in handed:  # the nested function's parameter: which launcher parameter is handed to it?
        givers = {c.args[0].id for c in walked if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                  and c.func.id == handed[name] and len(c.args) == 1 and isinstance(c.args[0], ast.Name)
                  and c.args[0].id in params}
        name = givers.pop() if len(givers) == 1 else None
    if not kernels or name is None:
        return None
    kernels.sort(key=lambda kernel: kernel.lineno)  # the outermost first
    factories = tuple(d for kernel in kernels for d in reversed(kernel.decorator_list) if isinstance(d, ast.Call))
    return BodyLauncher(name, factories)


def _hands_every_ref(call: ast.Call, kernel: ast.FunctionDef) -> bool:
    """The body handed what the kernel gets, in its order: only starred arguments (`fn(*args, *scratch_refs)`),
    or the kernel's own parameters in order."""
    if call.args and all(isinstance(a, ast.Starred) for a in call.args):
        return True
    own = [a.arg for a in [*kernel.args.posonlyargs, *kernel.args.args]]
    return bool(own) and [getattr(a, "id", None) for a in call.args] == own


def kernel_around_body(evaluator, model: "ModuleModel", func: Func, launcher: BodyLauncher, args: list[Value],
                       kwargs: dict[str, Value], node: ast.Call, complete: bool) -> KernelCall | None:
    """The kernel a call of a launcher that builds it around its body launches (`launch_wrappers.BodyLauncher`),
    at `node`, with the body handed (None: a decorator waiting for it); None where the body is no known
    function or no factory builds the kernel."""
    params = evaluator.bind_arguments(func, args, kwargs, complete)
    body = params.get(launcher.body_param, Const(None))
    inner = body
    while isinstance(inner, Partial):
        inner = inner.func
    if body != Const(None) and not isinstance(inner, Func):
        return None
    for factory_node in launcher.factories:
        factory = evaluator.value(func.model, factory_node)
        if isinstance(factory, KernelCall) and factory.body is None:
            break
    else:
        return None
    written = {k.arg: k.value for k in node.keywords if k.arg}
    launcher_params = {a for a in func.node.args.posonlyargs + func.node.args.args + func.node.args.kwonlyargs}
    kernel_kwargs = []
    for key, _, keyword_node in factory.kwargs:
        binding = func.model.lookup(keyword_node.id, func.model.scope_of(keyword_node), keyword_node.lineno) \
            if isinstance(keyword_node, ast.Name) else None
        if binding is not None and binding.kind == "param" and binding.node in launcher_params:
            kernel_kwargs.append((key, params.get(keyword_node.id, UNKNOWN), written.get(keyword_node.id)))
        else:  # computed by the launcher (`grid=parallel_grid`), or written by a wrapper it goes through
            kernel_kwargs.append((key, UNKNOWN, None))
    return KernelCall(factory.api, model, node, None if body == Const(None) else body, tuple(kernel_kwargs))


# ---- lifted pallas_calls: a function that takes pallas_call's arguments and returns the launch -------------------


# pallas_call's keywords a lifted one takes under the same names and hands on (as they are, or in a grid spec).
_PALLAS_CALL_KEYWORDS = ("out_shape", "grid_spec", "grid", "in_specs", "out_specs", "scratch_shapes")


@dataclass(frozen=True)
class LiftedPallasCall:
    """A function with pallas_call's signature that returns a function launching the body it is handed, as
    qwix's `qpl.pallas_call` does (QArray operands adjusted, others as they are):

        def pallas_call(kernel, out_shape, *, grid_spec=None, grid=(), in_specs=..., scratch_shapes=(), **kwargs):
          ...
          def wrapper(*args):
            return pl.pallas_call(lambda *refs: kernel(...), out_shape, grid_spec=new_grid_spec, **kwargs)(*args)
          return wrapper

    A call of it builds a `pl.pallas_call` kernel of that body with the call's arguments as pallas_call's: the
    body gets its refs in pallas_call's order (the lifted one's promise: "takes the same block specs")."""

    body_param: str
    launch: ast.Call  # the pl.pallas_call(...) call in the returned function


_NOT_LIFTED = object()


def lifted_pallas_call(function: ast.AST) -> LiftedPallasCall | None:
    """The lifted pallas_call `function` is (`LiftedPallasCall`), else None; the launch's callee is left to the
    caller to check (`pl.pallas_call`). Kept on the node."""
    found = getattr(function, "_lifted_pallas_call", _NOT_LIFTED)
    if found is _NOT_LIFTED:
        found = _lifted(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        function._lifted_pallas_call = found
    return found


def _lifted(function: ast.FunctionDef) -> LiftedPallasCall | None:
    spec = function.args
    positional = [*spec.posonlyargs, *spec.args]
    names = {a.arg for a in [*positional, *spec.kwonlyargs]}
    if not positional or "out_shape" not in names or spec.kwarg is None:
        return None
    body_param = positional[0].arg
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    nested = {n.name: n for n in function.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name) or returns[0].value.id not in nested:
        return None
    launches = []
    for call in ast.walk(nested[returns[0].value.id]):
        if not (isinstance(call, ast.Call) and call.args):
            continue
        out_shape = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "out_shape"), None)
        spreads = any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == spec.kwarg.arg for k in call.keywords)
        runs_body = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == body_param
                        for n in ast.walk(call.args[0])) or (isinstance(call.args[0], ast.Name) and call.args[0].id == body_param)
        if isinstance(out_shape, ast.Name) and out_shape.id == "out_shape" and spreads and runs_body:
            launches.append(call)
    return LiftedPallasCall(body_param, launches[0]) if len(launches) == 1 else None


def lifted_kernel(evaluator, model: "ModuleModel", func: Func, lifted: LiftedPallasCall, args: list[Value],
                  kwargs: dict[str, Value], node: ast.Call) -> KernelCall | None:
    """The `pl.pallas_call` kernel a call of a lifted pallas_call builds, at `node`; None where the function's
    launch is not pl.pallas_call's or the body is no known function."""
    launch = evaluator.value(func.model, lifted.launch.func)
    if getattr(launch, "name", None) != "pl.pallas_call":
        return None
    params = evaluator.bind_arguments(func, args, kwargs)
    body = params.get(lifted.body_param)
    inner = body
    while isinstance(inner, Partial):
        inner = inner.func
    if not isinstance(inner, Func):
        return None
    own = {a.arg for a in [*func.node.args.posonlyargs, *func.node.args.args, *func.node.args.kwonlyargs]}
    written = {k.arg: k.value for k in node.keywords if k.arg}
    kernel_kwargs = [(key, value, written.get(key)) for key, value in kwargs.items()
                     if key in _PALLAS_CALL_KEYWORDS or key not in own]
    return KernelCall("pl.pallas_call", model, node, body, tuple(kernel_kwargs))
