"""What each kernel body parameter is: its role, where it comes from, and its ref type.

JAX passes a kernel body its refs positionally: inputs, then outputs, then scratch. So the role of
a parameter follows from counting: `in_specs` (or the operands at the launch), `out_shape`,
`scratch_shapes`/`scratch_types`. Shapes come from BlockSpecs, `jax.ShapeDtypeStruct`s, memory-space
constructors and array constructors at the launch; whatever is not static stays `?`.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..trace.targets import short_dtype
from .evaluate import as_memtype, dtype_name, shape_of
from .kernels import EntryPoint, KernelIndex
from .values import Api, Const, Func, KernelCall, MemType, Partial, SemaphoreRef, ShapeDtype, Value

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

# Where a BlockSpec-ed block lives when `memory_space` is not given (jax/_src/pallas/mosaic_gpu/pipeline.py
# `_in_smem`: Mosaic GPU copies each block into shared memory).
_SPACE_OF = {"plgpu.GMEM": "gmem", "plgpu.SMEM": "smem", "plgpu.TMEM": "tmem", "pl.ANY": "any",
             "pltpu.VMEM": "vmem", "pltpu.SMEM": "smem", "pltpu.HBM": "hbm", "pltpu.ANY": "any",
             "pl.MemorySpace.ANY": "any"}
_ARRAY_CONSTRUCTORS = {"jnp.zeros": 1, "jnp.ones": 1, "jnp.empty": 1, "jnp.full": 2}


@dataclass(frozen=True)
class KernelParam:
    """One body parameter as JAX will pass it."""

    name: str
    node: ast.arg
    role: str  # "input" | "output" | "scratch"
    origin: str  # e.g. "in_specs[0]", "out_shape", "scratch_types['acc']", "operand 1"
    space: str | None
    shape: tuple[int, ...] | None
    dtype: str | None
    entry: EntryPoint

    @property
    def picture(self) -> str:
        """JAX's picture of the ref, `Ref<smem>{float32[128]}`, with `?` for what is not static."""
        shape = "?" if self.shape is None else ",".join(map(str, self.shape))
        return f"Ref<{self.space or '?'}>{{{self.dtype or '?'}[{shape}]}}"

    @property
    def short(self) -> str:
        """The inlay-hint form, `f32[4,128] gmem`: what is not known statically is left out."""
        dtype = short_dtype(self.dtype) if self.dtype else ""
        shape = "" if self.shape is None else f"[{','.join(map(str, self.shape))}]"
        return " ".join(part for part in (dtype + shape, self.space or "") if part)

    def describe(self) -> str:
        line = self.entry.model.source.span(self.entry.node).line + 1
        body = self.entry.body
        where = f"line {line}" if body is None or body.model is self.entry.model else (
            f"{os.path.basename(self.entry.model.path)} line {line}")
        return f"kernel {self.role} from `{self.origin}` of `{self.entry.api}` ({where})"


@dataclass(frozen=True)
class _Slot:
    role: str
    origin: str
    space: str | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    keyword: str | None = None  # scratch passed by keyword (dict-form scratch_types)


def parameters_of_module(project: "Project", model: "ModuleModel") -> dict[int, list[KernelParam]]:
    """Kernel parameters of every body defined in `model`, keyed by `id(ast.arg)`.

    A body launched by several entry points (here or in modules importing this one) gets one
    KernelParam per entry point.
    """
    launchers = project.importers(model)
    cached = model.eval_cache.get("kernel-params")
    if cached is not None and len(cached[0]) == len(launchers) and all(a is b for a, b in zip(cached[0], launchers)):
        return cached[1]  # same text here and in every module that may launch its kernels
    result: dict[int, list[KernelParam]] = {}
    entries = [e for source in [model, *launchers] for e in KernelIndex.of(project, source).entries]
    for entry in entries:
        try:
            params = kernel_parameters(project, entry)
        except RecursionError:
            continue
        for param in params:
            if param.entry.body is not None and param.entry.body.model is model:
                result.setdefault(id(param.node), []).append(param)
    model.eval_cache["kernel-params"] = (launchers, result)
    return result


def kernel_parameters(project: "Project", entry: EntryPoint) -> list[KernelParam]:
    body = entry.body
    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return []
    bound_positional, bound_keywords = _partial_bindings(entry.kernel.body)
    spec = body.node.args
    positional = [*spec.posonlyargs, *spec.args][bound_positional:]
    positional = [p for p in positional if p.arg not in bound_keywords]
    keyword_only = {p.arg: p for p in spec.kwonlyargs if p.arg not in bound_keywords}
    if entry.api == "pl.core_map":
        return []
    inputs, outputs, scratch = _slots(project, entry)
    by_keyword = [s for s in scratch or [] if s.keyword]
    scratch_positional = None if scratch is None else [s for s in scratch if not s.keyword]
    if inputs is None and outputs is not None and scratch_positional is not None and entry.api != "pl.pallas_call":
        count = len(positional) - len(outputs) - len(scratch_positional)
        space = "gmem" if entry.api == "plgpu.kernel" else None
        inputs = [_Slot("input", _input_origin(entry, i), space) for i in range(max(count, 0))]
    slots: list[_Slot | None] = []
    if inputs is not None:
        slots.extend(inputs)
        if outputs is not None:
            slots.extend(outputs)
            if scratch_positional is not None:
                slots.extend(scratch_positional)
    elif outputs is not None and scratch_positional is not None:
        slots = [None] * max(len(positional) - len(outputs) - len(scratch_positional), 0) + outputs + scratch_positional
    params = []
    for arg, slot in zip(positional, slots):
        if slot is not None:
            params.append(_param(arg, slot, entry))
    for slot in by_keyword:
        arg = keyword_only.get(slot.keyword) or next((p for p in positional if p.arg == slot.keyword), None)
        if arg is not None:
            params.append(_param(arg, slot, entry))
    return params


def _param(arg: ast.arg, slot: _Slot, entry: EntryPoint) -> KernelParam:
    return KernelParam(arg.arg, arg, slot.role, slot.origin, slot.space, slot.shape, slot.dtype, entry)


def _partial_bindings(value: Value | None) -> tuple[int, set[str]]:
    positional, keywords = 0, set()
    while isinstance(value, Partial):
        positional += len(value.args)
        keywords.update(k for k, _ in value.kwargs)
        value = value.func
    return positional, keywords


def _input_origin(entry: EntryPoint, index: int) -> str:
    return f"in_specs[{index}]" if entry.api == "pl.pallas_call" else f"operand {index}"


def _slots(project: "Project", entry: EntryPoint):
    """(inputs, outputs, scratch) slot lists; None where the count is not statically known."""
    evaluator, model = project.evaluator, entry.model
    kernel = entry.kernel
    operands = _launch_operands(project, entry)
    gpu_mosaic = entry.api != "pl.pallas_call" or _is_mosaic_gpu(entry)

    # `grid_spec=pl.GridSpec(...)` / `pltpu.PrefetchScalarGridSpec(...)` carries the specs instead.
    found = kernel.kwarg("grid_spec")
    grid_spec = found[1] if found else None
    spec_keywords = {k.arg: k.value for k in grid_spec.keywords if k.arg} if isinstance(grid_spec, ast.Call) else {}

    def kw_node(*names: str) -> ast.expr | None:
        for name in names:
            found = kernel.kwarg(name)
            if found and found[1] is not None:
                return found[1]
            if name in spec_keywords:
                return spec_keywords[name]
        return None

    prefetch = evaluator.value(model, spec_keywords["num_scalar_prefetch"]) if "num_scalar_prefetch" in spec_keywords else Const(0)
    if not (isinstance(prefetch, Const) and type(prefetch.value) is int):
        return None, None, None
    prefetch_slots = [_Slot("input", f"scalar prefetch {i}", "smem") for i in range(prefetch.value)]
    if operands is not None:
        operands = operands[prefetch.value:]

    # Outputs.
    out_name = next((n for n in ("out_shape", "out_type") if kernel.kwarg(n)), None)
    out_node = kw_node("out_shape", "out_type")
    if out_node is None and entry.api in ("pl.pallas_call", "pl.kernel") and isinstance(entry.node, ast.Call):
        if len(entry.node.args) > 1:  # pallas_call(body, out_shape) / pl.kernel(body, out_type)
            out_node = entry.node.args[1]
            out_name = "out_shape" if entry.api == "pl.pallas_call" else "out_type"
    outputs = None
    if out_node is not None:
        items = _items(out_node)
        out_specs = _items(kw_node("out_specs")) if kw_node("out_specs") is not None else None
        if items is None:
            items, single = [out_node], True
        else:
            single = False
        outputs = []
        for i, node in enumerate(items):
            described = evaluator.value(model, node)
            shape = dtype = None
            if isinstance(described, (ShapeDtype, MemType)):
                shape, dtype = described.shape, described.dtype
            space = "gmem" if gpu_mosaic and entry.api != "pl.pallas_call" else None
            if entry.api == "pl.pallas_call":
                spec_node = out_specs[i] if out_specs is not None and i < len(out_specs) else (
                    kw_node("out_specs") if out_specs is None and single else None)
                space, shape = _block(project, model, spec_node, shape, gpu_mosaic)
            outputs.append(_Slot("output", out_name if single else f"{out_name}[{i}]", space, shape, dtype))
    elif entry.api != "pl.pallas_call":
        outputs = []  # plgpu.kernel / pl.kernel default: no outputs

    # Scratch.
    scratch_name = next((n for n in ("scratch_shapes", "scratch_types") if kernel.kwarg(n)), "scratch_shapes")
    scratch_node = kw_node("scratch_shapes", "scratch_types")
    if isinstance(scratch_node, ast.Call) and isinstance(scratch_node.func, ast.Name) and \
            scratch_node.func.id == "dict" and not scratch_node.args:
        scratch_node = ast.Dict(keys=[ast.Constant(k.arg) if k.arg else None for k in scratch_node.keywords],
                                values=[k.value for k in scratch_node.keywords])
    if scratch_node is None:
        scratch = [] if not kernel.kwarg("scratch_shapes") and not kernel.kwarg("scratch_types") else None
        scratch = None if isinstance(grid_spec, ast.Call) and "scratch_shapes" in spec_keywords else scratch
    elif isinstance(scratch_node, ast.Dict):
        scratch = []
        for key, node in zip(scratch_node.keys, scratch_node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                scratch = None
                break
            scratch.append(_scratch_slot(evaluator.value(model, node), f"{scratch_name}[{key.value!r}]", key.value))
    else:
        items = _items(scratch_node)
        scratch = None if items is None else [
            _scratch_slot(evaluator.value(model, node), f"{scratch_name}[{i}]") for i, node in enumerate(items)]

    # Inputs.
    inputs = None
    if entry.api == "pl.pallas_call":
        in_node = kw_node("in_specs")
        specs = _items(in_node) if in_node is not None else None
        count = len(specs) if specs is not None else (len(operands) if operands is not None else None)
        if count is not None:
            inputs = []
            for i in range(count):
                operand = _array(project, model, operands[i]) if operands is not None and i < len(operands) else None
                shape, dtype = operand if operand else (None, None)
                spec_node = specs[i] if specs is not None else None
                space, shape = _block(project, model, spec_node, shape, gpu_mosaic)
                inputs.append(_Slot("input", f"in_specs[{i}]" if specs is not None else f"operand {i}",
                                    space, shape, dtype))
    if inputs is not None:
        inputs = prefetch_slots + inputs
    elif operands is not None:
        inputs = []
        for i, node in enumerate(operands):
            shape, dtype = _array(project, model, node) or (None, None)
            inputs.append(_Slot("input", f"operand {i}", "gmem" if gpu_mosaic else None, shape, dtype))
    return inputs, outputs, scratch


def _scratch_slot(value: Value, origin: str, keyword: str | None = None) -> _Slot:
    value = as_memtype(value)
    if isinstance(value, MemType):
        return _Slot("scratch", origin, value.space, value.shape, value.dtype, keyword)
    return _Slot("scratch", origin, keyword=keyword)


def _items(node: ast.expr | None) -> list[ast.expr] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _is_mosaic_gpu(entry: EntryPoint) -> bool:
    """A pallas_call is lowered by Mosaic GPU unless its compiler params or imports say TPU."""
    found = entry.kernel.kwarg("compiler_params")
    if found and found[1] is not None:
        return "tpu" not in entry.model.segment(found[1], 200).lower()  # also covers `pltpu`
    text = entry.model.text
    return "mosaic_gpu" in text and "pallas import tpu" not in text and "pallas.tpu" not in text


def _block(project: "Project", model: "ModuleModel", spec: ast.expr | None,
           array_shape: tuple[int, ...] | None, gpu_mosaic: bool) -> tuple[str | None, tuple[int, ...] | None]:
    """Memory space and block shape a BlockSpec gives the kernel's ref."""
    default_space = "smem" if gpu_mosaic else None
    if not isinstance(spec, ast.Call):
        return default_space, array_shape
    func = project.evaluator.value(model, spec.func)
    if not (isinstance(func, Api) and func.name.endswith("BlockSpec")):
        return default_space, array_shape
    keywords = {k.arg: k.value for k in spec.keywords if k.arg}
    space = default_space
    if "memory_space" in keywords:
        space_value = project.evaluator.value(model, keywords["memory_space"])
        space = _SPACE_OF.get(space_value.name) if isinstance(space_value, Api) else None
    block = spec.args[0] if spec.args else keywords.get("block_shape")
    if block is None:
        return space, array_shape
    if isinstance(block, ast.Constant) and block.value is None:
        return space, array_shape
    dims = _items(block)
    if dims is None:
        value = shape_of(project.evaluator.value(model, block))
        return space, value
    shape: list[int] = []
    for dim in dims:
        if isinstance(dim, ast.Constant) and dim.value is None:
            continue  # squeezed dimension
        value = project.evaluator.value(model, dim)
        if isinstance(value, Api) and "squeezed" in value.name.lower():
            continue
        if isinstance(dim, ast.Call) and "queezed" in model.segment(dim.func):
            continue
        if not (isinstance(value, Const) and type(value.value) is int):
            return space, None
        shape.append(value.value)
    return space, tuple(shape)


def _array(project: "Project", model: "ModuleModel", node: ast.expr) -> tuple[tuple[int, ...] | None, str | None] | None:
    """Shape and dtype of an operand written as `jnp.zeros(shape, dtype)`, a ShapeDtypeStruct or a
    `plgpu.alloc_semaphore(shape)` ref."""
    value = project.evaluator.value(model, node)
    if isinstance(value, (ShapeDtype, MemType)):
        return value.shape, value.dtype
    if isinstance(value, SemaphoreRef) and not value.indexer:
        return value.shape, "semaphore"
    if isinstance(node, ast.Name):
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is not None and binding.kind == "assign" and binding.value is not None and binding.value is not node:
            return _array(project, model, binding.value)
        return None
    if not isinstance(node, ast.Call):
        return None
    func = project.evaluator.value(model, node.func)
    if not (isinstance(func, Api) and func.name in _ARRAY_CONSTRUCTORS):
        return None
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    shape_node = node.args[0] if node.args else keywords.get("shape")
    dtype_index = _ARRAY_CONSTRUCTORS[func.name]
    dtype_node = node.args[dtype_index] if len(node.args) > dtype_index else keywords.get("dtype")
    shape = shape_of(project.evaluator.value(model, shape_node)) if shape_node is not None else None
    dtype = dtype_name(project.evaluator.value(model, dtype_node)) if dtype_node is not None else (
        "float32" if func.name != "jnp.full" else None)
    return shape, dtype


def _launch_operands(project: "Project", entry: EntryPoint) -> list[ast.expr] | None:
    """Operand expressions where the kernel is invoked: `pallas_call(...)(x, y)` or `kernel_fn(x, y)`."""
    model = entry.model
    parent = model.parents.get(entry.node)
    if isinstance(parent, ast.Call) and parent.func is entry.node:
        return _positional(parent)
    targets = {id(entry.node), id(entry.kernel.node)}
    found: list[list[ast.expr]] = []
    for call in model.calls:
        if call is entry.node or isinstance(call.func, ast.Call) and call.func is entry.node:
            continue
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        value = project.evaluator.value(model, call.func)
        decorated = isinstance(value, Func) and entry.node in getattr(value.node, "decorator_list", ())
        if decorated or isinstance(value, KernelCall) and id(value.node) in targets:
            args = _positional(call)
            if args is not None:
                found.append(args)
    if found and all(len(f) == len(found[0]) for f in found):
        return found[0]
    return None


def _positional(call: ast.Call) -> list[ast.expr] | None:
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return list(call.args)


def param_at(project: "Project", model: "ModuleModel", line: int, column: int) -> list[KernelParam]:
    """Kernel parameters named at a 0-based position: the parameter itself or a use of it in the body."""
    params = parameters_of_module(project, model)
    if not params:
        return []
    for node in ast.walk(model.tree):
        if isinstance(node, ast.arg) and id(node) in params:
            span = model.source.span(node)
            if span.line == line and span.column <= column <= span.column + len(node.arg):
                return params[id(node)]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            span = model.source.span(node)
            if span.line == line and span.column <= column <= span.end_column:
                binding = model.lookup(node.id, model.scope_of(node), node.lineno)
                if binding is not None and binding.kind == "param" and id(binding.node) in params:
                    return params[id(binding.node)]
    return []
