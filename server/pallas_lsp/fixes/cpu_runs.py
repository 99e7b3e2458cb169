"""Whether something in the workspace runs a kernel on a CPU, so that "Run the kernel compiled" would break it.

Compiled, a Pallas kernel does not run on a CPU (jax 0.12: "Only interpret mode is supported on CPU
backend"). Removing the interpret switch is safe for the code that runs the kernel only where the switch is
written as a constant (`interpret=True`, `plgpu.InterpretGPUParams()`, a module constant set so, an
unconditional `with plgpu.force_gpu_interpret_mode():`) and no test or CPU-only program reaches the kernel's
module: a value from a parameter, a config object, a command-line flag or the environment is there for the
runs that want the interpreter, and a test (or a program that picks the CPU platform) is one of those runs.
"""

from __future__ import annotations

import ast
import os
import re

from ..analysis.values import Api

_INTERPRETER_PARAMS = ("plgpu.InterpretGPUParams", "pltpu.InterpretParams")
# Code that makes JAX use the CPU: `JAX_PLATFORMS=cpu`, `jax.config.update("jax_platforms", "cpu")`,
# `jax_platform_name`, `jax.devices("cpu")` (a default device or a placement on it).
_CPU_ONLY = re.compile(r"""(?:JAX_PLATFORMS|jax_platforms|jax_platform_name)\b[^\n]{0,60}?["']cpu["']"""
                       r"""|devices\(\s*(?:backend\s*=\s*)?["']cpu["']\s*\)""")
_MAX_MODULES = 64  # importers followed, transitively, from the kernel's modules


def cpu_run(project, sites, models) -> str | None:
    """Why compiling the kernel would break a run on a CPU (None: nothing found that runs it there). `sites`
    are what makes it interpreted (`InterpretSite`s); `models`, the modules holding its body and launches."""
    for site in sites:
        problem = _variable_switch(project, site)
        if problem is not None:
            return problem
    for path in _reaching(project, [*(m.path for m in models), *(s.model.path for s in sites)]):
        relative = os.path.relpath(path, project.root)
        if _is_test(relative):
            return (f"{relative} is a test that reaches this kernel's module and may run it on a CPU, where a "
                    "compiled kernel does not run (jax 0.12: 'Only interpret mode is supported on CPU backend')")
        if _CPU_ONLY.search(_text(project, path)):
            return (f"{relative} picks the CPU platform and reaches this kernel's module, and on a CPU a compiled "
                    "kernel does not run (jax 0.12: 'Only interpret mode is supported on CPU backend')")
    return None


def _variable_switch(project, site) -> str | None:
    """Why the switch at `site` is one some runs set (a parameter, a setting), not a constant; None if constant."""
    model, node = site.model, site.node
    keyword = node if isinstance(node, ast.keyword) else model.parents.get(node)
    if isinstance(keyword, ast.keyword):
        if _constant(project, model, keyword.value):
            return None
        return (f"interpret={model.segment(keyword.value, 40)} is decided by a caller, a setting or a flag: the runs "
                "that set it want the interpreter, and on a CPU a compiled kernel does not run (jax 0.12: 'Only "
                "interpret mode is supported on CPU backend')")
    node = model.parents.get(node)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Try, ast.Match)):
            return (f"{model.segment(site.node, 50)} is switched on only in some runs (under a condition), which "
                    "want the interpreter: on a CPU a compiled kernel does not run")
        node = model.parents.get(node)
    return None


def _constant(project, model, value: ast.AST, depth: int = 0) -> bool:
    """`value` is written as a constant interpret switch: True, an interpreter's parameters built here, or a
    module-level name assigned one of those once."""
    if isinstance(value, ast.Constant):
        return value.value is True
    if isinstance(value, ast.Call):
        func = project.evaluator.value(model, value.func)
        return isinstance(func, Api) and func.name in _INTERPRETER_PARAMS
    if isinstance(value, ast.Name) and depth < 3:
        bindings = model.scopes[model.tree].bindings.get(value.id, [])
        binding = model.lookup(value.id, model.scope_of(value), value.lineno)
        return (len(bindings) == 1 and binding is bindings[0] and binding.kind == "assign"
                and binding.value is not None and _constant(project, model, binding.value, depth + 1))
    return False


def _text(project, path: str) -> str:
    try:
        return project.text(path) or ""
    except (OSError, ValueError):
        return ""


def _is_test(relative: str) -> bool:
    parts = relative.replace(os.sep, "/").split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part in ("tests", "test") for part in parts[:-1]))


def _reaching(project, paths: list[str]) -> list[str]:
    """`paths` and the workspace modules that import them, directly or through others (at most _MAX_MODULES)."""
    seen = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    queue = list(seen)
    while queue and len(seen) < _MAX_MODULES:
        path = queue.pop(0)
        for importer in project.index.importers(path, project.module_name(path)):
            if importer not in seen:
                seen.append(importer)
                queue.append(importer)
    return seen[:_MAX_MODULES]
