"""Code that runs outside any kernel: jitted functions, functions that launch a kernel, and what they run.

PAL001 and PAL008 ask it whether a `get_global` or a semaphore sits in host code (JAX then fails with
`Cannot lower jaxpr with effects` or `No ir_type_handler`, not with a kernel's error).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import reads
from .chosen_bodies import undetermined_bodies
from .kernels import KernelIndex, reachable_functions
from .launches import _launch_wrappers, forwards_to_launch, kernel_launches
from .values import Api, Func

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project


_JIT = {"jax.jit", "jax.api.jit", "jax.pjit.jit"}


@dataclass(frozen=True)
class HostFunction:
    """Code that runs outside any kernel: `function` (a node) is jitted (`jitted`), or launches a kernel; `node`
    is the jit call or decorator, or the launch, in `model`."""

    function: ast.AST
    node: ast.AST
    model: "ModuleModel"
    jitted: bool


def host_functions(project: "Project", model: "ModuleModel") -> dict[int, HostFunction]:
    """id(function node of `model`) -> the HostFunction that runs it outside any kernel: a function jitted or
    launching a kernel, here or in a workspace module importing this one, and every function it runs that is
    no kernel body (cached with the module text)."""
    cached = model.eval_cache.get("host-functions")
    if cached is not None:
        return cached
    with reads.frame():
        return _host_functions(project, model)


def _host_functions(project: "Project", model: "ModuleModel") -> dict[int, HostFunction]:
    found: dict[int, HostFunction] = {}
    for source in [model, *project.importers(model)]:
        entries = KernelIndex.of(project, source).entries
        bodies = {id(e.body.node) for e in entries if e.body is not None}
        bodies |= undetermined_bodies(project.evaluator, source, entries)  # may be the body: not known outside
        starts = [(func, HostFunction(func.node, jit, source, True)) for func, jit in _jitted_functions(project, source).values()]
        launches = kernel_launches(project, source)
        for launch in launches:
            func = source.enclosing_function(launch.call)
            if func is not None and id(func) not in bodies:
                starts.append((Func(source, func), HostFunction(func, launch.call, source, False)))
        # A call of a wrapper that only forwards its `*operands` to a launch (`def body(*operands): return
        # body_kernel(zeros, *operands)`, as PAL001's fix writes it) runs the kernel too: its function is outside
        # it. Not a launch itself (its arguments are not the body's parameters one for one).
        # Any call whose callee is such a wrapper, by its name or an alias (`fn = body; fn(x, sem)`).
        for call in source.calls if _launch_wrappers(project, source) else ():
            func = source.enclosing_function(call)
            if func is not None and id(func) not in bodies and forwards_to_launch(project, source, call):
                starts.append((Func(source, func), HostFunction(func, call, source, False)))
        for func, host in sorted(starts, key=lambda start: not start[1].jitted):  # a jit says more than a launch
            for reachable in reachable_functions(project, func, exclude=bodies):
                if reachable.model is model:
                    found.setdefault(id(reachable.node), host)
    model.eval_cache["host-functions"] = found
    return found


def _jitted_functions(project, model) -> dict[int, tuple[Func, ast.AST]]:
    """id(function node) -> (the function, the jit call or decorator), for functions jitted in `model` (a
    jitted function of another module counts where it is defined)."""
    if not model.mentions("jit"):
        return {}
    evaluate = project.evaluator.value
    found: dict[int, tuple[Func, ast.AST]] = {}
    for call in model.calls_named("jit"):
        callee = evaluate(model, call.func)
        if isinstance(callee, Api) and callee.name in _JIT and call.args:
            target = evaluate(model, call.args[0])
            if isinstance(target, Func):
                found[id(target.node)] = (target, call)
    for func in model.functions:
        for decorator in getattr(func, "decorator_list", []):
            callee = evaluate(model, decorator.func if isinstance(decorator, ast.Call) else decorator)
            if isinstance(callee, Api) and callee.name in _JIT:
                found[id(func)] = (Func(model, func), decorator)
    index = KernelIndex.of(project, model)
    for entry in index.entries:  # a kernel body is never "outside a kernel"
        if entry.body is not None:
            found.pop(id(entry.body.node), None)
    return found
