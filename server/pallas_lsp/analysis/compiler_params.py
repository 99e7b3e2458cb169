"""Where a TPU launch's `pltpu.CompilerParams(...)` is written, and whether it surely gives no `collective_id`.

`pltpu.get_barrier_semaphore()` is the semaphore XLA sets aside for the launch's `collective_id`; without one
jax 0.12 refuses the kernel (compiled: "collective_id has to be specified when using a custom barrier"; the TPU
interpreter: `int(None)` in its callback). The parameters are often made away from the launch, by a helper
(`compiler_params_for(chip)`), a classmethod of a settings class (`Settings.compiler_params()`) or a module
constant: followed here through names, calls of functions and methods whose one `return` gives the call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .call_of import _attribute_call, _returned_call, call_of
from .values import Api, Func

if TYPE_CHECKING:
    from .kernels import EntryPoint
    from .model import ModuleModel
    from .project import Project

PARAMS_API = "pltpu.CompilerParams"
AUTO_ASSIGN_FLAG = "pallas_auto_assign_collective_ids"  # jax.config: ids given by JAX, none needed in the code


@dataclass(frozen=True)
class LaunchParams:
    """A launch's compiler parameters: `call` the `pltpu.CompilerParams(...)` call in `model` (None: the launch
    gives none), `helpers` the functions followed to reach it, outermost first (each called where the one
    before, or the launch, calls it)."""

    call: ast.Call | None
    model: "ModuleModel"
    helpers: tuple[Func, ...] = ()

    @property
    def collective_id(self) -> ast.expr | None:
        return next((k.value for k in self.call.keywords if k.arg == "collective_id"), None) if self.call else None

    @property
    def surely_without_collective_id(self) -> bool:
        """No `collective_id=`, and no `**keywords` that may hold one."""
        return self.call is None or all(k.arg not in ("collective_id", None) for k in self.call.keywords)


def launch_params(project: "Project", entry: "EntryPoint") -> LaunchParams | None:
    """The launch's compiler parameters where they are known; None where they are not (passed through
    `**kwargs`, built by something not followed, or a launch wrapper's)."""
    found = entry.kernel.kwarg("compiler_params")
    if found is None:
        launch = entry.kernel.node
        if launch is not entry.node or not isinstance(launch, ast.Call) or any(k.arg is None for k in launch.keywords):
            return None
        return LaunchParams(None, entry.model)
    node = found[1]
    if node is None:
        return None
    return params_call(project, entry.model, node)


def params_call(project: "Project", model: "ModuleModel", node: ast.AST) -> LaunchParams | None:
    """The `pltpu.CompilerParams(...)` call `node` stands for, through at most three helpers."""
    found = call_of(model, node) or _attribute_call(project, model, node)
    helpers: list[Func] = []
    for _ in range(4):
        if found is None:
            return None
        model, call = found
        callee = project.evaluator.value(model, call.func)
        if isinstance(callee, Api):
            return LaunchParams(call, model, tuple(helpers)) if callee.name == PARAMS_API else None
        if not isinstance(callee, Func) or len(helpers) == 3:
            return None
        returned = _returned_call(callee.node)
        helpers.append(callee)
        found = (callee.model, returned) if returned is not None else None
    return None


def auto_assigns_ids(*models: "ModuleModel") -> bool:
    """Does the code turn on JAX's automatic collective ids (`jax.config.update(...auto_assign...)`)?"""
    return any(AUTO_ASSIGN_FLAG in m.text.lower() for m in models)  # the flag, or its environment variable
