"""PAL001 get-global-not-semaphore: `pl.get_global` of anything but a Mosaic GPU REGULAR semaphore.

JAX's Mosaic GPU resource estimator and lowering accept only GMEM semaphores and raise
`NotImplementedError: get_global only supports semaphores, got <aval>` for the rest, at lowering
time; the message here is JAX's own, shown while the user types, with what to do instead.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.evaluate import as_memtype
from ..analysis.host_code import host_functions
from ..analysis.kernel_model import (GET_GLOBAL_NOT_LOWERED, INTERPRET, SC_SCALAR, SC_VECTOR, TPU_TC, TRITON,
                                     _imports_mosaic_gpu, uses_of)
from ..analysis.kernels import get_global_argument, get_global_arguments, get_global_calls
from ..analysis.mapped_get_global import kernels_holding, mapped_get_globals
from ..analysis.values import Api, MemType, OneOf, ShapeDtype, Value
from .pal002_get_global_interpret import SHORT_QUOTE

CODE = "PAL001"
NAME = "get-global-not-semaphore"
SEVERITY = "error"
SUMMARY = "pl.get_global only supports Mosaic GPU plgpu.SemaphoreType.REGULAR semaphores."

# What to do: a short first sentence (the Problems panel shows about 120 characters), then the details.
_USE_REGULAR = "use plgpu.SemaphoreType.REGULAR", "That is the one type get_global allocates: a global semaphore"
_TAIL = "; get_global only allocates plgpu.SemaphoreType.REGULAR semaphores"
# On a TPU no backend allocates anything with get_global: scratch is the answer, not a GPU semaphore.
_TPU_TAIL = "; on a TPU get_global allocates nothing: scratch buffers and semaphores go in scratch_shapes"
_TPU_BACKENDS = (TPU_TC, SC_VECTOR, SC_SCALAR)
_INPUT_OF = {"pl.pallas_call": "a BlockSpec in in_specs of pallas_call", "plgpu.kernel": "an operand of plgpu.kernel",
             "pl.kernel": "an operand of pl.kernel", "pl.core_map": "a ref the core_map body closes over"}


def _as_input(kernels) -> str:
    apis = sorted({k.api for k in kernels if k.api in _INPUT_OF})
    if not apis:
        return "Use a BlockSpec in in_specs for pallas_call, an operand for plgpu.kernel"
    return "Pass it as " + " or ".join(_INPUT_OF[api] for api in apis)


def _as_scratch(kernels) -> str:
    if not kernels:
        return "Use scratch_shapes for pallas_call, scratch_types for plgpu.kernel and pl.kernel, or pl.run_scoped"
    where = sorted({f"{k.scratch_parameter} of {k.api}" for k in kernels if k.scratch_parameter})
    none = sorted({k.api for k in kernels if not k.scratch_parameter})
    return ("Use " + " or ".join([*where, "pl.run_scoped"])
            + (f" ({' and '.join(none)} on Mosaic GPU lowers no scratch)" if none else ""))


def on_tpu(kernels) -> bool:
    """Do TPU launches (compiled, or run by the TPU interpreter) alone reach the call?"""
    return bool(kernels) and all(k.interpreter == "tpu" or (k.compiled_backend if k.interpreter else k.backend)
                                 in _TPU_BACKENDS for k in kernels)


def _tpu_type_unlaunched(value: MemType, kernels, tpu_module: bool) -> bool:
    """No launch is known (a decorator or a registry launches the body) in a module that does not import Mosaic
    GPU, and the type is one only a TPU has: it speaks for the platform, where JAX has no get_global lowering."""
    return tpu_module and not kernels and (value.dtype == "dma_sem" or value.constructor.startswith("pltpu.")
                                           and value.dtype not in ("semaphore", "barrier_semaphore"))


def advice(value: MemType, kernels=(), tpu_module: bool = False) -> tuple[str, str]:
    """(what to do, in a few words; the details) for a memory type get_global rejects, naming the scratch
    or input parameter of the launches (`kernels`: the kernel models reaching the call) that apply."""
    tpu = on_tpu(kernels) or _tpu_type_unlaunched(value, kernels, tpu_module)
    tail = _TPU_TAIL if tpu else _TAIL
    if value.dtype == "dma_sem" and tpu:
        return "allocate it as scratch", _as_scratch(kernels) + " (a DMA semaphore is a TPU scratch semaphore)" + tail
    if value.dtype in ("semaphore", "barrier_semaphore", "dma_sem"):
        return _USE_REGULAR
    if value.space in ("gmem", "any", "hbm"):
        return "pass the array as a kernel input", _as_input(kernels) + tail
    return "allocate it as scratch", _as_scratch(kernels) + tail


_ARRAY_TYPES = ("plgpu.SMEM", "plgpu.GMEM", "plgpu.TMEM", "pltpu.VMEM", "pltpu.SMEM", "pltpu.HBM", "pl.ANY")


def _what(value: MemType) -> str:
    """The type as JAX's message pictures it; where its shape is not known statically, the source as written
    (`plgpu.SMEM(shape, jnp.float32)`), or JAX's picture with the shape left out where that is long (a config
    method's `plgpu.SMEM((rows * self.head_dim,), self.dtype)`: the Problems panel shows ~120 characters)."""
    if value.picture:
        return value.picture
    if len(value.source) > 32 and value.dtype and value.constructor in _ARRAY_TYPES:
        return f"Ref<{value.space}>{{{value.dtype}[...]}}"
    return f"{value.source} (a {value.space.upper()} buffer)"


def problem(value: Value, kernels=(), tpu_module: bool = False) -> str | None:
    """The message for a value that get_global rejects, or None if it is fine or unknown. `tpu_module`: the module
    does not import Mosaic GPU."""
    value = as_memtype(value)
    if isinstance(value, MemType):
        if value.is_gpu_global_semaphore:
            return None
        what = _what(value)
        short, details = advice(value, kernels, tpu_module)
        if _tpu_type_unlaunched(value, kernels, tpu_module):
            return f'JAX, on a TPU: "{GET_GLOBAL_NOT_LOWERED[TPU_TC]}"; {short}. This asks for {what}. {details}'
        return f'JAX: "get_global only supports semaphores, got {what}"; {short}. {details}'  # a NotImplementedError
    if isinstance(value, ShapeDtype):
        how = _as_input(kernels)
        return ("JAX: \"AttributeError: 'ShapeDtypeStruct' object has no attribute 'get_ref_aval'\"; pass the array "
                f"as a kernel input. get_global needs a memory-space type, not {value.source}: {how[0].lower()}{how[1:]}")
    if isinstance(value, Api) and value.name in ("pl.ANY", "plgpu.GMEM", "plgpu.SMEM", "plgpu.TMEM", "pltpu.VMEM",
                                                  "pltpu.SMEM", "pltpu.HBM"):
        return (f"get_global needs a shaped memory type such as {value.name}(shape, dtype), got the bare memory "
                f"space {value.name}: pass the array as a kernel input instead. {_as_input(kernels)}{_TAIL}")
    return None


SEMAPHORE_DTYPES = ("semaphore", "barrier_semaphore", "dma_sem")
# What every interpreter says of a get_global, whatever it asks for (jax 0.12: checked for interpret=True,
# pltpu.InterpretParams and plgpu.InterpretGPUParams): PAL003 quotes it where a launch may run interpreted.
INTERPRETED_QUOTE = SHORT_QUOTE


def is_semaphore_kind(value) -> bool:
    """Any semaphore type (GPU or TPU, regular, barrier or DMA): on a backend with no get_global at all,
    PAL003 reports these; anything else is not what get_global is for, on every backend (PAL001)."""
    value = as_memtype(value)
    return isinstance(value, MemType) and value.dtype in SEMAPHORE_DTYPES


def _lowered_backends(ctx) -> dict[int, set[str]]:
    """For each get_global call reached by kernels: the backends that lower it (empty: every kernel
    reaching it is a pallas_call that drops it as dead code)."""
    backends: dict[int, set[str]] = {}
    for kernel, site in ctx.kernels_reaching():
        found = backends.setdefault(id(site.call), set())
        if kernel.reached(site):
            found.add(kernel.backend)
    return backends


def _message(value, problem_text: str, backends: set[str] | None, kernels=()) -> str:
    """JAX's words on the backend that lowers this get_global: Mosaic GPU's own check, another backend's
    missing lowering, or the interpreters' failure (then the type advice follows)."""
    if not backends or not isinstance(as_memtype(value), MemType):
        return problem_text
    said = "JAX"
    if backends == {INTERPRET}:
        said = "JAX, compiled"  # interpreted, JAX says PAL002's words
        # Interpreted, JAX fails before any type check (PAL002 quotes that); the type is wrong for the platform
        # the kernel compiles for, in that platform's words (the same once "Run the kernel compiled" is applied).
        backends = {k.compiled_backend for k in kernels} or backends
    if not backends <= GET_GLOBAL_NOT_LOWERED.keys():
        return problem_text
    quoted = GET_GLOBAL_NOT_LOWERED[sorted(backends)[0]]
    memtype = as_memtype(value)
    short, details = advice(memtype, kernels)
    what = _what(memtype)
    return (f'{said}: "{quoted}"; {short}. get_global only allocates semaphores, '
            f"and only on Mosaic GPU; this asks for {what}. {details}")


def _kernels_of(ctx) -> dict[int, list]:
    """The kernel models reaching each get_global call of the module (by the call's id)."""
    found: dict[int, list] = {}
    for kernel, site in ctx.kernels_reaching():
        found.setdefault(id(site.call), []).append(kernel)
    return found


def signature_error(call) -> tuple[str, str] | None:
    """(Python's TypeError for this call of `get_global(what)`, what to do), or None when the call fits its
    one parameter (or a `*args` / `**kwargs` spread hides what it passes)."""
    arguments = get_global_arguments(call)
    if arguments is None:
        return None
    args, keywords = arguments
    spread = any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords)
    unexpected = [k.arg for k in keywords if k.arg is not None and k.arg != "what"]
    if unexpected:
        return f"get_global() got an unexpected keyword argument '{unexpected[0]}'", "pass only the semaphore type"
    if spread:
        return None
    positional, by_keyword = len(args), any(k.arg == "what" for k in keywords)
    if positional > 1:
        return (f"get_global() takes 1 positional argument but {positional} were given",
                "pass only the semaphore type")
    if positional and by_keyword:
        return "get_global() got multiple values for argument 'what'", "pass the semaphore type once"
    if not positional and not by_keyword:
        return "get_global() missing 1 required positional argument: 'what'", "pass the semaphore type"
    return None


def check(ctx):
    evaluator = ctx.project.evaluator
    rule = sys.modules[__name__]
    lowered = _lowered_backends(ctx)
    launched_by = _kernels_of(ctx)
    tpu_module = not _imports_mosaic_gpu(ctx.model)
    for call in get_global_calls(ctx.project, ctx.model):
        with ctx.isolated(rule, call):
            wrong = signature_error(call)
            if wrong:
                error, what_to_do = wrong
                yield ctx.finding(rule, call, (f'JAX: "TypeError: {error}"; {what_to_do}. get_global takes one argument, '
                                               "the semaphore type (plgpu.SemaphoreType.REGULAR). Scope comes from the "
                                               "kernel: a global semaphore spans its grid and cluster."),
                                  facts={"get_global": call, "model": ctx.model, "signature": error})
                continue
            argument = get_global_argument(call)
            if argument is None:
                continue
            value = evaluator.value(ctx.model, argument)
            backends = lowered.get(id(call))
            func = ctx.model.enclosing_function(call)
            if backends is None and func is not None and not any(use.live for use in uses_of(ctx.project, ctx.model, call)) \
                    and id(func) in host_functions(ctx.project, ctx.model):
                backends = set()  # run outside any kernel, its result feeding nothing: jit drops it as dead code
            options = value.options if isinstance(value, OneOf) else (value,)
            kernels = launched_by.get(id(call), ())
            for option in options:
                message = problem(option, kernels, tpu_module)
                if message and backends is not None and not isinstance(option, ShapeDtype):
                    if not backends:
                        continue  # dropped as dead code by every pallas_call reaching it
                    if is_semaphore_kind(option) and backends <= GET_GLOBAL_NOT_LOWERED.keys():
                        continue  # a semaphore where get_global has no lowering at all: PAL003
                    if is_semaphore_kind(option) and on_tpu(kernels):
                        continue  # a TPU semaphore in a kernel the TPU interpreter runs: PAL002 (scratch_shapes)
                    message = _message(option, message, backends, kernels)
                if message:
                    yield ctx.finding(rule, call, message, facts={"get_global": call, "model": ctx.model})
                    break
    yield from _mapped(ctx, rule)


def _mapped(ctx, rule):
    """`jax.tree.map(pl.get_global, types)`: JAX's error names the first leaf it rejects, in flatten order.
    Reported only for compiled kernels whose body holds the call, where every leaf before that one is a
    known global semaphore (the finding has no fix: the types belong in scratch, which the call does not say)."""
    found = mapped_get_globals(ctx.project, ctx.model)
    if not found:
        return
    kernels_all = ctx.kernels()
    for call, leaves in found:
        kernels = kernels_holding(ctx.project, ctx.model, call, kernels_all)
        if not kernels or any(k.interpreter for k in kernels):
            continue  # interpreted, JAX fails before any type check: PAL002's words, not these
        backends = {k.backend for k in kernels}
        if TRITON in backends:
            continue  # a bare pallas_call: the leaves' types, which choose its platform, are not counted there
        for leaf in leaves:
            memtype = as_memtype(leaf)
            if isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore:
                continue
            message = problem(leaf, kernels) if isinstance(memtype, MemType) else None
            if message and not (is_semaphore_kind(leaf) and backends <= GET_GLOBAL_NOT_LOWERED.keys()):
                message = _message(leaf, message, backends, kernels)
                with ctx.isolated(rule, call):
                    yield ctx.finding(rule, call, message, facts={"model": ctx.model, "mapped_get_global": call})
            break  # a leaf not known, or this one: JAX stops at the first it rejects

