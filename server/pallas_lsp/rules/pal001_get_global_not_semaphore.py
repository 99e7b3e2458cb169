"""PAL001 get-global-not-semaphore: `pl.get_global` of anything but a Mosaic GPU REGULAR semaphore.

JAX's Mosaic GPU resource estimator and lowering accept only GMEM semaphores and raise
`NotImplementedError: get_global only supports semaphores, got <aval>` for the rest, at lowering
time; the message here is JAX's own, shown while the user types, with what to do instead.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from ..analysis.evaluate import as_memtype
from ..analysis.kernels import get_global_argument, get_global_calls
from ..analysis.values import Api, MemType, OneOf, ShapeDtype, Value
from ..fixes import get_global_fixes

CODE = "PAL001"
NAME = "get-global-not-semaphore"
SEVERITY = "error"
SUMMARY = "pl.get_global only supports Mosaic GPU plgpu.SemaphoreType.REGULAR semaphores."

_AS_INPUT = ("pass the array as a normal kernel input instead (a BlockSpec in in_specs for pallas_call, "
             "an operand for plgpu.kernel)")
_AS_SCRATCH = ("allocate it as scratch instead (scratch_shapes for pallas_call, scratch_types for plgpu.kernel, "
               "or pl.run_scoped)")
_USE_REGULAR = "use plgpu.SemaphoreType.REGULAR for a global semaphore"
_TAIL = "; get_global only allocates plgpu.SemaphoreType.REGULAR semaphores"


def advice(value: MemType) -> str:
    if value.dtype in ("semaphore", "barrier_semaphore", "dma_sem"):
        return _USE_REGULAR
    if value.space in ("gmem", "any", "hbm"):
        return _AS_INPUT + _TAIL
    return _AS_SCRATCH + _TAIL


def problem(value: Value) -> str | None:
    """The message for a value that get_global rejects, or None if it is fine or unknown."""
    value = as_memtype(value)
    if isinstance(value, MemType):
        if value.is_gpu_global_semaphore:
            return None
        what = value.picture or f"{value.source} (a {value.space.upper()} buffer)"
        return f"get_global only supports semaphores, got {what}: {advice(value)}"
    if isinstance(value, ShapeDtype):
        return (f"get_global needs a memory-space type, not {value.source}: JAX fails with AttributeError: "
                f"'ShapeDtypeStruct' object has no attribute 'get_ref_aval'; {_AS_INPUT}")
    if isinstance(value, Api) and value.name in ("pl.ANY", "plgpu.GMEM", "plgpu.SMEM", "plgpu.TMEM", "pltpu.VMEM",
                                                  "pltpu.SMEM", "pltpu.HBM"):
        return (f"get_global needs a shaped memory type such as {value.name}(shape, dtype), got the bare memory "
                f"space {value.name}: {_AS_INPUT}{_TAIL}")
    return None


def _other_backends_only(ctx) -> set[int]:
    """get_global calls reached only by kernels of a backend with no get_global lowering at all (Triton,
    TPU, SparseCore, WarpMesh): JAX never looks at the type there; PAL003 reports them, or they are dead code."""
    from .pal003_get_global_no_lowering import JAX_MESSAGE

    backends: dict[int, set[str]] = {}
    for kernel, site in ctx.kernels_reaching():
        backends.setdefault(id(site.call), set()).add(kernel.backend)
    return {call for call, found in backends.items() if found <= JAX_MESSAGE.keys()}


def _unexpected_keywords(call) -> list[str]:
    return [k.arg for k in call.keywords if k.arg is not None and k.arg != "what"]


def check(ctx):
    evaluator = ctx.project.evaluator
    rule = sys.modules[__name__]
    skipped = _other_backends_only(ctx)
    for call in get_global_calls(ctx.project, ctx.model):
        unexpected = _unexpected_keywords(call)
        if unexpected:
            yield ctx.finding(rule, call, (f"JAX: \"TypeError: get_global() got an unexpected keyword argument "
                                           f"'{unexpected[0]}'\"; get_global takes one argument, the semaphore type. "
                                           "Scope comes from the kernel: a global semaphore spans its grid and cluster."),
                              facts={"get_global": call, "model": ctx.model, "keywords": unexpected})
            continue
        if id(call) in skipped:
            continue
        argument = get_global_argument(call)
        if argument is None:
            continue
        value = evaluator.value(ctx.model, argument)
        options = value.options if isinstance(value, OneOf) else (value,)
        for option in options:
            message = problem(option)
            if message:
                finding = ctx.finding(rule, call, message, facts={"get_global": call, "model": ctx.model})
                yield replace(finding, fixes=get_global_fixes(ctx.project, ctx.model, call, as_memtype(option), finding))
                break
