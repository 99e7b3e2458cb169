"""A kernel body ref's `.shape` / `.dtype` written with what its launch already says of that ref.

JAX gives a body its refs from the launch: a scratch ref is `plgpu.SMEM((block_rows, hidden), x.dtype)` of
`scratch_types`, an output ref the `jax.ShapeDtypeStruct(x.shape, x.dtype)` of `out_type`, an input ref (of a
pallas_call, a block of) the operand `x`. So a buffer type the body computes from them (`plgpu.SMEM(tile.shape,
jnp.float32)`, `staging_type(tile.dtype, tile.shape)`) is written at the launch with those expressions:
`plgpu.SMEM((block_rows, hidden), jnp.float32)`, exact for every configuration the launch is built with.
"""

from __future__ import annotations

import ast
import re

from ..analysis.values import Api

# Constructors whose ref has the shape and dtype of their first two arguments (nothing else given).
_SHAPED = ("plgpu.SMEM", "plgpu.TMEM", "plgpu.GMEM", "pltpu.VMEM", "pltpu.SMEM", "pltpu.HBM", "pltpu.ANY", "pl.ANY",
           "jax.ShapeDtypeStruct")
_ORIGIN = re.compile(r"^(in_specs|operand|out_shape|out_type|scratch_shapes|scratch_types)(?:\[(\d+|'[^']*')\]| (\d+))?$")


def ref_attribute_at_launch(project, model, binding, entry, attr: str) -> str | None:
    """`ref.<attr>` (shape or dtype) of the body parameter `binding` as `entry`'s launch writes it, or None where
    the launch does not say it in code of its own (a grid spec, a computed list, an operand that is no name)."""
    from ..analysis.kernel_args import kernel_parameters

    if binding.kind != "param" or entry.model is not model or attr not in ("shape", "dtype"):
        return None
    try:
        params = kernel_parameters(project, entry)
    except Exception:  # noqa: BLE001 - an analysis gap is no fix, never a crash of the code action
        return None
    param = next((p for p in params if p.node is binding.node), None)
    matched = _ORIGIN.match(param.origin) if param is not None else None
    if matched is None:
        return None
    field, key = matched.group(1), matched.group(2) or matched.group(3)
    if field in ("scratch_shapes", "scratch_types", "out_shape", "out_type"):
        if field.startswith("out") and attr == "shape" and entry.api == "pl.pallas_call" and (
                entry.kernel.kwarg("out_specs") is not None or entry.kernel.kwarg("grid_spec") is not None):
            return None  # the block's shape: ref_block_shape reads the BlockSpec
        item = _launch_item(project, model, entry, field, key)
        return _constructor_argument(project, model, item, attr) if item is not None else None
    blocked = field == "in_specs" and entry.kernel.kwarg("in_specs") is not None
    if attr == "shape" and (blocked or entry.kernel.kwarg("grid_spec") is not None):
        return None  # a block of the operand: its BlockSpec says the shape (ref_block_shape)
    index = int(key) if key is not None and key.isdigit() else None
    if index is not None and field == "in_specs":
        index += _prefetched(project, entry)  # in_specs come after the scalar prefetch operands
    operand = _operand(model, entry, index) if index is not None and index >= 0 else None
    return f"{ast.get_source_segment(model.text, operand)}.{attr}" if operand is not None else None


def _prefetched(project, entry) -> int:
    """The launch's scalar prefetch operands, -1 where not known statically."""
    from ..analysis.kernel_args import launch_field
    from ..analysis.values import Const

    count = launch_field(project, entry, "num_scalar_prefetch")
    if count is None:
        return 0
    return count.value if isinstance(count, Const) and type(count.value) is int else -10**6


def _launch_item(project, model, entry, field: str, key: str | None) -> ast.AST | None:
    """The expression the launch's keyword `field` writes for one ref: its item `key` (an index or a dict key) of
    a list, tuple or dict literal, the whole value where `key` is None (a single output)."""
    found = entry.kernel.kwarg(field)
    node = found[1] if found else None
    if node is None and field in ("out_shape", "out_type") and isinstance(entry.node, ast.Call) \
            and len(entry.node.args) > 1:
        node = entry.node.args[1]  # pallas_call(body, out_shape)
    node = _followed(model, entry, node)
    if node is None or key is None:
        return node
    if key.startswith("'"):
        wanted = key[1:-1]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
                and not node.args and model.lookup("dict", model.scope_of(node), node.lineno) is None:
            return next((k.value for k in node.keywords if k.arg == wanted), None)  # dict(tile=...)
        if not isinstance(node, ast.Dict):
            return None
        return next((v for k, v in zip(node.keys, node.values)
                     if isinstance(k, ast.Constant) and k.value == wanted), None)
    if not isinstance(node, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in node.elts):
        return None
    index = int(key)
    return node.elts[index] if index < len(node.elts) else None


def _followed(model, entry, node: ast.AST | None) -> ast.AST | None:
    """`node`, or what the name it is was assigned once in the launch's own function (`scratch = [...]`)."""
    if not isinstance(node, ast.Name):
        return node
    binding = model.lookup(node.id, model.scope_of(node), node.lineno)
    scope = model.scope_of(entry.node)
    if (binding is None or binding.kind != "assign" or binding.value is None
            or model.scope_of(binding.node) is not scope or len(model.scopes[scope].bindings.get(node.id, [])) != 1):
        return None
    return binding.value


def _constructor_argument(project, model, item: ast.AST, attr: str) -> str | None:
    """The shape or dtype argument of `plgpu.SMEM(shape, dtype)` / `jax.ShapeDtypeStruct(shape, dtype)`, where it
    says nothing else (transforms, a layout or a sharding could change what the ref looks like)."""
    if not isinstance(item, ast.Call) or any(isinstance(a, ast.Starred) for a in item.args) or len(item.args) > 2:
        return None
    given = dict(zip(("shape", "dtype"), item.args)) | {k.arg: k.value for k in item.keywords}
    if set(given) != {"shape", "dtype"}:
        return None
    constructor = project.evaluator.value(model, item.func)
    if not (isinstance(constructor, Api) and constructor.name in _SHAPED):
        return None
    return ast.get_source_segment(model.text, given[attr])


def _operand(model, entry, index: int) -> ast.AST | None:
    """The launch's operand `index`, where it is a name or an attribute path (`x`, `self.weights`): written once
    more, it means the same."""
    call = model.parents.get(entry.node)
    if not (isinstance(call, ast.Call) and call.func is entry.node) or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args) or index >= len(call.args):
        return None
    operand = node = call.args[index]
    while isinstance(node, ast.Attribute):
        node = node.value
    return operand if isinstance(node, ast.Name) else None


def item_of(code: str, index: int) -> str | None:
    """Item `index` of a tuple written as a literal (`(block_rows, hidden)`, 1 -> `hidden`), else None."""
    try:
        parsed = ast.parse(code, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(parsed, ast.Tuple) or any(isinstance(e, ast.Starred) for e in parsed.elts) \
            or not -len(parsed.elts) <= index < len(parsed.elts):
        return None
    return ast.get_source_segment(code, parsed.elts[index])
