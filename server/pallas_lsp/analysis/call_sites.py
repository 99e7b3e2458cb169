"""Where a function is called, with what: the call sites `Evaluator.call_sites_with_nodes` and the parameters
seen from call sites follow. Directly, through `functools.partial`, `jax.jit(f)(...)`, `jax.eval_shape(f, ...)`,
an instance's `__call__`; through `jax.vmap(f)(...)` (each mapped axis taken off); as a `custom_vjp`'s forward
rule (`f.defvjp(fwd, bwd)`: `fwd` takes `f`'s arguments); and, for a function of jax's own (its Pallas ops, in
the installed wheel), wherever a workspace module calls the `Api` of that name."""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

from . import reads
from .call_arguments import CallArguments
from .names import canonical
from .values import UNKNOWN, Api, ClassValue, Const, Func, Instance, Partial, Value
from .vmapped import unbatched

if TYPE_CHECKING:
    from .model import ModuleModel

TRANSPARENT_WRAPPERS = {"jax.jit", "jax.named_call", "jax.checkpoint", "jax.remat"}
# What calls the function it wraps with the wrapper's own arguments, as they are (their shapes and dtypes): the
# transparent wrappers, and a derivative's (`jax.grad(loss)(x)` calls `loss(x)`), whose result is not the function's.
_CALLING_WITH_ITS_ARGUMENTS = TRANSPARENT_WRAPPERS | {"jax.grad", "jax.value_and_grad"}
_MAX_FORWARDS = 2  # `defvjp` rules of `defvjp` rules ...: how deep the forward rule's call sites are followed


def _terminal_name(expr: ast.AST) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None


def argument_sites(evaluator, model: "ModuleModel", func_node: ast.AST, depth: int = 0):
    """(model, call, Func, CallArguments) for each call site of `func_node`, in its module and in the
    workspace modules importing it."""
    name = getattr(func_node, "name", None)
    if name is None:
        return
    cls = model.enclosing_class(func_node) if name in ("__call__", "__init__") else None
    mentioned = cls.name if cls is not None else name  # an instance is called, and made, by its class's name
    importers = [] if evaluator.in_own_module_only else evaluator.project.importers_mentioning(model, mentioned)
    if not evaluator.in_own_module_only and cls is None and _in_jax(model):
        importers = list(dict.fromkeys([*importers, *_package_importers(evaluator.project, model, name)]))
    for where in [model, *importers]:
        for call, func, arguments in _call_sites_in(evaluator, where, func_node, name, model, cls):
            yield where, call, func, arguments
    if depth < _MAX_FORWARDS and cls is None:
        yield from _forward_rule_sites(evaluator, model, func_node, name, depth)


def _in_jax(model: "ModuleModel") -> bool:
    return model.module_name is not None and model.module_name.startswith("jax.")


def _package_importers(project, model: "ModuleModel", name: str) -> list:
    """The workspace modules importing `name` from the package of a module of jax's own, where the package
    re-exports it (`from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention`)."""
    init = os.path.join(os.path.dirname(model.path), "__init__.py")
    if init == model.path or not os.path.isfile(init) or project.is_workspace_file(model.path):
        return []
    return project.importers_mentioning(project.model(init), name)


# What a jax op's module may bind an op to, called with the op's own arguments (without a derivative asked).
_WRAPPERS = {"jax.custom_vjp", "jax.custom_jvp", *TRANSPARENT_WRAPPERS}


def _wraps(evaluator, home: "ModuleModel", func_node: ast.AST, api: str, own_api: str) -> bool:
    """Whether the jax op `api` names (`pl.ops.tpu.megablox.ops.gmm`) is bound in its module to this function
    wrapped (`gmm = jax.custom_vjp(backend.gmm, ...)`): that module of the same wheel modelled, read only."""
    if not api.startswith("pl.ops.") or "." not in api:
        return False
    module, attr = api.rsplit(".", 1)
    dotted = "jax.experimental.pallas." + module[len("pl."):]
    root = home.path[: -len(home.module_name.replace(".", os.sep) + ".py")].rstrip(os.sep)
    path = evaluator.project.find_module(dotted, [root]) if home.path.endswith(".py") else None
    if path is None or os.path.abspath(path) == home.path:
        return False
    other = evaluator.project.model(path)
    binding = other.module_binding(attr)
    value = binding.value if binding is not None and binding.kind == "assign" else None
    if not (isinstance(value, ast.Call) and value.args):
        return False
    wrapper, wrapped = evaluator.value(other, value.func), evaluator.value(other, value.args[0])
    # `from ...megablox import gmm as backend` in the package's own module, `backend.gmm`: jedi may name that
    # module through the package's re-export (`...megablox.ops.gmm.gmm`); its last two parts are this module's
    tail = "." + own_api.rsplit(".", 2)[-2] + "." + own_api.rsplit(".", 1)[-1]
    return isinstance(wrapper, Api) and wrapper.name in _WRAPPERS and (
        isinstance(wrapped, Func) and wrapped.node is func_node
        or isinstance(wrapped, Api) and (wrapped.name == own_api or wrapped.name.endswith(tail)
                                         and wrapped.name.startswith(module + ".")))


def _call_sites_in(evaluator, model: "ModuleModel", func_node: ast.AST, name: str, home: "ModuleModel",
                   cls: ast.ClassDef | None):
    value_of = evaluator.value
    own_api = canonical(f"{home.module_name}.{name}") if _in_jax(home) and cls is None else None

    def is_it(value: Value) -> bool:
        return isinstance(value, Func) and value.node is func_node and value.model is home

    if cls is not None and name == "__init__":  # `__init__`: its class's constructions (`Kernel(cfg)`)
        yield from _constructions(evaluator, model, func_node, home, cls)
    for call in model.calls_or_partials_of(name):
        target = _terminal_name(call.func)
        if target == name:
            value = value_of(model, call.func)
            if is_it(value):
                yield call, value, CallArguments.of(evaluator, model, call)
            elif own_api is not None and isinstance(value, Api) and (
                    value.name == own_api or _wraps(evaluator, home, func_node, value.name, own_api)):
                yield call, Func(home, func_node), CallArguments.of(evaluator, model, call)
        elif target == "partial" and call.args and _terminal_name(call.args[0]) == name:
            value = value_of(model, call)
            if isinstance(value, Partial) and is_it(value.func):
                yield call, value.func, CallArguments(evaluator, model, [], [], (list(value.args), dict(value.kwargs)))
    for call in model.calls_named("eval_shape", *(w.rsplit(".", 1)[1] for w in _CALLING_WITH_ITS_ARGUMENTS)):
        if not call.args or _terminal_name(call.args[0]) != name:
            continue
        wrapper = value_of(model, call.func)
        value = value_of(model, call.args[0])
        if not (isinstance(wrapper, Api) and is_it(value)):
            continue
        if wrapper.name == "jax.eval_shape":
            yield call, value, CallArguments.of(evaluator, model, call, skip=1)
        elif wrapper.name in _CALLING_WITH_ITS_ARGUMENTS:
            outer = wrapped_call(model, call)
            if outer is not None:
                yield outer, value, CallArguments.of(evaluator, model, outer)
    if model.mentions("vmap"):
        yield from _vmapped_sites(evaluator, model, name, is_it)
    if cls is not None and name == "__call__":  # `__call__`'s class: its instances' calls
        reads.note(("calls", id(model), "*"))
        for call in model.calls:
            if not isinstance(call.func, (ast.Name, ast.Attribute)):
                continue
            value = value_of(model, call.func)
            if isinstance(value, Instance) and value.cls.node is cls:
                yield call, Func(home, func_node, value), CallArguments.of(evaluator, model, call)
            elif _terminal_name(call.func) == "partial" and call.args:  # `functools.partial(OP, interpret=...)`
                bound = value_of(model, call)
                if isinstance(bound, Partial) and isinstance(bound.func, Instance) and bound.func.cls.node is cls:
                    yield call, Func(home, func_node, bound.func), CallArguments(
                        evaluator, model, [], [], (list(bound.args), dict(bound.kwargs)))


def _constructions(evaluator, model: "ModuleModel", func_node: ast.AST, home: "ModuleModel", cls: ast.ClassDef):
    """`Kernel(cfg)`: a call of `__init__`, with the instance made as its `self`."""
    for call in model.calls_or_partials_of(cls.name):
        if _terminal_name(call.func) == cls.name:
            made = evaluator.value(model, call.func)
            if isinstance(made, ClassValue) and made.node is cls:
                yield call, Func(home, func_node, Instance(made)), CallArguments.of(evaluator, model, call)


def constructed_field(evaluator, cls: ClassValue, index: int, name: str) -> list[Value]:
    """What the constructions of a dataclass (`Kernel(cfg)`, `Kernel(cfg=cfg)`), in its module and the
    workspace modules importing it, pass for its field `name` (the `index`-th), those known."""
    key = ("field", id(cls.node), name)
    if key in evaluator._active:
        return [UNKNOWN]
    evaluator._active.add(key)
    try:
        return _constructed_field(evaluator, cls, index, name)
    finally:
        evaluator._active.discard(key)


def _constructed_field(evaluator, cls: ClassValue, index: int, name: str) -> list[Value]:
    found: list[Value] = []
    importers = [] if evaluator.in_own_module_only else evaluator.project.importers_mentioning(cls.model, cls.node.name)
    for where in [cls.model, *importers]:
        for call in where.calls_or_partials_of(cls.node.name):
            if _terminal_name(call.func) != cls.node.name or evaluator.value(where, call.func) != cls:
                continue
            keyword = next((k.value for k in call.keywords if k.arg == name), None)
            positional = [a for a in call.args[:index + 1] if not isinstance(a, ast.Starred)]
            given = keyword if keyword is not None else call.args[index] if len(positional) > index else None
            value = evaluator.value(where, given) if given is not None else UNKNOWN
            if value is not UNKNOWN and value not in found:
                found.append(value)
    return found


def _vmapped_sites(evaluator, model: "ModuleModel", name: str, is_it):
    """`jax.vmap(f)(x, ...)` / `jax.vmap(functools.partial(f, ...))(x, ...)`: `f` gets each operand's slice."""
    for call in model.calls_named("vmap"):
        if not call.args or len(call.args) > 2 or any(k.arg != "in_axes" for k in call.keywords) \
                or not _may_be(model, call.args[0], name):
            continue
        outer = model.parents.get(call)
        if not (isinstance(outer, ast.Call) and outer.func is call) or any(
                isinstance(a, ast.Starred) for a in outer.args) or any(k.arg is None for k in outer.keywords):
            continue
        if evaluator.value(model, call.func) != Api("jax.vmap"):
            continue
        mapped = evaluator.value(model, call.args[0])
        bound_args, bound_kwargs = [], {}
        if isinstance(mapped, Partial):
            bound_args, bound_kwargs, mapped = list(mapped.args), dict(mapped.kwargs), mapped.func
        if not is_it(mapped):
            continue
        axes_node = next((k.value for k in call.keywords if k.arg == "in_axes"), call.args[1] if len(call.args) > 1 else None)
        axes = evaluator.value(model, axes_node) if axes_node is not None else Const(0)
        args = unbatched([evaluator.value(model, a) for a in outer.args], [axes])
        kwargs = {k.arg: evaluator.value(model, k.value) for k in outer.keywords}  # keywords: always on axis 0
        kwargs = dict(zip(kwargs, unbatched(list(kwargs.values()), [Const(0)])))
        yield outer, mapped, CallArguments(evaluator, model, [], [], (bound_args + args, {**bound_kwargs, **kwargs}))


def _may_be(model: "ModuleModel", expr: ast.expr, name: str, depth: int = 0) -> bool:
    """Whether `expr` is written as `name` or a `partial` of it (through a name's one assignment): the test
    before evaluating it, so that the search for another function's call sites evaluates no vmapped function
    (an evaluation in progress there is cut short, and its unknown kept)."""
    if _terminal_name(expr) == name:
        return True
    if isinstance(expr, ast.Call) and _terminal_name(expr.func) == "partial" and expr.args:
        return _may_be(model, expr.args[0], name, depth + 1)
    if isinstance(expr, ast.Name) and depth < 3:
        binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
        return binding is not None and binding.kind == "assign" and binding.value is not None \
            and _may_be(model, binding.value, name, depth + 1)
    return False


def _forward_rule_sites(evaluator, model: "ModuleModel", func_node: ast.AST, name: str, depth: int):
    """`primal.defvjp(fwd, bwd)`: JAX calls `fwd` with the arguments of each call of `primal` (under a
    derivative), so `fwd`'s call sites are `primal`'s."""
    if not model.mentions("defvjp"):
        return
    for call in model.calls_named("defvjp"):
        if not (call.args and _terminal_name(call.args[0]) == name and isinstance(call.func, ast.Attribute)):
            continue
        forward = evaluator.value(model, call.args[0])
        primal = evaluator.value(model, call.func.value)
        if not (isinstance(forward, Func) and forward.node is func_node and isinstance(primal, Func)
                and primal.self_value is None and not isinstance(primal.node, ast.Lambda)):
            continue
        for where, site, _, arguments in argument_sites(evaluator, primal.model, primal.node, depth + 1):
            yield where, site, forward, arguments


def wrapped_call(model: "ModuleModel", wrap: ast.Call) -> ast.Call | None:
    """The call of what `wrap` (`jax.jit(f)`) made: `jax.jit(f)(x)` or `jax.jit(f).trace(x)` / `.lower(x)`."""
    parent = model.parents.get(wrap)
    if isinstance(parent, ast.Call) and parent.func is wrap:
        return parent
    if isinstance(parent, ast.Attribute) and parent.attr in ("trace", "lower"):
        outer = model.parents.get(parent)
        if isinstance(outer, ast.Call) and outer.func is parent:
            return outer
    return None
