"""A traced function's arguments from a call of it, read by the analysis's own evaluator.

`targets.resolve_args` reads a call's arguments with a small evaluator of its own (module constants,
the calling function's assignments). Where that finds no static shape, the same engine as hovers
(analysis/evaluate.py, through the project's environment) often does: `x = jnp.ones((128, 256))`
in an `if __name__ == "__main__":` block, an array built by a helper, an attribute. Nothing is run.
"""

from __future__ import annotations

import ast

from ..analysis.kernel_args import array_type
from .targets import ArgSpec, TargetArgs


def inferred_call_args(project, path: str, text: str, function: str) -> TargetArgs | None:
    """The arguments of the first call of `function` (or `jax.jit(function)`) in the file whose every
    positional argument the evaluator knows the full shape and dtype of; None if no call gives them."""
    if "." in function:
        return None
    model = project.model(path, text)
    if model.tree is None:
        return None
    for call in model.calls:
        target = call.func
        if isinstance(target, ast.Call) and ast.unparse(target.func).split(".")[-1] == "jit" and target.args:
            target = target.args[0]
        if not (isinstance(target, ast.Name) and target.id == function) or call.keywords:
            continue
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        specs = []
        for argument in call.args:
            shape, dtype = array_type(project.evaluator.value(model, argument))
            if shape is None or dtype is None or any(not isinstance(d, int) for d in shape):
                break
            specs.append(ArgSpec(str(dtype), tuple(shape)))
        else:
            return TargetArgs(tuple(specs), f"call on line {call.lineno}, as the analysis reads it")
    return None
