"""What each kernel body parameter is: its role, where it comes from, and its ref type.

JAX passes a kernel body its refs positionally: inputs, then outputs, then scratch. So the role of
a parameter follows from counting: `in_specs` (or the operands at the launch), `out_shape`,
`scratch_shapes`/`scratch_types`. Shapes come from BlockSpecs, `jax.ShapeDtypeStruct`s, memory-space
constructors and array constructors at the launch; whatever is not static stays `?`.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from . import reads
from ..dtypes import short_dtype
from .arithmetic import MAX_ITEMS
from .call_of import callee
from .markdown import code_span
from .evaluate import Frame, as_memtype, terminal_name
from .kernels import EntryPoint, KernelIndex, unwrap_function
from .vmapped import unbatched, vmapped_kernel
from .values import (UNKNOWN, Api, Array, Const, Func, KernelCall, Mapping, MemType, OneOf, Partial, SemaphoreRef, Seq,
                     ShapeDtype, Spec, Value)

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

# What `seen` says of call sites passing arrays not known statically (their types are left out of the merge).
NOT_KNOWN = "not known statically"
# JAX's names of the memory spaces (`str(aval)`: `Ref<vmem>{...}`).
_SPACE_OF = {"plgpu.GMEM": "gmem", "plgpu.SMEM": "smem", "plgpu.TMEM": "tmem", "pl.ANY": "any",
             "pltpu.VMEM": "vmem", "pltpu.SMEM": "smem", "pltpu.HBM": "hbm", "pltpu.ANY": "any",
             "pl.MemorySpace.ANY": "any", "pltpu.SEMAPHORE": "semaphore_mem"}


@dataclass(frozen=True)
class KernelParam:
    """One body parameter as JAX will pass it."""

    name: str
    node: ast.arg
    role: str  # "input" | "output" | "scratch"
    origin: str  # e.g. "in_specs[0]", "out_shape", "scratch_types['acc']", "operand 1"
    space: str | None
    shape: tuple[int, ...] | None  # None unless every dimension is known
    dtype: str | None
    entry: EntryPoint
    dims: tuple[int | None, ...] | None = None  # the shape with `?` dims where call sites disagree
    seen: tuple[tuple[str, str], ...] = ()  # (picture, call site) of each call site, where they disagree

    @property
    def picture(self) -> str:
        """JAX's picture of the ref, `Ref<default>{float32[128]}`, with `?` for what is not static."""
        return _picture(self.space, self._dims, self.dtype)

    @property
    def _dims(self) -> tuple[int | None, ...] | None:
        return self.shape if self.dims is None else self.dims

    @property
    def short(self) -> str:
        """The inlay-hint form, `f32[4,128]`, `f32[128] smem`: the memory space only where it is not
        `default`; what is not known statically is left out."""
        dtype = short_dtype(self.dtype) if self.dtype else ""
        dims = self._dims
        shape = "" if dims is None else f"[{','.join('?' if d is None else str(d) for d in dims)}]"
        space = "" if self.space in (None, "default") else self.space
        return " ".join(part for part in (dtype + shape, space) if part)

    def describe(self) -> str:
        line = self.entry.model.source.span(self.entry.node).line + 1
        body = self.entry.body
        where = f"line {line}" if body is None or body.model is self.entry.model else (
            f"{code_span(os.path.basename(self.entry.model.path))} line {line}")
        return f"kernel {self.role} from {code_span(self.origin)} of {code_span(self.entry.api)} ({where})"


def _picture(space: str | None, dims: tuple[int | None, ...] | None, dtype: str | None) -> str:
    shape = "?" if dims is None else ",".join("?" if d is None else str(d) for d in dims)
    return f"Ref<{space or '?'}>{{{dtype or '?'}[{shape}]}}"


@dataclass(frozen=True)
class _Slot:
    role: str
    origin: str
    space: str | None = None
    shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    keyword: str | None = None  # scratch passed by keyword (dict-form scratch_types)
    seen: tuple[tuple[str, str], ...] = ()

    @property
    def picture(self) -> str:
        return _picture(self.space, self.shape, self.dtype)


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
        for body, chosen_by in _bodies(entry):
            if body.model is not model:
                continue
            try:
                params = kernel_parameters(project, entry, body, chosen_by, leaves=True)
            except RecursionError:
                continue
            for param in params:
                result.setdefault(id(param.node), []).append(param)
    model.eval_cache["kernel-params"] = (launchers, result)
    return result


def _bodies(entry: EntryPoint) -> list[tuple[Func, ast.expr | None]]:
    """(body, None) for the entry's one body; where the body is chosen in a branch (`kernel = a if c else b`,
    then `pl.pallas_call(functools.partial(kernel, ...))`), (option, the body's expression) for each option:
    a launch frame gives an option its types only where that expression is that option there."""
    if entry.body is not None:
        return [(entry.body, None)]
    value, node = entry.kernel.body, entry.kernel.node
    while isinstance(value, Partial):
        value = value.func
    if not (isinstance(value, OneOf) and isinstance(node, ast.Call) and node.args):
        return []
    return [(option, node.args[0]) for option in value.options if isinstance(option, Func)]


def kernel_parameters(project: "Project", entry: EntryPoint, body: Func | None = None,
                      chosen_by: ast.expr | None = None, leaves: bool = False) -> list[KernelParam]:
    """The body's parameters as JAX passes them; with `leaves`, each ref a `*refs` takes too (`refs[0]`, ...:
    for the types and hovers, never for the rules, which read `refs` itself as a sequence)."""
    body = body or entry.body
    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return []
    if entry.api in ("pl.core_map", "plgpu.warp_map"):  # no refs: a warp_map function takes the warp's index
        return []
    if not reads.tracking():
        return _kernel_parameters(project, entry, body, chosen_by, leaves)
    # Kept with what it read, as the kernel's model is (`kernel_model._entry_model`): the kernel's model, PAL013
    # and PAL024 each ask, and an edit inside the body changes none of what the launch frames give its refs.
    memo = entry.model.eval_cache
    key = ("kernel-parameters", id(entry.node), id(body.node), id(chosen_by), leaves)
    marks = (entry.kernel, body.node, chosen_by, entry.api, tuple(entry.interpret), tuple(entry.maybe_interpret))
    found = memo.get(key)
    if found is not None and all(a is b for a, b in zip(found[0][:3], marks[:3])) and found[0][3:] == marks[3:]:
        return [p if p.entry is entry else replace(p, entry=entry) for p in found[1]]  # rules name this entry point
    return list(reads.kept(memo, key, lambda: (marks, _kernel_parameters(project, entry, body, chosen_by, leaves)))[1])


def _kernel_parameters(project: "Project", entry: EntryPoint, body: Func, chosen_by: ast.expr | None,
                       leaves: bool) -> list[KernelParam]:
    bound_positional, bound_keywords = partial_bindings(entry.kernel.body)
    bound_positional += _bound_receiver(entry.kernel.body)
    spec = body.node.args
    positional = [*spec.posonlyargs, *spec.args][bound_positional:]
    positional = [p for p in positional if p.arg not in bound_keywords]
    keyword_only = {p.arg: p for p in spec.kwonlyargs if p.arg not in bound_keywords}
    every = [*spec.posonlyargs, *spec.args]
    defaulted = {id(p) for p in every[len(every) - len(spec.defaults):]}
    # `o_ref, mean_ref=None, rstd_ref=None` or `*refs`: how many refs JAX passes is not the signature's count
    count = None if spec.vararg is not None or any(id(p) in defaulted for p in positional) else len(positional)
    params = []
    for arg, slot, name in _placed(project, entry, positional, keyword_only, count,
                                   (body, chosen_by) if chosen_by else None, spec.vararg if leaves else None):
        dims = slot.shape
        shape = dims if dims is not None and None not in dims else None
        params.append(KernelParam(name, arg, slot.role, slot.origin, slot.space, shape, slot.dtype, entry,
                                  dims if shape is None else None, slot.seen))
    return params


def _placed(project: "Project", entry: EntryPoint, positional: list[ast.arg], keyword_only: dict[str, ast.arg],
            count: int | None, chosen: tuple[Func, ast.expr] | None = None, vararg: ast.arg | None = None):
    """(parameter, slot) pairs: the slots of every launch frame, merged where their call sites disagree;
    `count`: how many refs the body takes positionally, None where its signature does not fix it; `chosen`:
    (body, expression) where the body is one of several, the frames where the expression is that body."""
    per_frame = []
    for frame, where in _launch_frames(project, entry):
        if chosen is not None and (frame is None or getattr(unwrap_function(
                project.evaluator.value(entry.model, chosen[1], frame)), "node", None) is not chosen[0].node):
            continue
        slots = _arrange(project, entry, frame, count)
        if slots is not None:
            per_frame.append((slots, where))
    if not per_frame:
        return []
    shapes = {tuple((s is None, s.keyword if s else None) for s in slots) for slots, _ in per_frame}
    if len(shapes) > 1 and chosen is not None:  # no frame-less picture to fall back on: which body is not known
        return []
    if len(shapes) > 1:  # call sites disagree on what the parameters are: only the leading ones all agree on
        slots = _arrange(project, entry, None, count) or []
        agreed = _agreed_prefix([frame_slots for frame_slots, _ in per_frame])
        if agreed and len(agreed) >= sum(1 for s in slots if s is not None and not s.keyword):
            slots = [_merge([f[i] for f, _ in per_frame if len(f) > i], [w for f, w in per_frame if len(f) > i])
                     for i in range(len(agreed))]
    else:
        slots = [_merge([frame_slots[i] for frame_slots, _ in per_frame], [w for _, w in per_frame])
                 for i in range(len(per_frame[0][0]))]
    pairs = []
    positional_slots = [s for s in slots if s is None or not s.keyword]
    for arg, slot in zip(positional, positional_slots):
        if slot is not None:
            pairs.append((arg, slot, arg.arg))
    rest = positional_slots[len(positional):]
    if vararg is not None and rest and None not in rest:  # `*refs`: JAX's `refs[0]`, `refs[1]`, ...
        pairs.extend((vararg, slot, f"{vararg.arg}[{i}]") for i, slot in enumerate(rest))
    for slot in slots:
        if slot is not None and slot.keyword:
            arg = keyword_only.get(slot.keyword) or next((p for p in positional if p.arg == slot.keyword), None)
            if arg is not None:
                pairs.append((arg, slot, arg.arg))
    return pairs


def _merge(slots: list["_Slot | None"], wheres: list[str | None]) -> "_Slot | None":
    """One slot for the frames' slots: theirs where all agree; `?` where they differ, with what each call
    site gives in `seen` (never one of them picked)."""
    if any(s is None for s in slots):
        return None
    known = [(s, w) for s, w in zip(slots, wheres) if not any(_less_known(s, other) for other in slots)]
    unknown = [w for s, w in zip(slots, wheres) if any(_less_known(s, other) for other in slots)]
    if known and unknown:  # a call site passing arrays not known statically: the others' types, it noted apart
        merged = _merge([s for s, _ in known], [w for _, w in known])
        return _Slot(merged.role, merged.origin, merged.space, merged.shape, merged.dtype, merged.keyword,
                     (*merged.seen, (NOT_KNOWN, ", ".join(w or "" for w in unknown))))
    first = slots[0]
    if all(s == first for s in slots):
        return first
    space = first.space if all(s.space == first.space for s in slots) else None
    dtype = first.dtype if all(s.dtype == first.dtype for s in slots) else None
    shapes = [s.shape for s in slots]
    shape = None
    if all(sh is not None and len(sh) == len(shapes[0]) for sh in shapes):
        shape = tuple(d if all(sh[i] == d for sh in shapes) else None for i, d in enumerate(shapes[0]))
    seen: list[tuple[str, str]] = []
    for slot, where in zip(slots, wheres):
        item = (slot.picture, where or "")
        if item not in seen:
            seen.append(item)
    return _Slot(first.role, first.origin, space, shape, dtype, first.keyword, tuple(seen))


def _agreed_prefix(frames: list[list["_Slot | None"]]) -> list:
    """The leading positional slots every frame has with the same role and origin (`out_shape[0]` where one
    call site asks for residual outputs after it and another does not); past the end of a frame whose scratch
    is not known, those the frames going on agree on (that frame knows less there, as `_less_known`)."""
    agreed = []
    for i in range(max(len(slots) for slots in frames)):
        kinds = {(s.role, s.origin) if s is not None and not s.keyword else None for s in (f[i] for f in frames if len(f) > i)}
        if len(kinds) != 1 or None in kinds:
            break
        agreed.append(i)
    return agreed


def _less_known(slot: "_Slot", other: "_Slot") -> bool:
    """`slot` says less than `other` and nothing else: each of its parts unknown or the same."""
    if slot == other or slot.space not in (None, other.space) or slot.dtype not in (None, other.dtype):
        return False
    if slot.shape is None:
        return True
    return other.shape is not None and len(other.shape) == len(slot.shape) and all(
        mine in (None, theirs) for mine, theirs in zip(slot.shape, other.shape))


def _arrange(project: "Project", entry: EntryPoint, frame: Frame | None,
             positional: int | None) -> list["_Slot | None"] | None:
    """Slots in parameter order for one launch frame: inputs, outputs, positional scratch, then keyword
    scratch; None entries where the role is known but not the count before it (nothing placed by counting
    from the end where `positional`, the body's count of positional refs, is None)."""
    inputs, outputs, scratch = _slots(project, entry, frame)
    by_keyword = [s for s in scratch or [] if s.keyword]
    scratch_positional = None if scratch is None else [s for s in scratch if not s.keyword]
    if positional is None and inputs is None:
        return by_keyword
    if inputs is None and outputs is not None and scratch_positional is not None and entry.api != "pl.pallas_call":
        count = positional - len(outputs) - len(scratch_positional)
        space = operand_space(project, entry) if entry.api == "plgpu.kernel" else None  # operands not known
        inputs = [_Slot("input", _input_origin(entry, i), space) for i in range(max(count, 0))]
    slots: list[_Slot | None] = []
    if inputs is not None:
        slots.extend(inputs)
        if outputs is not None:
            slots.extend(outputs)
            if scratch_positional is not None:
                slots.extend(scratch_positional)
    elif outputs is not None and scratch_positional is not None:
        slots = [None] * max(positional - len(outputs) - len(scratch_positional), 0) + outputs + scratch_positional
    return slots + by_keyword


def _launch_frames(project: "Project", entry: EntryPoint) -> list[tuple[Frame | None, str | None]]:
    """One frame per call site of the function the kernel is built in (its parameters bound to what
    that call passes), with where the call is; [(None, None)] when it is built at module level or
    nothing calls it."""
    model = entry.model
    function = model.enclosing_function(entry.node)
    if function is None or isinstance(function, ast.Lambda):
        return [(None, None)]
    frames = _frames(project, model, function, 0)
    if frames is None or len(frames) > _MAX_FRAMES:
        return [(None, None)]
    return frames or [(None, None)]


def _frames(project: "Project", model: "ModuleModel", function: ast.AST, depth: int):
    """(frame, where) per call site of `function`. A call site passing something its own caller's call
    sites disagree on (a parameter of the calling function: a OneOf) is split into one frame per
    call site of that caller, where it comes from; None past _MAX_FRAMES."""
    evaluator = project.evaluator
    frames = []
    for where_model, call, func, args, kwargs in evaluator.call_sites_with_nodes(model, function):
        if terminal_name(call.func) == "partial":
            continue  # the partial object is called elsewhere, with the rest
        spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        line = where_model.source.span(call).line + 1
        where = f"line {line}" if where_model is model else f"{os.path.basename(where_model.path)} line {line}"
        caller = where_model.enclosing_function(call)
        direct = terminal_name(call.func) == getattr(function, "name", None)
        split = None
        if direct and not spread and caller is not None and not isinstance(caller, ast.Lambda) and depth < 2 \
                and any(isinstance(v, OneOf) for v in [*args, *kwargs.values()]):
            split = _frames(project, where_model, caller, depth + 1)
        if split:
            for caller_frame, caller_where in split:
                frame_args = [evaluator.value(where_model, a, caller_frame) for a in call.args]
                frame_kwargs = {k.arg: evaluator.value(where_model, k.value, caller_frame) for k in call.keywords}
                params = evaluator.bind_arguments(func, frame_args, frame_kwargs)
                frames.append((Frame(function, params, 0, {}), caller_where))
        else:
            params = evaluator.bind_arguments(func, args, kwargs)
            if spread:  # `f(*xs)` / `f(**options)`: what they pass is not known, nor which defaults stay
                params = {name: value for name, value in params.items() if name in kwargs or value is func.self_value}
            frames.append((Frame(function, params, 0, {}), where))  # a memo: `Frame.memo`
        if len(frames) > _MAX_FRAMES:
            return None
    return frames


_MAX_FRAMES = 16


def partial_bindings(value: Value | None) -> tuple[int, set[str]]:
    """How many positional parameters and which names a chain of functools.partial binds."""
    positional, keywords = 0, set()
    while isinstance(value, Partial):
        positional += len(value.args)
        keywords.update(k for k, _ in value.kwargs)
        value = value.func
    return positional, keywords


def _bound_receiver(value: Value | None) -> int:
    """1 when the body is a method reached through an instance (`pl.pallas_call(self.kernel, ...)`): JAX's
    refs start at its second parameter, `self` being bound already; else 0."""
    while isinstance(value, Partial):
        value = value.func
    if not isinstance(value, Func) or value.self_value is None or isinstance(value.node, ast.Lambda):
        return 0
    return 0 if any(terminal_name(d) == "staticmethod" for d in value.node.decorator_list) else 1


def _input_origin(entry: EntryPoint, index: int) -> str:
    return f"in_specs[{index}]" if entry.api == "pl.pallas_call" else f"operand {index}"


def launch_field(project: "Project", entry: EntryPoint, name: str, frame: Frame | None = None) -> Value | None:
    """The launch's setting `name`: its keyword, else that field of its `grid_spec=` (a `pl.GridSpec` or
    `pltpu.PrefetchScalarGridSpec` carries the launch's in_specs, out_specs, scratch_shapes and
    num_scalar_prefetch); None where neither gives it, UNKNOWN where the grid spec is not known statically."""
    kernel = entry.kernel

    def kwarg(key: str) -> Value | None:
        found = kernel.kwarg(key)
        if not found:
            return None
        value, node = found
        return project.evaluator.value(entry.model, node, frame) if node is not None else value

    value = kwarg(name)
    if value is not None or name == "grid_spec":
        return value
    grid_spec = kwarg("grid_spec")
    if grid_spec is None or grid_spec == Const(None):
        return None
    return grid_spec.get(name) if isinstance(grid_spec, Spec) else UNKNOWN


def _slots(project: "Project", entry: EntryPoint, frame: Frame | None = None):
    """(inputs, outputs, scratch) slot lists; None where the count is not statically known."""
    evaluator, model = project.evaluator, entry.model
    operands = _launch_operands(project, entry, frame)
    pallas_call = entry.api == "pl.pallas_call"
    grid_spec = launch_field(project, entry, "grid_spec", frame)
    if grid_spec not in (None, Const(None)) and not isinstance(grid_spec, Spec):
        return None, None, None

    def field(*names: str) -> tuple[str, Value] | None:
        for name in names:
            value = launch_field(project, entry, name, frame)
            if value is not None:
                return name, value
        return None

    prefetch = field("num_scalar_prefetch")
    prefetch = prefetch[1] if prefetch else Const(0)
    if not (isinstance(prefetch, Const) and type(prefetch.value) is int and 0 <= prefetch.value <= MAX_ITEMS):
        return None, None, None  # one slot each: `num_scalar_prefetch=10**12` is not a list of 10**12
    prefetch_slots = []
    for i in range(prefetch.value):
        shape, dtype = array_type(operands[i]) if operands is not None and i < len(operands) else (None, None)
        prefetch_slots.append(_Slot("input", f"scalar prefetch {i}", "smem", shape, dtype))
    if operands is not None:
        operands = operands[prefetch.value:]

    # Outputs.
    out = field("out_shape", "out_type")
    if out is None and entry.api in ("pl.pallas_call", "pl.kernel") and isinstance(entry.node, ast.Call) \
            and len(entry.node.args) > 1:  # pallas_call(body, out_shape) / pl.kernel(body, out_type)
        out = ("out_shape" if pallas_call else "out_type", evaluator.value(model, entry.node.args[1], frame))
    outputs = None
    if out is not None:
        out_name, out_value = out
        single = not isinstance(out_value, Seq)
        items = [out_value] if single else list(out_value.items)
        out_specs = field("out_specs")
        out_specs = out_specs[1] if out_specs else None
        outputs = []
        for i, described in enumerate(items):
            # A TPU pallas_call may return a semaphore (the split async copy: `out_shape=(x, DMA)` with
            # out_specs memory_space=pltpu.SEMAPHORE): the body's output ref is that semaphore.
            semaphore = as_memtype(described) if pallas_call else described
            shape, dtype = array_type(semaphore if isinstance(semaphore, MemType)
                                  and semaphore.space == "semaphore_mem" else described)
            space = operand_space(project, entry) if not pallas_call else None
            if pallas_call:
                if out_specs is None:
                    spec = _NO_SPEC
                elif single:
                    spec = out_specs
                else:
                    spec = out_specs.items[i] if isinstance(out_specs, Seq) and i < len(out_specs.items) else UNKNOWN
                space, shape = _block(spec, shape)
            outputs.append(_Slot("output", out_name if single else f"{out_name}[{i}]", space, shape, dtype))
    elif not pallas_call:
        outputs = []  # plgpu.kernel / pl.kernel default: no outputs

    # Scratch.
    scratch_field = field("scratch_shapes", "scratch_types")
    if scratch_field is None:
        scratch = []
    else:
        scratch_name, scratch_value = scratch_field
        if isinstance(scratch_value, Mapping):
            scratch = []
            for key, value in scratch_value.items:
                if not isinstance(key, str):
                    scratch = None
                    break
                scratch.append(_scratch_slot(value, f"{scratch_name}[{key!r}]", key))
        elif isinstance(scratch_value, Seq):
            scratch = [_scratch_slot(v, f"{scratch_name}[{i}]") for i, v in enumerate(scratch_value.items)]
        elif isinstance(scratch_value, OneOf) and all(isinstance(o, Seq) for o in scratch_value.options) \
                and len({len(o.items) for o in scratch_value.options}) == 1:
            # `scratch_shapes = (...)` in each branch, as long: a slot all branches agree on is known
            scratch = [_branch_slot(items, f"{scratch_name}[{i}]")
                       for i, items in enumerate(zip(*(o.items for o in scratch_value.options)))]
        else:
            scratch = None

    # Inputs.
    inputs, in_specs = None, None
    if pallas_call:
        in_specs = field("in_specs")
        specs = in_specs[1].items if in_specs and isinstance(in_specs[1], Seq) else None
        if in_specs and specs is None:
            count = None
        else:
            count = len(specs) if specs is not None else (len(operands) if operands is not None else None)
        if count is not None:
            inputs = []
            for i in range(count):
                shape, dtype = array_type(operands[i]) if operands is not None and i < len(operands) else (None, None)
                space, shape = _block(specs[i] if specs is not None else _NO_SPEC, shape)
                inputs.append(_Slot("input", f"in_specs[{i}]" if specs is not None else f"operand {i}",
                                    space, shape, dtype))
    if inputs is not None:
        inputs = prefetch_slots + inputs
    elif operands is not None:  # the scalar prefetch operands come first here too
        inputs = list(prefetch_slots)
        for i, value in enumerate(operands, start=prefetch.value):
            shape, dtype = array_type(value)
            if in_specs:  # BlockSpecs not known statically: the block's dtype is the operand's, its shape is not
                shape = None
            space = operand_space(project, entry) if isinstance(value, Array) or entry.api == "plgpu.kernel" else None
            inputs.append(_Slot("input", f"operand {i}", space, shape, dtype))
    return inputs, outputs, scratch


def operand_space(project: "Project", entry: EntryPoint) -> str | None:
    """The memory space of the outputs of a kernel launched without BlockSpecs, and of its operands made
    by array constructors: `gmem` on Mosaic GPU (`plgpu.kernel`, a `plgpu.Mesh`), `any` on a TPU
    TensorCore mesh; None where the mesh is not known statically. (An operand of a TPU mesh kernel may
    carry a memory space of its own, `pltpu.with_memory_space_constraint(x, pltpu.HBM)`: JAX keeps it.)"""
    if entry.api == "plgpu.kernel":
        return "gmem"
    if entry.api != "pl.kernel" or entry.interpret:
        return None
    found = entry.kernel.kwarg("mesh")
    name = callee(project, entry.model, found[1])[0] if found and found[1] is not None else None
    return _MESH_SPACES.get(name)


# The memory space JAX gives a mesh kernel's outputs (and operands without one): `str(aval)`'s name.
_MESH_SPACES = {"plgpu.Mesh": "gmem", "pltpu.create_tensorcore_mesh": "any", "pltpu.TensorCoreMesh": "any"}


# No BlockSpec for an operand (no `in_specs`/`out_specs`): the whole array, in the default memory space.
_NO_SPEC = Spec("pl.BlockSpec", ())


def _branch_slot(items: tuple[Value, ...], origin: str) -> _Slot:
    """The slot of a scratch list written in each branch (`scratch_shapes = (...)` under `if`/`else`): the one
    type where all branches agree; where they differ only in a semaphore's type, one DMA and the other not (a
    REGULAR one where the copies need a DMA one: paged attention's), the other one, which JAX refuses in its branch."""
    if len(set(items)) == 1:
        return _scratch_slot(items[0], origin)
    types = [as_memtype(item) for item in items]
    if all(isinstance(t, MemType) for t in types) and len({(t.shape, t.space) for t in types}) == 1:
        others = {t.dtype for t in types} - {"dma_sem"}
        if len(others) == 1 and len({t.dtype for t in types}) == 2 and others <= {"semaphore", "barrier_semaphore"}:
            return _scratch_slot(next(t for t in types if t.dtype in others), origin)
    return _Slot("scratch", origin)


def _scratch_slot(value: Value, origin: str, keyword: str | None = None) -> _Slot:
    value = as_memtype(value)
    if isinstance(value, MemType):
        return _Slot("scratch", origin, value.space, value.shape, value.dtype, keyword)
    return _Slot("scratch", origin, keyword=keyword)


def _block(spec: Value, array_shape: tuple[int, ...] | None) -> tuple[str | None, tuple[int, ...] | None]:
    """Memory space and block shape a BlockSpec gives the kernel's ref: JAX's `default` space where the
    spec names none (Mosaic GPU and TPU alike: what `str(aval)` says), the whole array where it has no
    block shape, squeezed (`None`, `pl.squeezed`) dimensions left out."""
    if not (isinstance(spec, Spec) and spec.constructor.endswith("BlockSpec")):
        return None, None
    space_value = spec.get("memory_space")
    if space_value is None or space_value == Const(None):
        space = "default"
    else:
        space = _SPACE_OF.get(space_value.name) if isinstance(space_value, Api) else None
    block = spec.get("block_shape")
    if block is None or block == Const(None):
        return space, array_shape
    if not isinstance(block, Seq):
        return space, None
    shape: list[int] = []
    for dim in block.items:
        if dim == Const(None) or isinstance(dim, Api) and "squeezed" in dim.name.lower():
            continue  # squeezed dimension
        if not (isinstance(dim, Const) and type(dim.value) is int):
            return space, None
        shape.append(dim.value)
    return space, tuple(shape)


def array_type(value: Value) -> tuple[tuple[int, ...] | None, str | None]:
    """Shape and dtype of an operand or output description: an array, a ShapeDtypeStruct, a memory-space
    type or a `plgpu.alloc_semaphore(shape)` ref."""
    if isinstance(value, (Array, ShapeDtype, MemType)):
        return value.shape, value.dtype
    if isinstance(value, SemaphoreRef) and not value.indexer:
        return value.shape, "semaphore"
    return None, None


def _launch_operands(project: "Project", entry: EntryPoint, frame: Frame | None = None) -> list[Value] | None:
    """Operand values where the kernel is invoked: `pallas_call(...)(x, y)` or `kernel_fn(x, y)`."""
    model = entry.model
    evaluator = project.evaluator
    parent = model.parents.get(entry.node)
    if isinstance(parent, ast.Call) and parent.func is entry.node:
        args = _positional(parent)
        return None if args is None else [evaluator.value(model, a, frame) for a in args]
    launches = _launches_by_target(project, model)
    targets = dict.fromkeys((id(entry.node), id(entry.kernel.node)))
    found: list[list[ast.expr]] = []
    for _order, call in sorted({pair for target in targets for pair in launches.get(target, ())}):
        if call is entry.node:
            continue
        args = _positional(call)
        if args is not None:
            found.append(args)
    if not found and model.mentions("vmap"):
        return _vmapped_operands(project, entry, frame)
    if found and all(len(f) == len(found[0]) for f in found):
        values = [[evaluator.value(model, a, frame) for a in args] for args in found]
        return _agreed(values)
    return None


def _agreed(values: list[list[Value]]) -> list[Value]:
    """Each operand where every launch passes the same, else unknown."""
    return [v if all(other[i] == v for other in values) else UNKNOWN for i, v in enumerate(values[0])]


def _vmapped_operands(project: "Project", entry: EntryPoint, frame: Frame | None) -> list[Value] | None:
    """The operands of launches through `jax.vmap` (`vmapped.py`), as the body sees them: every such call
    of the kernel in its module, where they agree on how many."""
    model = entry.model
    found = []
    for call in model.calls:
        if not isinstance(call.func, ast.Name) or _positional(call) is None:
            continue
        launched = vmapped_kernel(project, model, call, frame)
        if launched is not None and launched[0].node is entry.kernel.node:
            found.append(unbatched([project.evaluator.value(model, a, frame) for a in call.args], launched[1]))
    if found and all(len(f) == len(found[0]) for f in found):
        return _agreed(found)
    return None


def _launches_by_target(project: "Project", model: "ModuleModel") -> dict[int, list[tuple[int, ast.Call]]]:
    """Calls by name of a launch, by what they launch: the id of a `KernelCall`'s node, or of each
    decorator of a decorated function. Built once a module (every entry point asks)."""
    launches = model.eval_cache.get("launches-by-target")
    if launches is None:  # it reads every call (an edit of one forgets it) and their callees' values
        launches = reads.kept(model.eval_cache, "launches-by-target", lambda: _by_target(project, model),
                              model.read_key, ("calls", id(model), "*"))
    return launches


def _by_target(project: "Project", model: "ModuleModel") -> dict[int, list[tuple[int, ast.Call]]]:
    launches: dict[int, list[tuple[int, ast.Call]]] = {}
    for order, call in enumerate(model.calls):  # (order, call): the module's order, kept when merged
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        value = project.evaluator.value(model, call.func)
        if isinstance(value, KernelCall):
            launches.setdefault(id(value.node), []).append((order, call))
        elif isinstance(value, Func):
            for decorator in getattr(value.node, "decorator_list", ()):
                launches.setdefault(id(decorator), []).append((order, call))
    return launches


def _positional(call: ast.Call) -> list[ast.expr] | None:
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return list(call.args)


def param_at(project: "Project", model: "ModuleModel", line: int, column: int) -> list[KernelParam]:
    """Kernel parameters named at a 0-based position: the parameter itself or a use of it in the body."""
    params = parameters_of_module(project, model)
    if not params:
        return []
    arg = parameter_at(model, line, column, lambda node: id(node) in params)
    return params[id(arg)] if arg is not None else []


def parameter_at(model: "ModuleModel", line: int, column: int, wanted=lambda arg: True) -> ast.arg | None:
    """The function parameter (`wanted`) named at a 0-based position: itself, or a use of it."""
    for node in ast.walk(model.tree):
        if isinstance(node, ast.arg) and wanted(node):
            span = model.source.span(node)
            if span.line == line and span.column <= column <= span.column + len(node.arg):
                return node
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            span = model.source.span(node)
            if span.line == line and span.column <= column <= span.end_column:
                binding = model.lookup(node.id, model.scope_of(node), node.lineno)
                if binding is not None and binding.kind == "param" and wanted(binding.node):
                    return binding.node
    return None


def body_first_line(model: "ModuleModel", arg: ast.arg) -> int:
    """1-based first line of the function `arg` belongs to (its first decorator's), as JAX's debug
    info names a kernel body."""
    function = model.parents[model.parents[arg]]
    return min([function.lineno, *(d.lineno for d in getattr(function, "decorator_list", ()))])
