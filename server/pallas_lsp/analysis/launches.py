"""Launches: the calls that run a built kernel (`kernel(x, y)`, `plgpu.kernel(body, ...)(x, y)`, a decorated
body called, a `functools.partial` of one), and the wrappers that only forward their `*operands` to one."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import reads
from .kernels import entry_kernels
from .values import Func, KernelCall, Partial

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project


@dataclass(frozen=True)
class Launch:
    """A call that runs a built kernel: `kernel(x, y)`, `plgpu.kernel(body, ...)(x, y)`, a decorated body called."""

    api: str
    model: "ModuleModel"
    call: ast.Call
    kernel: KernelCall


def kernel_launches(project: "Project", model: "ModuleModel") -> list[Launch]:
    """Calls in `model` that run a built kernel, wherever that kernel was built (cached with the module text)."""
    cached = model.eval_cache.get("kernel-launches")
    if cached is None:  # it reads every call (an edit of one forgets it) and their callees' values
        cached = reads.kept(model.eval_cache, "kernel-launches", lambda: _kernel_launches(project, model),
                            model.read_key, ("calls", id(model), "*"))
    return cached


def _kernel_launches(project: "Project", model: "ModuleModel") -> list[Launch]:
    found = []
    for call in model.calls:
        kernel = _launched_kernel(project, model, call.func)
        if kernel is not None:
            found.append(Launch(kernel.api, model, call, kernel))
    return found


def _launched_kernel(project: "Project", model: "ModuleModel", func_node: ast.AST) -> KernelCall | None:
    value = project.evaluator.value(model, func_node)
    while isinstance(value, Partial):  # functools.partial(kernel, operand): a call of it launches the kernel
        value = value.func
    if isinstance(value, KernelCall):
        return value if value.body is not None else None  # without a body it is a decorator, not a kernel
    decorators = getattr(value.node, "decorator_list", None) if isinstance(value, Func) else None
    if decorators:
        for _, node, kernel in entry_kernels(project, value.model):
            if node in decorators:
                return kernel
    return None


def forwards_to_launch(project: "Project", model: "ModuleModel", call: ast.Call) -> bool:
    """`call` calls a wrapper of this module that only forwards its `*operands` to a kernel launch."""
    wrappers = _launch_wrappers(project, model)
    if not wrappers:
        return False
    target = project.evaluator.value(model, call.func)
    return isinstance(target, Func) and target.model is model and id(target.node) in wrappers


def _launch_wrappers(project: "Project", model: "ModuleModel") -> dict[int, ast.FunctionDef]:
    """id(node) -> the functions of `model` that only forward their `*operands` to a kernel launch (cached
    with the module text)."""
    cached = model.eval_cache.get("launch-wrappers")
    if cached is None:
        forwarded = {id(launch.call) for launch in kernel_launches(project, model)}
        cached = {id(f): f for f in model.functions
                  if forwarded and id(forwarding_call(f)) in forwarded}
        model.eval_cache["launch-wrappers"] = cached
    return cached


def forwarding_call(node: ast.AST) -> ast.Call | None:
    """The call a wrapper `def f(*args): return g(..., *args)` is made of (how PAL001's fix gives a decorated
    kernel an operand), where its one statement returns a call its `*args` go on to."""
    if not isinstance(node, ast.FunctionDef) or node.decorator_list or node.args.vararg is None:
        return None
    statements = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(statements) != 1 or not isinstance(statements[0], ast.Return) or not isinstance(statements[0].value, ast.Call):
        return None
    call = statements[0].value
    vararg = node.args.vararg.arg
    if not any(isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id == vararg for a in call.args):
        return None
    return call
