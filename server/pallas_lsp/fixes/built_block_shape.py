"""A BlockSpec's block shape built by a call at the launch (`pl.BlockSpec(cfg.block(cols), ...)`), read by a body.

Configs often build their block shapes with a method (`def block(self, cols): return (self.block_rows, cols)`),
and a body sizes a buffer from its ref (`pltpu.VMEM(g_ref.shape, ...)`, `g_ref.shape[-1]`). At the launch the
whole shape is that call (`cfg.block(cols)`), and one item of it is the item the function returns, written with
what the call passes (`cols` for `[-1]`, `cfg.block_rows` for `[0]`): right for every configuration the launch is
built with, and read as the author would write it. Only where the function is one of the workspace whose one
`return` is a tuple display, and each returned item is a constant, a parameter, or an attribute of `self`.
"""

from __future__ import annotations

import ast

from ..analysis.values import Api, Const, Func, Seq


def is_block_shape(project, model, shape: ast.Call) -> bool:
    """`shape` (a call) evaluates to a tuple of dimensions the ref keeps whole: no `None`, no squeezed or other
    block-dimension object (which would hand the body a ref of another rank)."""
    value = project.evaluator.value(model, shape)
    return isinstance(value, Seq) and bool(value.items) and not any(
        isinstance(item, Api) or (isinstance(item, Const) and item.value is None) for item in value.items)


def inlined_shape(project, model, shape: ast.Call) -> str | None:
    """The tuple the call returns, each item written with what the call passes (`(cfg.block_rows, cols)`), or None
    where the function is not a workspace one returning one tuple display of constants, parameters and `self.x`."""
    callee = project.evaluator.value(model, shape.func)
    function = callee.node if isinstance(callee, Func) else None
    if (not isinstance(function, ast.FunctionDef) or any(isinstance(a, ast.Starred) for a in shape.args)
            or any(k.arg is None for k in shape.keywords) or callee.model is not model):
        return None
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) or any(
            isinstance(e, ast.Starred) for e in returns[0].value.elts):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    receiver = None
    if callee.self_value is not None:  # a bound method: `self` is what the call's attribute is read from
        if not (isinstance(shape.func, ast.Attribute) and positional):
            return None
        receiver = ast.get_source_segment(model.text, shape.func.value)
        self_name, positional = positional[0].arg, positional[1:]
    else:
        self_name = None
    passed = {arg.arg: ast.get_source_segment(model.text, value) for arg, value in zip(positional, shape.args)}
    passed.update({k.arg: ast.get_source_segment(model.text, k.value) for k in shape.keywords})
    items = []
    for element in returns[0].value.elts:
        if isinstance(element, ast.Constant) and type(element.value) is int:
            items.append(repr(element.value))
        elif isinstance(element, ast.Name) and passed.get(element.id):
            items.append(passed[element.id])
        elif (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
              and element.value.id == self_name and receiver):
            items.append(f"{receiver}.{element.attr}")
        else:
            return None
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
