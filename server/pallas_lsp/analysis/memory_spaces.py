"""The memory spaces a kernel's own buffers (scratch, `pl.run_scoped`) are given, and which of them its lowering
refuses: the other backend's type (`pltpu.VMEM` in a Mosaic GPU kernel), or global memory as a Mosaic GPU scratch.

What each lowering accepts, checked with jax 0.12.0.1 (cross-lowered for cuda and tpu, the interpreters run on
the CPU; a scratch and a `pl.run_scoped` buffer of each type):

* Mosaic GPU, compiled: `plgpu.SMEM`, `plgpu.TMEM` (and barriers, semaphores). Every TPU type (`pltpu.VMEM`,
  `SMEM`, `HBM`, `VMEM_SHARED`, `CMEM`), `pl.ANY` and a `plgpu.GMEM` array are refused:
  `NotImplementedError: Unsupported memory space: vmem` (its resource estimator, jax/_src/pallas/mosaic_gpu/
  lowering.py). `pltpu.SMEM` is refused too, though it prints as `smem`: it is the TPU's enum member.
* Mosaic TPU, compiled: every TPU type and `pl.ANY`; the GPU types (`plgpu.SMEM`, `GMEM`, `TMEM`) are refused:
  `Invalid memory space: <MemorySpace.SMEM: 'smem'>` (`_memory_space_to_mosaic_attribute`; a run_scoped buffer
  meets the same function through `_alloc_value`).
* The TPU interpreter (`pltpu.InterpretParams`) refuses the GPU types: `KeyError: <MemorySpace.SMEM: 'smem'>`.
* `interpret=True` and the GPU interpreter (`plgpu.kernel(..., interpret=True)`) run every one of them: nothing
  is reported for a kernel an interpreter may run, nor for a Triton `pallas_call`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import reads
from .evaluate import as_memtype
from .kernel_args import launch_field
from .kernel_model import MOSAIC_GPU, MOSAIC_GPU_WARP, SCRATCH_KEYWORDS, SEMAPHORE_DTYPES, TPU_TC
from .kernels import pallas_calls, reachable_functions
from .values import MemType, Seq, Value

if TYPE_CHECKING:
    from .kernel_model import KernelModel
    from .model import ModuleModel

GPU, TPU, TPU_INTERPRETER = "Mosaic GPU", "Mosaic TPU", "the TPU interpreter"

# The global-memory types a Mosaic GPU kernel cannot allocate itself: its global buffers are its operands.
GPU_GLOBAL = ("plgpu.GMEM", "pl.ANY", "pltpu.HBM")
# Each backend's on-chip buffer, for the other backend's on-chip type (what a fix writes in its place).
OWN_TYPE = {
    GPU: {"pltpu.VMEM": "plgpu.SMEM", "pltpu.SMEM": "plgpu.SMEM", "pltpu.VMEM_SHARED": "plgpu.SMEM"},
    TPU: {"plgpu.SMEM": "pltpu.VMEM", "plgpu.TMEM": "pltpu.VMEM"},
}
OWN_TYPE[TPU_INTERPRETER] = OWN_TYPE[TPU]
# JAX's enum member's repr, in TPU's messages.
_GPU_ENUM = {"plgpu.SMEM": "smem", "plgpu.GMEM": "gmem", "plgpu.TMEM": "tmem"}


@dataclass(frozen=True)
class Placement:
    """A buffer the kernel allocates: `kind` "scratch" or "run_scoped"; `use` the expression that gives its type
    there (the scratch list's element, the run_scoped argument; the whole keyword where no element is written),
    in `model`; `call` the launch or the run_scoped call."""

    kind: str
    model: "ModuleModel"
    use: ast.expr
    memtype: MemType
    call: ast.AST


def platform(kernel: "KernelModel") -> str | None:
    """The lowering that certainly places the kernel's buffers: GPU, TPU or TPU_INTERPRETER; None where an
    interpreter that places any type may run it, or the backend is not known."""
    entry = kernel.entry
    if kernel.interpreter == "tpu" and kernel.compiled_backend in (MOSAIC_GPU, MOSAIC_GPU_WARP):
        return None  # the TPU interpreter refuses a Mosaic GPU kernel's own operands first (PAL026's)
    if kernel.interpreter == "tpu" and not entry.maybe_interpret:
        return TPU_INTERPRETER
    if entry.interpret or entry.maybe_interpret or kernel.interpreter is not None or kernel.certain_interpret:
        return None
    if kernel.backend in (MOSAIC_GPU, MOSAIC_GPU_WARP):
        return GPU
    if kernel.backend == TPU_TC:
        return TPU
    return None


def refusal(where: str, memtype: MemType) -> str | None:
    """JAX's words where the `where` lowering refuses a buffer of `memtype`; None where it places it."""
    if memtype.dtype in SEMAPHORE_DTYPES or memtype.dtype in ("barrier", "cluster_barrier"):
        return None
    constructor = memtype.constructor
    if where == GPU and (constructor.startswith("pltpu.") or constructor in GPU_GLOBAL):
        return f"NotImplementedError: Unsupported memory space: {memtype.space}"
    if constructor in _GPU_ENUM and where == TPU:
        return f"Invalid memory space: <MemorySpace.{_GPU_ENUM[constructor].upper()}: '{_GPU_ENUM[constructor]}'>"
    if constructor in _GPU_ENUM and where == TPU_INTERPRETER:
        return f"KeyError: <MemorySpace.{_GPU_ENUM[constructor].upper()}: '{_GPU_ENUM[constructor]}'>"
    return None


def global_workspace(where: str, memtype: MemType) -> bool:
    """A global-memory array a Mosaic GPU kernel asks to allocate (PAL019's): its own global buffers are outputs."""
    return where == GPU and memtype.constructor in GPU_GLOBAL


def refused(project, kernel: "KernelModel") -> list[tuple[Placement, str, str]]:
    """(placement, platform, JAX's words) for each buffer of the kernel its lowering refuses. Kept with what it
    read while the kernel's model is the same (an edit elsewhere keeps it: `kernel_model._entry_model`), and
    with the same interpret marks: PAL018 and PAL019 each ask of every kernel, twice, at every keystroke."""
    if not reads.tracking():
        return _refused(project, kernel)
    entry = kernel.entry
    memo = entry.model.eval_cache
    key = ("refused-buffers", id(entry.node), id(kernel))
    marks = (kernel, tuple(entry.interpret), tuple(entry.maybe_interpret))
    found = memo.get(key)
    if found is not None and found[0][0] is kernel and found[0][1:] == marks[1:]:
        return found[1]
    return reads.kept(memo, key, lambda: (marks, _refused(project, kernel)))[1]


def _refused(project, kernel: "KernelModel") -> list[tuple[Placement, str, str]]:
    where = platform(kernel)
    if where is None:
        return []
    found = []
    for placement in placements(project, kernel, where):
        quote = refusal(where, placement.memtype)
        if quote is not None:
            found.append((placement, where, quote))
    return found


def refused_here(ctx, rule, workspaces: bool):
    """(kernel, placement, platform, JAX's words) for each refused buffer asked for in this module, once each,
    inside the rule's isolation for its kernel: the global workspaces (PAL019's) or the others (PAL018's)."""
    reported: set[int] = set()
    for kernel in refusing_kernels(ctx):
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            for placement, where, quote in refused(ctx.project, kernel):
                if placement.model is not ctx.model or id(placement.use) in reported \
                        or bool(global_workspace(where, placement.memtype)) != workspaces:
                    continue
                reported.add(id(placement.use))
                yield kernel, placement, where, quote


def refusing_kernels(ctx) -> list:
    """The kernels of this module and its importers with a buffer their lowering refuses, once a test module that
    runs them interpreted (`with plgpu.force_gpu_interpret_mode():`) has marked them: those are not reported."""
    from .kernels import KernelIndex

    # A buffer is reported where it is asked for: a scratch list at its launch (this module's kernels), or a
    # pl.run_scoped call here, which an importer's kernel may run. Without one, the importers' kernels (whose
    # search is most of what a rule asking for them costs) can give no finding here.
    from .evaluate import KERNEL_FACTORIES

    importers = ctx.calls_any(("pl.run_scoped",))
    if not importers and not ctx.calls_any(KERNEL_FACTORIES):
        return []  # no launch and no run_scoped here: no buffer of this module to report (nor its kernels to model)
    kernels = [k for k in ctx.kernels_here_and_in_importers(importers=importers) if refused(ctx.project, k)]
    if kernels:
        for importer in ctx.project.importers(ctx.model):
            if ctx.project.index.mentions_interpret(importer.path):
                KernelIndex.of(ctx.project, importer)
    return kernels


def placements(project, kernel: "KernelModel", where: str | None, leaves=None) -> list[Placement]:
    """The kernel's scratch buffers (where its launch lowers them) and its `pl.run_scoped` buffers: the memory
    types each asks for, or what `leaves(value)` picks out of it (a `jax.ShapeDtypeStruct`, PAL027's)."""
    leaves = leaves or _memtypes
    entry = kernel.entry
    found: list[Placement] = []
    scratch = SCRATCH_KEYWORDS.get(entry.api)
    if scratch is not None and (where != GPU or entry.api == "plgpu.kernel"):
        found += _scratch(project, kernel, scratch.keyword, leaves)
    body = entry.body
    if body is None:
        return found
    for func in reachable_functions(project, body):
        for call in pallas_calls(project, func.model, "pl.run_scoped"):
            if func.model.enclosing_function(call) is not func.node:
                continue
            arguments = [a for a in call.args[1:] if not isinstance(a, ast.Starred)]
            arguments += [k.value for k in call.keywords if k.arg not in (None, "collective_axes")]
            for argument in arguments:
                for memtype in leaves(project.evaluator.value(func.model, argument)):
                    found.append(Placement("run_scoped", func.model, argument, memtype, call))
    return found


def _scratch(project, kernel: "KernelModel", keyword: str, leaves) -> list[Placement]:
    entry = kernel.entry
    written = entry.kernel.kwarg(keyword)
    node = written[1] if written else None
    value = launch_field(project, entry, keyword)
    if value is None:
        return []
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return [Placement("scratch", entry.model, element, memtype, entry.node) for element in node.elts
                for memtype in leaves(project.evaluator.value(entry.model, element))]
    use = node if node is not None else entry.node
    return [Placement("scratch", entry.model, use, memtype, entry.node) for memtype in leaves(value)]


def _memtypes(value: Value) -> list[MemType]:
    """The memory types a scratch or run_scoped argument gives: itself, or the items of a list, tuple or dict."""
    return typed_leaves(as_memtype(value), MemType)


def typed_leaves(value: Value, kind: type, depth: int = 0) -> list:
    """The values of `kind` an argument gives: itself, or the items of a list, tuple or dict."""
    value = as_memtype(value)
    if isinstance(value, kind):
        return [value]
    if depth < 3 and isinstance(value, Seq):
        return [m for item in value.items for m in typed_leaves(item, kind, depth + 1)]
    items = getattr(value, "items", None)
    if depth < 3 and isinstance(items, tuple) and all(isinstance(i, tuple) and len(i) == 2 for i in items):
        return [m for _, item in items for m in typed_leaves(item, kind, depth + 1)]  # a dict's values
    return []
