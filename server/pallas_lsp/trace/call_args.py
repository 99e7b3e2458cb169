"""A traced function's arguments from a call of it, read by the analysis's own evaluator.

`targets.resolve_args` reads a call's arguments with a small evaluator of its own (module constants,
the calling function's assignments). Where that finds no static shape, the same engine as hovers
(analysis/evaluate.py, through the project's environment) often does, at the same call sites hovers
read: `x = jnp.ones((128, 256))` in an `if __name__ == "__main__":` block, an array built by a helper, a
call in a test module importing the function, `jax.eval_shape(f, ...)`, `jax.jit(f).trace(...)`. Python
values the call passes (`2.0`, `block=64`, `dtype=jnp.bfloat16`) are bound as it binds them. Nothing is run.
"""

from __future__ import annotations

import ast
import os

from ..analysis.arrays import dtype_name
from ..analysis.kernel_args import array_type
from ..analysis.evaluate import terminal_name
from ..analysis.values import Const, Value
from .targets import ArgSpec, StaticArg, TargetArgs


def inferred_call_args(project, path: str, text: str, function: str) -> TargetArgs | None:
    """The arguments of the first call of `function` (directly, through `jax.jit`, `jax.eval_shape`, here or
    in a module importing it) whose every argument the evaluator knows: an array's full shape and dtype, a
    number, string, bool, None or dtype as it is; None if no call gives them."""
    if "." in function:
        return None
    model = project.model(path, text)
    if model.tree is None:
        return None
    definition = next((s for s in model.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and s.name == function), None)
    if definition is None:
        return _assigned_call_args(project, model, function)
    for where, call, _func, args, kwargs in project.evaluator.call_sites_with_nodes(model, definition):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
                or terminal_name(call.func) == "partial":  # a partial is called elsewhere, with the rest
            continue
        specs = _arguments(args, kwargs)
        if specs is not None:
            line = where.source.span(call).line + 1
            place = "" if where is model else f" of {os.path.basename(where.path)}"
            return TargetArgs(specs, f"call on line {line}{place}, as the analysis reads it")
    return None


def _assigned_call_args(project, model, function: str) -> TargetArgs | None:
    """`kernel = pl.pallas_call(...)` called in its own module with positional arrays."""
    for call in model.calls:
        target = call.func
        if isinstance(target, ast.Call) and ast.unparse(target.func).split(".")[-1] == "jit" and target.args:
            target = target.args[0]
        if not (isinstance(target, ast.Name) and target.id == function) or call.keywords:
            continue
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        specs = _arguments([project.evaluator.value(model, a) for a in call.args], {})
        if specs is not None and all(isinstance(s, ArgSpec) for s in specs):
            return TargetArgs(specs, f"call on line {call.lineno}, as the analysis reads it")
    return None


def _arguments(args: list[Value], kwargs: dict[str, Value]) -> tuple[ArgSpec | StaticArg, ...] | None:
    found = []
    for keyword, value in [*((None, a) for a in args), *kwargs.items()]:
        argument = _argument(value, keyword)
        if argument is None:
            return None
        found.append(argument)
    return tuple(found)


def _argument(value: Value, keyword: str | None) -> ArgSpec | StaticArg | None:
    shape, dtype = array_type(value)
    if shape is not None and dtype is not None and all(isinstance(d, int) for d in shape):
        return ArgSpec(str(dtype), tuple(shape), keyword)
    if isinstance(value, Const) and (value.value is None or type(value.value) in (int, float, str, bool)):
        return StaticArg(value.value, keyword)
    name = dtype_name(value)
    if name is not None and not isinstance(value, Const):
        return StaticArg(name, keyword, dtype=True)
    return None
