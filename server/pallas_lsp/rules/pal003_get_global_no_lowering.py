"""PAL003 get-global-no-lowering: `pl.get_global` in a kernel whose backend has no lowering for it.

Only Mosaic GPU (`plgpu.kernel`, `pl.kernel` with a `plgpu.Mesh`) lowers `get_global`. Triton (what a
`pl.pallas_call` for a GPU uses), the TPU TensorCore, SparseCore subcores and warp-level code inside
`pl.core_map(plgpu.WarpMesh(...))` fail at lowering time with `NotImplementedError: Unimplemented
primitive ...: get_global`. A `pallas_call` drops a get_global whose result feeds nothing as dead code,
so that one lowers and is not reported.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernel_model import GET_GLOBAL_NOT_LOWERED, MOSAIC_GPU_WARP, SC_SCALAR, SC_VECTOR, TPU_TC, TRITON
from ..analysis.evaluate import as_memtype
from ..analysis.values import Const, MemType, OneOf
from ..analysis.interpret_errors import chosen_interpreter, interpreted_quote
from .pal001_get_global_not_semaphore import is_semaphore_kind, problem

CODE = "PAL003"
NAME = "get-global-no-lowering"
SEVERITY = "error"
SUMMARY = "pl.get_global on a backend that cannot lower it (Triton, TPU TensorCore, SparseCore, WarpMesh)."

# What to do on each backend (JAX's words: kernel_model.GET_GLOBAL_NOT_LOWERED).
_TPU_ADVICE = "use a {scratch} semaphore"  # the launch's scratch keyword: scratch_shapes, scratch_types
ADVICE = {
    TRITON: "move the kernel to plgpu.kernel (Mosaic GPU)",
    TPU_TC: _TPU_ADVICE,
    SC_VECTOR: _TPU_ADVICE,
    SC_SCALAR: _TPU_ADVICE,
    MOSAIC_GPU_WARP: "call it outside the core_map",
}
# What the first sentence quotes where the whole message would not fit the Problems panel.
_QUOTED = {
    SC_VECTOR: "Unimplemented primitive in ... lowering for sc_vector_subcore: get_global",
    SC_SCALAR: "Unimplemented primitive in ... lowering for sc_scalar_subcore: get_global",
    MOSAIC_GPU_WARP: "Unimplemented primitive in Pallas Mosaic GPU lowering: get_global for ... Warp",
}
DETAIL = {
    TRITON: "only Mosaic GPU allocates global semaphores; a pallas_call never lowers through it from jax 0.11.2 on",
    TPU_TC: "a {kind} in {scratch} is shared by the grid iterations on a core",
    SC_VECTOR: "a {kind} in {scratch} is shared by the iterations on a subcore",
    SC_SCALAR: "a {kind} in {scratch} is shared by the iterations on a subcore",
    MOSAIC_GPU_WARP: "the semaphore ref it returns in the kernel body can be used inside the warp-level code",
}
_SHORT = {TRITON: "Triton", TPU_TC: "TPU TensorCore", SC_VECTOR: "SparseCore vector subcore",
          SC_SCALAR: "SparseCore scalar subcore", MOSAIC_GPU_WARP: "Mosaic GPU warp-level"}


def message(kernel, what=None, switched: bool = False, interpreter: str | None = None) -> str:
    """JAX's words (once) and what to do, then why; the scratch keyword this launch takes, and the TPU semaphore
    kind asked for (a DMA one stays DMA in scratch)."""
    backend = kernel.backend
    quoted = _QUOTED.get(backend, GET_GLOBAL_NOT_LOWERED[backend])
    scratch = kernel.scratch_parameter or "scratch"
    memtype = as_memtype(what) if what is not None else None
    kind = ("pltpu.SemaphoreType.DMA" if isinstance(memtype, MemType) and memtype.dtype == "dma_sem"
            else "pltpu.SemaphoreType.REGULAR")
    advice = ADVICE[backend].format(scratch=scratch)
    if backend == TPU_TC and isinstance(memtype, MemType) and memtype.constructor == "pltpu.SemaphoreType.BARRIER":
        # What devices signal each other through: the semaphore a collective_id reserves, not one of scratch.
        advice = "use pltpu.get_barrier_semaphore() with a collective_id in pltpu.CompilerParams"
    if kernel.api == "plgpu.warp_map":
        advice = "call it before the warp_map"
    said = f'JAX: "{quoted}"'
    if switched or may_run_interpreted(kernel):  # its caller decides: both of JAX's answers
        said = f'JAX, compiled: "{quoted}"; interpreted: "{interpreted_quote(what, interpreter)}"'
        if backend == TRITON and isinstance(memtype, MemType) and memtype.constructor.startswith("pltpu."):
            # A TPU semaphore in a kernel that may run interpreted: a scratch one runs there, and on a TPU
            advice = _TPU_ADVICE.format(scratch=scratch) + " (interpret mode and a TPU run one)"
    return (f'{said}; {advice}. '
            f"{kernel.backend_reason}, and {_SHORT[backend]} has no get_global lowering "
            f"({DETAIL[backend].format(scratch=scratch, kind=kind)}).")


def _tpu_interpreter_module(project, entry) -> bool:
    """The launch's module switches the TPU interpreter on somewhere the analysis does not follow to the launch
    (`pltpu.force_tpu_interpret_mode()` returned by a helper a CLI flag or the backend picks, then entered with
    `with`): the kernel may run interpreted too."""
    from ..analysis.kernel_model import _tpu_interpreter_module as switches_tpu_interpreter

    return switches_tpu_interpreter(project, entry)


def may_run_interpreted(kernel) -> bool:
    """The launch's `interpret=` is a parameter of the function launching it (a harness or test passes
    `interpret=jax.default_backend() != "tpu"`), or a value decided at run time (a call not folded to a
    constant: `interpret=not _on_accelerator()`): it may run interpreted,
    where every interpreter fails on get_global with its own error."""
    entry = kernel.entry
    if entry.maybe_interpret:
        return True
    found = entry.kernel.kwarg("interpret")
    node = found[1] if found else None
    if node is not None and not isinstance(found[0], Const) and any(isinstance(n, ast.Call) for n in ast.walk(node)):
        return True  # `interpret=not _on_accelerator()`, `interpret=jax.default_backend() == "cpu"`: run time decides
    if not isinstance(node, ast.Name):
        return False
    binding = entry.model.lookup(node.id, entry.model.scope_of(node), node.lineno)
    return binding is not None and binding.kind == "param"


def check(ctx):
    rule = sys.modules[__name__]
    reported: set[int] = set()
    for kernel, site in ctx.kernels_reaching():
        with ctx.isolated(rule, site.call, site.model):
            if kernel.backend not in GET_GLOBAL_NOT_LOWERED or id(site.call) in reported or not kernel.reached(site):
                continue
            options = site.what.options if isinstance(site.what, OneOf) else (site.what,)
            if any(problem(o) and not is_semaphore_kind(o) for o in options):
                continue  # not a semaphore at all: PAL001, with this backend's words
            reported.add(id(site.call))
            switched = kernel.backend == TPU_TC and _tpu_interpreter_module(ctx.project, kernel.entry)
            interpreter = (chosen_interpreter(ctx.project, kernel.entry) if may_run_interpreted(kernel)
                           else "tpu" if switched else None)
            yield ctx.finding(rule, site.call, message(kernel, site.what, switched, interpreter),
                              (ctx.entry_related(kernel),),
                              facts={"kernel": kernel, "get_global": site.call, "model": site.model,
                                     "backend": kernel.backend, "entry": kernel.entry})
