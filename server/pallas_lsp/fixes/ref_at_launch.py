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

    if binding.kind == "unpack" and entry.model is model and attr in ("shape", "dtype"):
        return _tail_output_attribute(project, model, binding, entry, attr)
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
    index = int(key) if key is not None and key.isdigit() else None
    # A pallas_call given in_specs hands its body blocks, whether the analysis matched the ref to a spec or (a list
    # changed in place) only to its operand; a spec with a memory space only hands it the whole operand.
    blocked = (field == "in_specs" or (field == "operand" and entry.api == "pl.pallas_call")) \
        and entry.kernel.kwarg("in_specs") is not None and not _whole_operand(project, model, entry, index)
    if attr == "shape" and (blocked or entry.kernel.kwarg("grid_spec") is not None):
        return None  # a block of the operand: its BlockSpec says the shape (ref_block_shape)
    if index is not None and field == "in_specs":
        index += _prefetched(project, entry)  # in_specs come after the scalar prefetch operands
    operand = _operand(model, entry, index) if index is not None and index >= 0 else None
    return f"{ast.get_source_segment(model.text, operand)}.{attr}" if operand is not None else None


def _tail_output_attribute(project, model, binding, entry, attr: str) -> str | None:
    """`out.<attr>` of an output a `def body(*refs)` unpacks from its last refs (`ins, (out,) = refs[:n], refs[n:]`):
    where the launch takes no scratch those are its outputs, the last one the last of `out_type`."""
    from .kernel_edits import tail_unpacking
    from .semaphore_out_of_out_type import _scratch_count

    body = entry.body
    function = body.node if body is not None and body.model is model else None
    tail = tail_unpacking(function) if isinstance(function, ast.FunctionDef) else None
    names = [e.id for e in tail.elts] if tail is not None else []
    scope = model.scopes.get(function) if names else None
    name = next((n for n in names if scope is not None and any(b is binding for b in scope.bindings.get(n, ()))), None)
    if name is None or _scratch_count(entry) != 0:
        return None
    field = "out_type" if entry.kernel.kwarg("out_type") is not None else "out_shape"
    outputs = _launch_item(project, model, entry, field, None)
    from_end = len(names) - names.index(name)
    if isinstance(outputs, (ast.Tuple, ast.List)) and len(outputs.elts) >= from_end:
        item = outputs.elts[-from_end]
    elif isinstance(outputs, ast.Call) and from_end == 1 == len(names):
        item = outputs
    else:
        return None
    return _constructor_argument(project, model, item, attr)


def ref_stand_in(project, model, binding, entry) -> str | None:
    """Something of the ref's shape and dtype written at the launch, for a function that reads only those of it:
    a scratch ref's type (`plgpu.SMEM((ROWS, d), x.dtype)`), the operand a whole-operand ref is (`x`), an
    output's `jax.ShapeDtypeStruct`. None for a block of an operand, or what the launch does not write."""
    from ..analysis.kernel_args import kernel_parameters

    if binding.kind != "param" or entry.model is not model:
        return None
    param = next((p for p in kernel_parameters(project, entry) if p.node is binding.node), None)
    matched = _ORIGIN.match(param.origin) if param is not None else None
    if matched is None:
        return None
    field, key = matched.group(1), matched.group(2) or matched.group(3)
    if field.startswith("scratch") or (field.startswith("out") and entry.api != "pl.pallas_call"):
        item = _launch_item(project, model, entry, field, key)
        if item is None or _constructor_argument(project, model, item, "shape") is None:
            return None
        return ast.get_source_segment(model.text, item)
    if field == "operand" and entry.api != "pl.pallas_call" and key is not None and key.isdigit():
        operand = _operand(model, entry, int(key))
        return ast.get_source_segment(model.text, operand) if operand is not None else None
    return None


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
    spec = entry.kernel.kwarg("grid_spec")
    spec = _followed(model, entry, spec[1]) if spec and field.startswith("scratch") else None
    if node is None and isinstance(spec, ast.Call):  # `grid_spec=pltpu.PrefetchScalarGridSpec(scratch_shapes=[...])`
        node = next((k.value for k in spec.keywords if k.arg == field), None)
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
    reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Load)]
    if len(reads) != 1:
        return None  # `scratch.insert(0, ...)` may have moved its items
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


def item_of(code: str, index: int | slice) -> str | None:
    """Item `index` of a tuple written as a literal (`(block_rows, hidden)`, 1 -> `hidden`), or the tuple of the
    items a slice takes (`[:-1]` -> `(block_rows,)`), else None."""
    try:
        parsed = ast.parse(code, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(parsed, ast.Tuple) or any(isinstance(e, ast.Starred) for e in parsed.elts):
        return None
    items = [ast.get_source_segment(code, e) for e in parsed.elts]
    if isinstance(index, slice):
        taken = items[index]
        return f"({taken[0]},)" if len(taken) == 1 else f"({', '.join(taken)})"
    return items[index] if -len(items) <= index < len(items) else None


def constant_index(node: ast.AST) -> int | slice | None:
    """The index a subscript's constant slice takes (`[1]`, `[-1]`, `[:-1]`, `[1:]`), None for any other."""
    def number(bound):
        if bound is None:
            return True, None
        if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
            ok, value = number(bound.operand)
            return ok and value is not None, -value if ok and value is not None else None
        return isinstance(bound, ast.Constant) and type(bound.value) is int, getattr(bound, "value", None)

    if isinstance(node, ast.Slice):
        parts = [number(b) for b in (node.lower, node.upper, node.step)]
        return slice(*(v for _, v in parts)) if all(ok for ok, _ in parts) else None
    ok, value = number(node)
    return value if ok and value is not None else None


def folded(code: str) -> str:
    """`code` with each sum of tuples written as literals made one (`(block_rows,) + (1,)` -> `(block_rows, 1)`),
    as an author writes a shape; `code` itself where there is none (or it is not ASCII, whose columns are bytes)."""
    for _ in range(8):
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            return code
        if not code.isascii():
            return code
        sums = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)
                and all(isinstance(side, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in side.elts)
                        for side in (n.left, n.right))]
        if not sums:
            return code
        node = sums[-1]  # an innermost one: ast.walk is breadth-first
        items = [ast.get_source_segment(code, e) for e in (*node.left.elts, *node.right.elts)]
        text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        lines = code.split("\n")
        start = sum(len(line) + 1 for line in lines[:node.lineno - 1]) + node.col_offset
        stop = sum(len(line) + 1 for line in lines[:node.end_lineno - 1]) + node.end_col_offset
        code = code[:start] + text + code[stop:]
    return code


def _whole_operand(project, model, entry, index: int | None) -> bool:
    """The launch's in_specs[index] is written `pl.BlockSpec(memory_space=...)` with no block shape: the ref is
    the whole operand (jax 0.12: a BlockSpec without block_shape maps the full array), so its shape is the
    operand's."""
    found = entry.kernel.kwarg("in_specs")
    written = found[1] if found else None
    if index is None or not isinstance(written, (ast.List, ast.Tuple)) or index >= len(written.elts) \
            or any(isinstance(e, ast.Starred) for e in written.elts):
        return False
    spec = written.elts[index]
    if not (isinstance(spec, ast.Call) and not spec.args and all(k.arg == "memory_space" for k in spec.keywords)):
        return False
    callee = project.evaluator.value(model, spec.func)
    return isinstance(callee, Api) and callee.name == "pl.BlockSpec"
