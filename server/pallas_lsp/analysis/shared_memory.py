"""A Mosaic GPU kernel's shared memory (and TMEM columns), computed from its scratch as JAX does.

Mirrors jax/_src/pallas/mosaic_gpu/lowering.py: `Resources` (each allocation's bytes rounded up to
`SMEM_ALIGNMENT`, TMEM columns to 8), `_run_scoped_resource_estimator` (a run_scoped's own
allocations plus its body), `_estimate_resources` (the MAX over a body's equations, `Resources.or_`;
barriers kept as a multiset, union on `or_` and sum on `+`) and `_reduce_resource_estimator`
(`reduction_scratch_bytes` for a reduction); then jax/experimental/mosaic/gpu/core.py `_launch`:
the scratch bytes, `MBARRIER_BYTES` per barrier and 4 bytes for the TMEM address, against
`max_smem_bytes`. `plgpu.kernel` allocates its `scratch_types` (list, tuple or dict) with one
run_scoped around the body. A part that is not static is named in `unknown` and counts as nothing,
so the figure is then a lower bound: never above what JAX computes.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import reads
from .allocations import Allocations
from .arithmetic import product
from .evaluate import NOT_STATIC, as_memtype
from .kernels import EntryPoint, unwrap_function
from .mosaic_gpu_limits import MosaicGpuLimits
from .values import Api, Func, Mapping, MemType, Partial, Seq, Value, int_text

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

# Bits per element (jax.dtypes.itemsize_bits) of the dtypes the evaluator names.
_BITS = {"float32": 32, "float16": 16, "bfloat16": 16, "float64": 64, "int8": 8, "int16": 16, "int32": 32,
         "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "bool": 8, "int4": 4, "uint4": 4,
         "complex64": 64, "complex128": 128, "float8_e4m3fn": 8, "float8_e5m2": 8, "float8_e4m3b11fnuz": 8,
         "float8_e8m0fnu": 8, "float4_e2m1fn": 4}
TMEM_ROWS = 128  # jax/experimental/mosaic/gpu/tcgen05.py TMEM_ROWS: a TMEM column is 128 lanes of 32 bits
_TMEM_COL_ROUNDING = 8  # `Resources.__post_init__`: "TMEM must be allocated in 128x8 chunks"
_TMEM_ADDRESS_BYTES = 4  # `_smem_tree_size`: the TMEM address lives in shared memory, an i32
# Helpers of JAX's own that allocate shared memory through a run_scoped inside them (pipeline buffers and
# barriers, jax/_src/pallas/mosaic_gpu/pipeline.py and helpers.py): not modelled, so the estimate says so.
_ALLOCATING_HELPERS = {"plgpu.emit_pipeline", "plgpu.emit_pipeline_warp_specialized", "plgpu.dynamic_scheduling_loop"}
# Decorators that run the function they decorate where it is defined (once, for the estimator: loop bodies
# are lowered once).
_RUNNING_DECORATORS = {"pl.when", "pl.loop", "plgpu.nd_loop", "plgpu.nested_scope", "pl.core_map"}
# What lowers to lax.reduce_{sum,max,min,prod} (`lax.max` is elementwise: not one).
_REDUCTIONS = {"jnp": {"sum", "max", "min", "prod", "mean", "amax", "amin"},
               "lax": {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}}


def _align(value: int, alignment: int) -> int:
    return value + (-value % alignment)


@dataclass
class Resources:
    """JAX's `Resources`, rounded on construction as JAX rounds it; `unknown` names what is not static."""

    smem: int = 0
    tmem: int = 0
    tmem_collective: int = 0
    barriers: Counter = field(default_factory=Counter)  # (kind, num_arrivals, ..., count of barriers) -> how many
    unknown: tuple[str, ...] = ()

    @classmethod
    def make(cls, alignment: int, smem: int = 0, tmem: int = 0, tmem_collective: int = 0,
             barriers: Counter | None = None, unknown: tuple[str, ...] = ()) -> "Resources":
        return cls(_align(smem, alignment), _align(tmem, _TMEM_COL_ROUNDING), _align(tmem_collective, _TMEM_COL_ROUNDING),
                   barriers or Counter(), unknown)

    def plus(self, other: "Resources", alignment: int) -> "Resources":
        return Resources.make(alignment, self.smem + other.smem, self.tmem + other.tmem,
                              self.tmem_collective + other.tmem_collective, self.barriers + other.barriers,
                              _merge(self.unknown, other.unknown))

    def either(self, other: "Resources", alignment: int) -> "Resources":
        return Resources.make(alignment, max(self.smem, other.smem), max(self.tmem, other.tmem),
                              max(self.tmem_collective, other.tmem_collective), self.barriers | other.barriers,
                              _merge(self.unknown, other.unknown))


def _merge(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return first + tuple(u for u in second if u not in first)


@dataclass(frozen=True)
class SharedMemory:
    """A kernel's estimate: `smem_bytes` is what `_launch` compares with `max_smem_bytes`."""

    smem_bytes: int
    max_smem_bytes: int | None
    tmem_cols: int  # the columns JAX allocates (rounded up to a power of two, at least 32), 0 for none
    tmem_requested_cols: int  # before that rounding
    tmem_max_cols: int | None
    barriers: int
    unknown: tuple[str, ...]  # parts not known statically: the figures are then lower bounds
    limit_source: str
    alignment: int  # SMEM_ALIGNMENT: every buffer's bytes are rounded up to it

    @property
    def complete(self) -> bool:
        return not self.unknown

    @property
    def exceeds(self) -> bool:
        """JAX certainly rejects the kernel: even the part known statically is over the limit."""
        return self.max_smem_bytes is not None and self.smem_bytes > self.max_smem_bytes

    @property
    def tmem_exceeds(self) -> bool:
        return self.tmem_max_cols is not None and self.tmem_cols > self.tmem_max_cols

    def summary(self) -> str:
        """`SMEM 196,608 / 232,448 B`, with `≥` where part is not known, and TMEM where used."""
        bound = "≥ " if self.unknown else ""
        limit = f"{self.max_smem_bytes:,}" if self.max_smem_bytes is not None else "?"
        text = f"SMEM {bound}{int_text(self.smem_bytes, grouped=True)} / {limit} B"
        if self.tmem_requested_cols:
            tmem_limit = self.tmem_max_cols if self.tmem_max_cols is not None else "?"
            text += f" · TMEM {bound}{int_text(self.tmem_cols)} / {tmem_limit} cols"
        return text


def shared_memory(project: "Project", entry: EntryPoint, limits: MosaicGpuLimits | None,
                  exclude: set[int]) -> SharedMemory | None:
    """The estimate for a Mosaic GPU entry point, or None without the analysed jax's allocation units."""
    if limits is None or limits.smem_alignment is None or limits.mbarrier_bytes is None:
        return None
    walk = _ScratchWalk(project, exclude, limits)
    body = entry.body
    total = walk.body(body, ()) if body is not None else Resources(unknown=("the kernel body is not known",))
    if entry.api == "plgpu.kernel":
        scratch = entry.kernel.kwarg("scratch_types")
        if scratch is not None:
            value, node = scratch
            own = walk.allocations(value, entry.model, node, "scratch_types")
            total = own.plus(total, limits.smem_alignment)
    return _launch_figures(total, limits)


def _launch_figures(total: Resources, limits: MosaicGpuLimits) -> SharedMemory:
    barrier_count = sum(key[-1] * count for key, count in total.barriers.items())
    requested = total.tmem + total.tmem_collective
    tmem_cols = max(32, 1 << (requested - 1).bit_length()) if requested else 0  # tcgen05.tmem_alloc_exact_ncols
    smem = total.smem + barrier_count * limits.mbarrier_bytes + (_TMEM_ADDRESS_BYTES if requested else 0)
    return SharedMemory(smem, limits.max_smem_bytes, tmem_cols, requested, limits.tmem_max_cols, barrier_count,
                        total.unknown, limits.limit_source, limits.smem_alignment)


class _ScratchWalk:
    """Walks a body in the order JAX traces it (the semaphore walk's traversal), collecting Resources."""

    def __init__(self, project: "Project", exclude: set[int], limits: MosaicGpuLimits):
        self.project = project
        self.limits = limits
        self.alignment = limits.smem_alignment
        walk = self

        class Traversal(Allocations):
            def visit(self, model, node, stack):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                    found = walk.decorated(model, node, stack)
                    if found is not None:
                        return found
                return super().visit(model, node, stack)

            def _call(self, model, call, stack):
                found = walk.call(model, call, stack)
                if found is not None:
                    return found
                return [r for r in super()._call(model, call, stack) if isinstance(r, Resources)]

            def either(self, model, node, branches):
                reads.note(("lines", id(model)))  # its message names the line (kept per function: `Allocations.function`)
                folded = [walk.fold(branch) for branch in branches]
                if folded[0].smem == folded[1].smem and folded[0].tmem == folded[1].tmem \
                        and folded[0].barriers == folded[1].barriers:
                    return [folded[0]]
                smaller = min(folded, key=lambda r: (r.smem, r.tmem + r.tmem_collective))
                line = model.source.span(node).line + 1
                return [Resources(smaller.smem, smaller.tmem, smaller.tmem_collective, smaller.barriers,
                                  _merge(smaller.unknown, (f"the Python `if` on line {line} (its test is not static)",)))]

            def not_static(self, model, node, stack):
                reads.note(("lines", id(model)))
                inner = [r for child in ast.iter_child_nodes(node) for r in self.visit(model, child, stack)]
                if not any(r.smem or r.tmem or r.tmem_collective or r.barriers or r.unknown for r in inner):
                    return []
                line = model.source.span(node).line + 1
                kind = "while" if isinstance(node, ast.While) else "try"
                return [Resources(unknown=(f"the `{kind}` on line {line} (how often it runs is not static)",))]

        self.traversal = Traversal(project, exclude)
        self.traversal.memo_kind = ("scratch-walk", dataclasses.astuple(limits))

    def fold(self, items: list) -> Resources:
        total = Resources()
        for item in items:
            if isinstance(item, Resources):
                total = total.either(item, self.alignment)
        return total

    def body(self, func: Func, stack: tuple) -> Resources:
        return self.fold(self.traversal.function(func, stack))

    def decorated(self, model: "ModuleModel", node: ast.FunctionDef, stack) -> list[Resources] | None:
        """A def its decorators run at once: `@functools.partial(pl.run_scoped, buf=...)` allocates around
        it, `@plgpu.nd_loop(...)`, `@pl.loop(...)`, `@pl.when(...)` run it. None for any other decorator
        (the traversal decides)."""
        total = None
        for decorator in reversed(node.decorator_list):  # the innermost decorator is applied first
            value = self.project.evaluator.value(model, decorator)
            callee = self.project.evaluator.value(model, decorator.func) if isinstance(decorator, ast.Call) else None
            if total is None:
                total = self.body(Func(model, node), stack)
            if isinstance(value, Partial) and isinstance(value.func, Api) and value.func.name == "pl.run_scoped":
                own = Resources()
                for index, item in enumerate(value.args, 1):
                    own = own.plus(self.allocations(item, model, None, f"pl.run_scoped argument {index}"), self.alignment)
                for key, item in value.kwargs:
                    if key != "collective_axes":
                        own = own.plus(self.allocations(item, model, None, f"pl.run_scoped {key}="), self.alignment)
                total = own.plus(total, self.alignment)
            elif isinstance(callee, Api) and callee.name in _ALLOCATING_HELPERS:
                total = total.plus(Resources(unknown=(f"`{callee.name}` allocates its own buffers (not estimated)",)),
                                   self.alignment)
            elif not (isinstance(callee, Api) and callee.name in _RUNNING_DECORATORS):
                return None
        return [total] if total is not None else None

    def call(self, model: "ModuleModel", call: ast.Call, stack) -> list[Resources] | None:
        """Resources of a run_scoped or a reduction; None for any other call (the traversal goes on)."""
        value = self.project.evaluator.value(model, call.func)
        if isinstance(value, Api) and value.name == "pl.run_scoped":
            if not call.args or any(isinstance(a, ast.Starred) for a in call.args) \
                    or any(k.arg is None for k in call.keywords):
                return [Resources(unknown=(f"`{_short(model, call)}` (its allocations are not static)",))]
            own = Resources()
            for index, arg in enumerate(call.args[1:], 1):
                own = own.plus(self.allocations(self.project.evaluator.value(model, arg), model, arg,
                                                f"pl.run_scoped argument {index}"), self.alignment)
            for keyword in call.keywords:
                if keyword.arg != "collective_axes":
                    own = own.plus(self.allocations(self.project.evaluator.value(model, keyword.value), model,
                                                    keyword.value, f"pl.run_scoped {keyword.arg}="), self.alignment)
            inner = unwrap_function(self.project.evaluator.value(model, call.args[0]))
            if inner is None:
                return [own.plus(Resources(unknown=(f"the body of `{_short(model, call)}`",)), self.alignment)]
            return [own.plus(self.body(inner, stack), self.alignment)]
        if isinstance(value, Api) and value.name in _ALLOCATING_HELPERS:
            return [Resources(unknown=(f"`{value.name}` allocates its own buffers (not estimated)",))]
        if self._is_reduction(value, call):
            bytes_ = self.limits.reduction_scratch_bytes
            if bytes_ is None:
                return [Resources(unknown=(f"`{_short(model, call)}` (a reduction)",))]
            return [Resources.make(self.alignment, smem=bytes_)]
        return None

    @staticmethod
    def _is_reduction(value: Value, call: ast.Call) -> bool:
        """`jnp.sum(x)`, `lax.reduce_max(x, ...)`, `x.sum()`: what lowers to a reduce_* JAX reserves scratch for."""
        if isinstance(value, Api):
            family = value.name.partition(".")[0]
            return value.name.rsplit(".", 1)[-1] in _REDUCTIONS.get(family, ())
        # `x.sum()` on an array: a method nothing here resolves to a user function or a known API.
        return isinstance(call.func, ast.Attribute) and call.func.attr in ("sum", "max", "min", "prod", "mean") \
            and not isinstance(value, Func)

    def allocations(self, value: Value, model: "ModuleModel", node: ast.AST | None, origin: str) -> Resources:
        """`_run_scoped_resource_estimator` over one allocation or a pytree (list, tuple, dict) of them."""
        if isinstance(value, Seq):
            total = Resources()
            for index, item in enumerate(value.items):
                total = total.plus(self.allocations(item, model, None, f"{origin}[{index}]"), self.alignment)
            return total
        if isinstance(value, Mapping):
            total = Resources()
            for key, item in value.items:
                total = total.plus(self.allocations(item, model, None, f"{origin}[{key!r}]"), self.alignment)
            return total
        memtype = as_memtype(value)
        if not isinstance(memtype, MemType):
            written = f"`{_short(model, node)}`" if node is not None else f"`{origin}`"
            return Resources(unknown=(f"{written} (not known statically)",))
        return self._allocation(memtype, origin)

    def _allocation(self, memtype: MemType, origin: str) -> Resources:
        unknown = (f"`{memtype.source}` ({origin}: shape or dtype not known statically)",)
        details = dict(memtype.details)
        # Its elements; None past 2**1024 (`arithmetic.product`): too many to count, then counted as nothing.
        count = product(memtype.shape) if memtype.shape is not None else None
        if memtype.shape is not None and count is None and memtype.space in ("smem", "tmem"):
            return Resources(unknown=(f"`{memtype.source}` ({origin}: too many elements to count)",))
        if memtype.dtype in ("barrier", "cluster_barrier"):
            if count is None or NOT_STATIC in details.values():
                return Resources(unknown=unknown)
            key = (memtype.dtype, details.get("num_arrivals", 1), details.get("orders_tensor_core", False),
                   details.get("collective_axes"), details.get("leader_tracked", False), count)
            return Resources(barriers=Counter([key]))
        if memtype.space == "smem":
            bits = _BITS.get(memtype.dtype or "")
            if count is None or bits is None or memtype.constructor == "plgpu.RefUnion":
                return Resources(unknown=unknown)
            return Resources.make(self.alignment, smem=count * bits // 8)
        if memtype.space == "tmem":
            cols = _tmem_columns(memtype, details)
            if cols is None:
                return Resources(unknown=unknown)
            if details.get("collective"):
                return Resources.make(self.alignment, tmem_collective=cols)
            return Resources.make(self.alignment, tmem=cols)
        return Resources()  # registers, GMEM semaphores: no shared memory


def _tmem_columns(memtype: MemType, details: dict) -> int | None:
    """`TMEMLayout.cols_in_shape` for the layout JAX infers (no `layout=`): one column per 128 32-bit
    elements, `packed=True` fitting 32 / bits elements in one (checked with jax 0.12 for f32, bf16, int8)."""
    bits = _BITS.get(memtype.dtype or "")
    if memtype.shape is None or len(memtype.shape) < 2 or bits is None or "layout" in details \
            or NOT_STATIC in details.values():
        return None
    packed = details.get("packed")
    if bits != 32 and packed is not True:
        return None  # JAX asks for packed= or a layout: an error, not an allocation
    if details.get("collective") and memtype.shape[-2] != TMEM_ROWS:
        return None
    per_column = TMEM_ROWS * (32 // bits if packed else 1)
    return product(memtype.shape) // per_column  # `_allocation` refused a shape too big to count


def _short(model: "ModuleModel", node: ast.AST | None) -> str:
    text = model.segment(node) if node is not None else "?"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
