"""The JAX side of a trace: JAX's resource estimator captured, the traced jaxpr walked for the lines JAX
blames, the user's module imported the way the user would, and `Worker`, the clean state each trace
forks from.

Standard library and jax only: the trace runner (runner.py) loads this file by path under the
ANALYSED project's interpreter, which has no pallas_lsp. Lowering errors carry no frame of the user's
own: the jaxpr does. Failures are located by walking the traced jaxpr's equations and their
`source_info` (jax-get-global.md, section 5).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import traceback

_HERE = os.path.dirname(os.path.realpath(__file__))
# The trace process's own files (runner.py and the modules it loads): never the user's, even when
# the user's workspace is this repository.
OWN_FILES = frozenset(os.path.join(_HERE, name) for name in ("runner.py", "tracing.py", "containment.py", "launches.py"))

GET_GLOBAL_NOT_SEMAPHORE = "get_global only supports semaphores"
INTERPRET_ERRORS = ("No ir_type_handler for aval type", "get_global discharge is not supported")
NO_GPU_DEVICE = "No supported GPU devices found"
# JAX's messages raised far from the user's line (the estimator, the lowering of the whole jaxpr):
# the equation they are about is found in the jaxpr instead.
NO_LOWERING_RULE = "Unimplemented primitive in Pallas Triton lowering: get_global"
COLLECTIVE_RUN_SCOPED = "Only thread-collective allocations are supported in run_scoped"
EFFECTS_OUTSIDE_KERNEL = "Cannot lower jaxpr with effects"
BARRIER_RUN_SCOPED = "Unsupported memory space: gmem"  # a Mosaic GPU BARRIER semaphore from pl.run_scoped
# A kernel refused as a whole (its shared memory, its TMEM columns): JAX names no line; its launch is it.
OVER_BUDGET = ("Mosaic GPU kernel exceeds available shared memory", "After rounding up, got")
ABSTRACT_GPU = ("NVIDIA H200", 132)  # what Triton cross-lowers for when no GPU is attached
ABSTRACT_TPU = ("TPU v5 lite", 1)  # what a TPU kernel that asks for the chip (emit_pipeline, a core mesh) traces for
NO_TPU_DEVICE = "Unsupported TPU device kind"
MAX_MESSAGE = 4000


# ---- JAX's resource estimator, captured -----------------------------------------------------------

class ResourceCapture:
    """Wraps Mosaic GPU's `_estimate_resources` and keeps what it returned for each whole kernel.

    The estimator recurses through itself (run_scoped, cond, loops); only the outermost call of
    each kernel is the kernel's estimate.
    """

    def __init__(self) -> None:
        self.kernels: list[dict] = []
        self.installed = False
        self.error: str | None = None
        self._depth = 0

    def install(self) -> None:
        if self.installed:
            return
        try:
            from jax._src.pallas.mosaic_gpu import lowering
        except Exception as exc:  # noqa: BLE001 - a jax without Mosaic GPU still lowers other kernels
            self.error = f"Mosaic GPU lowering not importable: {type(exc).__name__}: {exc}"
            return
        original = getattr(lowering, "_estimate_resources", None)
        if original is None:
            self.error = "this jax has no mosaic_gpu.lowering._estimate_resources"
            return
        capture = self

        def _estimate_resources(ctx, jaxpr, *args, **kwargs):
            capture._depth += 1
            try:
                resources = original(ctx, jaxpr, *args, **kwargs)
            finally:
                capture._depth -= 1
            if capture._depth == 0:
                capture.kernels.append(_kernel_record(jaxpr, resources))
            return resources

        lowering._estimate_resources = _estimate_resources
        self.installed = True
        try:
            from jax.experimental.mosaic.gpu import core as mgpu_core
        except Exception:  # noqa: BLE001 - the estimate alone is still worth reporting
            return
        tree_size = getattr(mgpu_core, "_smem_tree_size", None)
        if tree_size is None:
            return

        def _smem_tree_size(buffers):
            size = tree_size(buffers)
            # `_launch` sizes the kernel's whole shared memory (scratch, barriers, the TMEM address) and
            # compares it with `max_smem_bytes`: that figure, for the kernel just estimated.
            if sys._getframe(1).f_code.co_name == "_launch" and capture.kernels:
                capture.kernels[-1]["launch_smem_bytes"] = int(size)
            return size

        mgpu_core._smem_tree_size = _smem_tree_size


def _kernel_record(jaxpr, resources) -> dict:
    debug = getattr(jaxpr, "debug_info", None)
    name = getattr(debug, "func_name", None) or "kernel"
    barriers = getattr(resources, "barrier_counts", None) or {}
    semaphores = getattr(resources, "scoped_gmem_semaphores", None) or {}
    record = {
        "name": name,
        "location": _kernel_location(jaxpr, name),
        "smem_bytes": int(getattr(resources, "smem_scratch_bytes", 0)),
        "barriers": int(sum(barriers.values())),
        "barrier_kinds": [{"kind": str(kind), "count": int(count)} for kind, count in barriers.items()],
        "tmem_cols": int(getattr(resources, "tmem_scratch_cols", 0)),
        "tmem_collective_cols": int(getattr(resources, "tmem_collective_scratch_cols", 0)),
        "gmem_semaphores": int(sum(semaphores.values())),
        "semaphore_scopes": [{"collective_axes": [str(a) for a in (axes if isinstance(axes, tuple) else (axes,))],
                              "count": int(count)} for axes, count in semaphores.items()],
        "estimate": str(resources),
    }
    return record


def _kernel_location(jaxpr, name: str) -> dict | None:
    """The first line of the kernel body that produced an equation (the estimate names no line)."""
    best = first = None
    try:
        for eqn, _, _ in _walk_eqns(jaxpr):
            frame = _user_frame(eqn)
            if frame is None:
                continue
            loc = _frame_location(frame)
            if first is None:
                first = loc
            if frame.function_name == name and (best is None or loc["line"] < best["line"]):
                best = loc
    except Exception:  # noqa: BLE001 - a location is a courtesy, the estimate is the fact
        return None
    return best or first


def _abstract_mesh(platform: str):
    """JAX's own way to trace and lower for a device that is not attached: an abstract one."""
    import jax
    from jax.sharding import AbstractDevice, AbstractMesh
    kind, cores = ABSTRACT_GPU if platform == "cuda" else ABSTRACT_TPU
    mesh = AbstractMesh((1,), ("_device",), abstract_device=AbstractDevice(
        device_kind=kind, num_cores=cores, platform="gpu" if platform == "cuda" else "tpu"))
    return jax.sharding.use_abstract_mesh(mesh)


class AbstractChip:
    """The TPU that code asking which TPU it runs on is told about, where none is attached: the abstract
    `ABSTRACT_TPU`. JAX answers `pltpu.get_tpu_info()`, `pltpu.create_tensorcore_mesh()` and
    `pltpu.is_tpu_device()` from an abstract mesh's device when one is in effect, else from the attached
    device (`Unsupported TPU device kind: cpu`); here, where the attached device would be asked and it is no
    TPU, the abstract chip answers which TPU it is instead, so a traced entry's own host code that asks
    (block sizes from the chip, a TensorCore mesh) reaches its launch; `is_tpu_device()` still says no. Installed only in a trace's own process, never where a
    TPU is attached; `answers` counts the questions it answered (the types then came from this chip)."""

    def __init__(self) -> None:
        self.kind, self.cores = ABSTRACT_TPU
        self.answers = 0

    def install(self) -> bool:
        import jax
        try:
            from jax._src import mesh as mesh_lib
            from jax._src import tpu_info
            from jax._src.pallas.mosaic import core as tpu_core
        except Exception:  # noqa: BLE001 - a jax without them asks no chip this way
            return False
        try:
            if jax.default_backend() == "tpu":
                return False
        except Exception:  # noqa: BLE001 - no backend at all: no TPU either
            pass
        chip = self

        def answered(original, value):
            def ask():
                if mesh_lib.get_abstract_mesh().abstract_device is not None:
                    return original()  # the code chose its own abstract device: JAX answers from it
                chip.answers += 1
                return value
            ask.__name__, ask.__doc__, ask.__wrapped__ = original.__name__, original.__doc__, original
            return ask

        attached_kind = tpu_info.get_device_kind

        def is_tpu_device():  # still the truth about the attached device: code choosing its backend keeps its path
            return tpu_info.chip_version_from_device_kind(attached_kind()) is not None

        if getattr(tpu_info, "is_tpu_device", None) is not None:
            replace_everywhere(tpu_info.is_tpu_device, is_tpu_device)
        for module, name, value in ((tpu_info, "get_device_kind", self.kind),
                                    (tpu_info, "get_num_device_cores", self.cores),
                                    (tpu_core, "_get_default_num_cores", self.cores)):
            original = getattr(module, name, None)
            if original is not None:
                replacement = answered(original, value)
                replace_everywhere(original, replacement)
                for cls in vars(module).values():  # `pltpu.TensorCoreMesh(...)`: its num_cores' default
                    _replace_default_factory(cls, original, replacement)
        global CHIP
        CHIP = self
        return True


CHIP: AbstractChip | None = None  # installed in this process (a trace's own): the abstract TPU answers


def _replace_default_factory(cls, original, replacement) -> None:
    """A dataclass field whose default is made by `original`: made by `replacement` (the generated
    `__init__` keeps each factory in a closure cell named after its field)."""
    fields = getattr(cls, "__dataclass_fields__", None) if isinstance(cls, type) else None
    init = getattr(cls, "__init__", None)
    cells = dict(zip(getattr(getattr(init, "__code__", None), "co_freevars", ()), getattr(init, "__closure__", None) or ()))
    for name, spec in (fields or {}).items():
        if getattr(spec, "default_factory", None) is original:
            spec.default_factory = replacement
            cell = cells.get(f"__dataclass_dflt_{name}__")
            if cell is not None and cell.cell_contents is original:
                cell.cell_contents = replacement


def replace_everywhere(original, replacement) -> int:
    """Every module attribute that is `original` (re-exports hold the same object) set to `replacement`,
    deprecated aliases (`_deprecations`) too; how many were replaced."""
    replaced = 0
    for holder in list(sys.modules.values()):
        try:
            names = [k for k, v in vars(holder).items() if v is original]
        except TypeError:
            continue
        for name in names:
            try:
                setattr(holder, name, replacement)
                replaced += 1
            except (AttributeError, TypeError):  # a module that refuses keeps the original
                pass
        deprecated = getattr(holder, "_deprecations", None)
        for name, value in list(deprecated.items()) if isinstance(deprecated, dict) else ():
            if isinstance(value, tuple) and len(value) == 2 and value[1] is original:
                deprecated[name] = (value[0], replacement)
                replaced += 1
    return replaced


# ---- jaxpr walking and locations ------------------------------------------------------------------

KERNEL_PRIMITIVES = ("pallas_call", "mpmd_map", "core_map")


def _walk_eqns(jaxpr, inside: bool = False, around: tuple = ()):
    """Every equation with whether it runs inside a kernel and the equations around it (outermost first),
    through every nested jaxpr."""
    from jax._src import core as jax_core
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr on older releases
    for eqn in jaxpr.eqns:
        yield eqn, inside, around
        kernel = inside or eqn.primitive.name in KERNEL_PRIMITIVES
        for sub in jax_core.jaxprs_in_params(eqn.params):
            yield from _walk_eqns(sub, kernel, (*around, eqn))


def kernel_ref_types(primitive: str, params) -> list[dict]:
    """{"path", "line", "name", "aval"} for each ref a kernel body receives, from a `pallas_call` or
    `mpmd_map` equation's params: the body jaxpr's invars are the refs in parameter order (named by
    its debug info); `plgpu.kernel` allocates its scratch in a nested `run_scoped`, whose invars
    follow (named by the body's own parameters). `line` is the body's first line (`def`, or its
    first decorator), as the jaxpr's debug info gives it."""
    found = []
    if primitive == "pallas_call":
        jaxpr = params["jaxpr"]
        where = _function_source(jaxpr.debug_info)
        if where is not None:
            for name, var in zip(jaxpr.debug_info.arg_names or (), jaxpr.invars):
                found.append({"path": where[0], "line": where[1], "name": name, "aval": str(var.aval)})
    elif primitive == "mpmd_map":
        for jaxpr in params["jaxprs"]:
            jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
            own = _function_source(jaxpr.debug_info)
            if own is not None and not _in_jax(own[0]):
                # The body itself (`pl.kernel` over a TPU mesh: its scratch among its own refs), not
                # `plgpu.kernel`'s wrapper, which allocates the scratch in a nested run_scoped.
                found.extend({"path": own[0], "line": own[1], "name": name, "aval": str(var.aval)}
                             for name, var in zip(jaxpr.debug_info.arg_names or (), jaxpr.invars))
                continue
            scoped = next((e for e in jaxpr.eqns if e.primitive.name == "run_scoped"), None)
            inner = scoped.params["jaxpr"] if scoped is not None else None
            where = _function_source(inner.debug_info) if inner is not None else None
            function = _function_at(*where) if where is not None else None
            if function is None:
                continue
            args = function.args
            names = [a.arg for a in [*args.posonlyargs, *args.args]]
            keywords = {a.arg for a in [*args.args, *args.kwonlyargs]}
            rest = names[len(jaxpr.invars):]
            scratch = [(n if n in keywords else (rest[i] if i < len(rest) else None), v)
                       for i, (n, v) in enumerate(zip(inner.debug_info.arg_names or (), inner.invars))]
            for name, var in [*zip(names, jaxpr.invars), *scratch]:
                if name is not None:
                    found.append({"path": where[0], "line": where[1], "name": name, "aval": str(var.aval)})
    return found


def _traced_ref_types(jaxpr) -> list[dict]:
    """`kernel_ref_types` of every kernel equation of a traced program, distinct, in order."""
    found = []
    for eqn, _, _ in _walk_eqns(jaxpr):
        for ref in kernel_ref_types(eqn.primitive.name, eqn.params):
            if ref not in found:
                found.append(ref)
    return found


def _in_jax(path: str) -> bool:
    """Whether `path` is one of jax's own modules (a wrapper of its own around a kernel body)."""
    import jax
    return path.startswith(os.path.realpath(os.path.dirname(jax.__file__)) + os.sep)


def _function_source(debug_info) -> tuple[str, int] | None:
    """(path, line) of a jaxpr's `name at path:line`."""
    source = getattr(debug_info, "func_src_info", None) or ""
    path, _, line = source.rpartition(" at ")[2].rpartition(":")
    return (os.path.realpath(path), int(line)) if line.isdigit() and path else None


def _function_at(path: str, line: int):
    import ast

    try:
        with open(path, encoding="utf-8") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                line in (node.lineno, min([node.lineno, *(d.lineno for d in node.decorator_list)])):
            return node
    return None


def _user_frame(eqn):
    from jax._src import source_info_util
    return source_info_util.user_frame(eqn.source_info.traceback)


def _frame_location(frame) -> dict:
    location = {"path": os.path.realpath(frame.file_name), "line": int(frame.start_line),
                "column": int(getattr(frame, "start_column", 0) or 0), "function": frame.function_name}
    end_line, end_column = getattr(frame, "end_line", None), getattr(frame, "end_column", None)
    if end_line and end_column is not None and end_column >= 0:
        location.update(end_line=int(end_line), end_column=int(end_column))
    return location


def _is_gmem_semaphore(what) -> bool:
    import jax.numpy as jnp
    from jax._src.pallas import core as pallas_core
    from jax._src.pallas.mosaic_gpu import core as gpu_core
    try:
        return what.memory_space == gpu_core.GMEM and bool(jnp.issubdtype(what.dtype, pallas_core.semaphore))
    except Exception:  # noqa: BLE001 - exotic avals are simply "not a semaphore"
        return False


def _get_global_locations(jaxpr, only_non_semaphores: bool) -> list[dict]:
    def wanted(eqn, inside):
        return eqn.primitive.name == "get_global" and not (
            only_non_semaphores and _is_gmem_semaphore(eqn.params.get("what")))
    return _eqn_locations(jaxpr, wanted, lambda eqn: f"get_global({eqn.params.get('what')})")


def _eqn_locations(jaxpr, wanted, why, enclosing: bool = False) -> list[dict]:
    """User lines of the equations `wanted(eqn, inside_kernel)` picks; `why(eqn)` says what each is. With
    `enclosing`, an equation that names no user line has that of the nearest equation around it that names one
    (a launch traced inside a `jax.jit` that a test case's launcher wraps around the kernel names only JAX's
    frames)."""
    out = []
    for eqn, inside, around in _walk_eqns(jaxpr):
        if wanted(eqn, inside):
            frames = (_user_frame(e) for e in (eqn, *(reversed(around) if enclosing else ())))
            frame = next((f for f in frames if f is not None), None)
            if frame is not None:
                out.append({**_frame_location(frame), "why": why(eqn)})
    return out


def _run_scoped_gmem(eqn, dtype_name: str) -> bool:
    """A run_scoped that allocates a GMEM ref of a Pallas dtype (`semaphore`, `barrier_semaphore`) or one under it."""
    if eqn.primitive.name != "run_scoped":
        return False
    import jax.numpy as jnp
    from jax._src.pallas import core as pallas_core

    avals = [v.aval for v in getattr(eqn.params.get("jaxpr"), "invars", ())]
    return any(str(getattr(a, "memory_space", "")).lower() in ("gmem", "memoryspace.gmem")
               and jnp.issubdtype(getattr(a, "dtype", None) or jnp.float32, getattr(pallas_core, dtype_name))
               for a in avals)


def _is_barrier_run_scoped(eqn, inside: bool) -> bool:
    """A run_scoped that asked for a Mosaic GPU BARRIER semaphore, whose memory space the estimator refuses."""
    return _run_scoped_gmem(eqn, "barrier_semaphore")


def _is_collective_run_scoped(eqn, inside: bool) -> bool:
    """A run_scoped of a collective allocation, or of a GMEM semaphore with no collective axes at all (refused
    in a kernel with warpgroups, where it must name the thread axis)."""
    return eqn.primitive.name == "run_scoped" and (bool(eqn.params.get("collective_axes"))
                                                    or _run_scoped_gmem(eqn, "semaphore"))


def _is_get_global_outside_kernel(eqn, inside: bool) -> bool:
    return eqn.primitive.name == "get_global" and not inside


def _is_kernel_launch(eqn, inside: bool) -> bool:
    """The equation that runs a kernel (plgpu.kernel's custom_vmap_call around it too), outside any kernel."""
    return not inside and eqn.primitive.name in ("custom_vmap_call", *KERNEL_PRIMITIVES)


class UserFiles:
    """Which files are the user's: under the workspace root or the traced file's folder, not installed."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots if r]

    def __contains__(self, path: str) -> bool:
        path = os.path.realpath(path)
        if path in OWN_FILES or "site-packages" in path or "dist-packages" in path:
            return False
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)


def _traceback_locations(exc: BaseException, user: UserFiles) -> list[dict]:
    """The deepest user frame along the exception chain (JAX attaches the operation's own stack as
    `JaxStackTraceBeforeTransformation`, which is where the user's line hides)."""
    seen = set()
    chain = []
    e = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        best = None
        for fs in traceback.extract_tb(e.__traceback__):
            if fs.filename in user:
                best = {"path": os.path.realpath(fs.filename), "line": fs.lineno, "column": 0,
                        "function": fs.name}
        if best is not None:
            return [best]
    return []


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else ""


# ---- importing the user's module the way the user would ------------------------------------------

def _package_root_and_name(path: str) -> tuple[str, str]:
    folder, name = os.path.split(path)
    parts = [] if name == "__init__.py" else [os.path.splitext(name)[0]]
    while os.path.exists(os.path.join(folder, "__init__.py")) and os.path.dirname(folder) != folder:
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return folder, ".".join(parts)


def _import_user_module(path: str, roots: list[str]):
    top, name = _package_root_and_name(path)
    for folder in [os.path.dirname(path), *roots, top][::-1]:
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
    existing = sys.modules.get(name)
    if existing is None:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name and not name.startswith(f"{exc.name}."):
                raise
            module = None
        if module is not None and os.path.realpath(getattr(module, "__file__", "") or "") == path:
            return module
    # The name is taken by something else (a stdlib or installed module of the same name): load the
    # file under a private name instead.
    private = "_pallas_trace_" + name.replace(".", "_")
    spec = importlib.util.spec_from_file_location(private, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[private] = module
    spec.loader.exec_module(module)
    return module


def _user_module_files(user: UserFiles) -> dict:
    files = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and file in user and os.path.exists(file):
            st = os.stat(file)
            files[os.path.realpath(file)] = [st.st_mtime_ns, st.st_size]
    return files


def _resolve(module, function: str):
    value = module
    for part in function.split("."):
        if not hasattr(value, part):
            where = getattr(value, "__name__", type(value).__name__)
            raise LookupError(f"{where} has no attribute {part!r}")
        value = getattr(value, part)
    if not callable(value):
        raise TypeError(f"{function} is a {type(value).__name__}, not a function")
    return value


# ---- lowering for a platform ----------------------------------------------------------------------

def lowering_platform(platform: str) -> str:
    """What `lowering_platforms` takes for a trace platform (`host` is the CPU)."""
    return "cpu" if platform == "host" else platform


class Lowering:
    """`jax.jit(fn).trace(*args).lower(...)` for a platform, as a trace and a launch reached by an
    entry point both do it. A bare GPU `pallas_call` (Triton) asks the device for its compute
    capability, a TPU kernel its chip (`Unsupported TPU device kind: cpu`); with none attached, JAX's own
    way to cross-lower is an abstract device, so the lowering is tried again under one. `traced` is kept whatever happens: the error walker reads it."""

    def __init__(self, fn, args, platform: str, gpu: bool = False, stage=lambda name: None) -> None:
        self.fn, self.args, self.platform, self.gpu, self.stage = fn, args, platform, gpu, stage
        self.traced = None
        self.abstract_device: str | None = None

    def run(self):
        import jax

        target = (lowering_platform(self.platform),)
        try:
            self.stage("trace")
            self.traced = jax.jit(self.fn).trace(*self.args)
            self.stage("lower")
            return self.traced.lower(lowering_platforms=target)
        except (RuntimeError, ValueError) as exc:
            if not self._needs_abstract_device(exc):
                raise
        finally:
            if self.platform == "tpu" and CHIP is not None and CHIP.answers:
                self.abstract_device = CHIP.kind  # asked before or while it lowered: for that chip
        self.abstract_device = (ABSTRACT_GPU if self.platform == "cuda" else ABSTRACT_TPU)[0]
        self.stage("trace")
        with _abstract_mesh(self.platform):
            self.traced = jax.jit(self.fn).trace(*self.args)
            self.stage("lower")
            return self.traced.lower(lowering_platforms=target)

    def _needs_abstract_device(self, exc: BaseException) -> bool:
        """A bare GPU `pallas_call` with no GPU attached, or a TPU kernel that asks which TPU it runs on
        (`emit_pipeline`, a TensorCore mesh) with no TPU attached: JAX asked for the device, not the kernel."""
        if self.platform == "cuda":
            return isinstance(exc, RuntimeError) and not self.gpu and str(exc).startswith(NO_GPU_DEVICE)
        return self.platform == "tpu" and isinstance(exc, ValueError) and str(exc).startswith(NO_TPU_DEVICE)


def call_arguments(jax, given: list[dict], fn):
    """(the abstract arrays to trace with, what to trace): `fn` itself where every argument is a positional
    array, else `fn` with the Python values (`{"static": 2.0}`, `{"static_dtype": "bfloat16"}`) and the
    keywords bound as the call that gave them passes them."""
    arrays, slots = [], []
    for argument in given:
        if "shape" in argument:
            arrays.append(jax.ShapeDtypeStruct(tuple(argument["shape"]), jax.numpy.dtype(argument["dtype"])))
            slots.append((argument.get("keyword"), True, None))
        elif "static_dtype" in argument:
            slots.append((argument.get("keyword"), False, getattr(jax.numpy, argument["static_dtype"])))
        else:
            slots.append((argument.get("keyword"), False, argument.get("static")))
    if all(keyword is None and traced for keyword, traced, _ in slots):
        return arrays, fn

    def call(*traced_values):
        values = iter(traced_values)
        positional, keywords = [], {}
        for keyword, traced, value in slots:
            value = next(values) if traced else value
            if keyword is None:
                positional.append(value)
            else:
                keywords[keyword] = value
        return fn(*positional, **keywords)

    call.__name__ = getattr(fn, "__name__", "call")
    return arrays, call


# ---- one trace ----------------------------------------------------------------------------------

PREIMPORTED = ("jax.numpy", "jax.experimental.pallas", "jax.experimental.pallas.mosaic_gpu",
               "jax.experimental.pallas.triton", "jax.experimental.pallas.tpu")


class Worker:
    """The clean state every trace forks from: jax and Pallas imported, no backend started (its
    threads would not survive a fork), no user code ever run."""

    def __init__(self) -> None:
        started = time.perf_counter()
        import jax
        for name in PREIMPORTED:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - a jax without it traces the other kernels
                pass
        self.import_seconds = time.perf_counter() - started
        self.jax = jax
        self.capture = ResourceCapture()
        self.capture.install()
        self.gpu = False
        self.backend: str | None = None
        self.traces = 0

    def compiles(self, platform: str) -> bool:
        """Whether a launch lowered for `platform` is also compiled: only where its device is attached
        (a GPU for cuda, a TPU for tpu), as `trace` does; `PALLAS_LSP_TRACE_COMPILE=0` turns it off."""
        if os.environ.get("PALLAS_LSP_TRACE_COMPILE", "1") == "0":
            return False
        return (platform == "cuda" and self.gpu) or (platform == "tpu" and self.backend == "tpu")

    def probe(self) -> dict:
        """What the backend offers (run in a fresh process, like a trace)."""
        jax = self.jax
        try:
            gpu = bool(jax.devices("gpu"))
        except Exception:  # noqa: BLE001 - "no GPU" is an answer
            gpu = False
        try:
            devices = [f"{d.platform}:{d.device_kind}" for d in jax.devices()]
        except Exception as exc:  # noqa: BLE001
            devices = [f"unavailable: {exc}"]
        return {"gpu": gpu, "devices": devices, "backend": jax.default_backend()}

    def hello(self, probe: dict) -> dict:
        try:
            import jaxlib
            jaxlib_version = getattr(jaxlib, "__version__", None) or jaxlib.version.__version__
        except Exception:  # noqa: BLE001
            jaxlib_version = None
        self.gpu = bool(probe.get("gpu"))
        self.backend = probe.get("backend")
        return {"op": "hello", "pid": os.getpid(), "python": sys.version.split()[0],
                "executable": sys.executable, "jax": self.jax.__version__, "jaxlib": jaxlib_version,
                "backend": probe.get("backend"), "devices": probe.get("devices"), "gpu": self.gpu,
                "import_seconds": round(self.import_seconds, 4),
                "resource_capture": self.capture.error or "ok"}

    def trace(self, request: dict, pid: int, limit_memory=lambda: None) -> dict:
        """One trace, in the fresh process made for it (`pid`: that process as the server knows it);
        `limit_memory()` runs once the backend started, before the user's module is imported."""
        jax = self.jax
        started = time.perf_counter()
        try:
            jax.devices()
        except Exception:  # noqa: BLE001 - the trace itself says what is missing
            pass
        backend_seconds = time.perf_counter() - started
        limit_memory()
        result = self._trace(request, pid)
        result["worker"]["backend_seconds"] = round(backend_seconds, 6)
        return result

    def _trace(self, request: dict, pid: int) -> dict:
        jax = self.jax
        path = os.path.realpath(request["path"])
        function = request["function"]
        platform = request.get("platform") or "cuda"
        roots = [r for r in request.get("roots") or [] if r] or [os.path.dirname(path)]
        user = UserFiles([*roots, os.path.dirname(path)])
        want_compile = request.get("compile")
        local = platform == "host" or (platform == "cuda" and self.gpu)
        compile_it = local if want_compile is None else bool(want_compile and local)

        result: dict = {
            "ok": False, "stage": "import", "path": path, "function": function, "platform": platform,
            "lowering_platform": lowering_platform(platform), "args": [], "error": None, "kernels": [],
            "compiled": False,
            "compile_skipped": None if compile_it else (
                "not requested" if want_compile is False else
                f"no local {platform} device" if platform != "host" else "not requested"),
            "timings": {}, "files": {},
            "jax": jax.__version__,
            "worker": {"pid": pid, "trace_number": self.traces},
        }
        timings = result["timings"]
        self.capture.kernels = []
        traced = None
        started = time.perf_counter()
        stage_start = started

        def stage(name: str) -> None:
            nonlocal stage_start
            now = time.perf_counter()
            timings[result["stage"]] = round(now - stage_start, 6)
            result["stage"] = name
            stage_start = now

        try:
            AbstractChip().install()  # no TPU here: the traced code asking which TPU gets the abstract one
            module = _import_user_module(path, roots)
            stage("resolve")
            fn = _resolve(module, function)
            args, fn = call_arguments(jax, request.get("args") or [], fn)
            result["args"] = [f"{a.dtype}{list(a.shape)}".replace(" ", "") for a in args]
            lowering = Lowering(fn, args, platform, self.gpu, stage)
            try:
                lowered = lowering.run()
            finally:
                traced = lowering.traced
            if lowering.abstract_device:
                result["abstract_device"] = lowering.abstract_device
            if compile_it:
                stage("compile")
                lowered.compile()
                result["compiled"] = True
            stage("done")
            result["ok"] = True
        except BaseException as exc:  # noqa: BLE001 - sys.exit and KeyboardInterrupt in user code too
            timings[result["stage"]] = round(time.perf_counter() - stage_start, 6)
            result["error"] = describe_error(exc, result["stage"], traced, user)
        finally:
            result["kernels"] = list(self.capture.kernels)
            try:  # what each kernel body's refs are, as JAX traced them (hovers show them until an edit)
                result["kernel_refs"] = _traced_ref_types(traced.jaxpr) if traced is not None else []
            except Exception:  # noqa: BLE001 - never lose the trace's own answer over this
                result["kernel_refs"] = []
            result["files"] = _user_module_files(user)
        timings["total"] = round(time.perf_counter() - started, 6)
        return result


def describe_error(exc: BaseException, stage: str, traced, user: UserFiles) -> dict:
    """JAX's exception as a trace reports it: type, first line, stage, and the user's lines it is about
    (read off the traced jaxpr where the traceback names none of theirs)."""
    if isinstance(exc, SystemExit):
        message = f"the traced code called sys.exit({exc.code!r})"
    else:
        message = _first_line(exc)
    error = {"type": type(exc).__name__, "message": message[:MAX_MESSAGE], "stage": stage,
             "locations": [], "traceback": "".join(traceback.format_exception(exc))[-MAX_MESSAGE:]}
    locations: list[dict] = []
    if traced is not None and stage in ("lower", "compile"):
        try:
            if message.startswith(GET_GLOBAL_NOT_SEMAPHORE):
                locations = _get_global_locations(traced.jaxpr, only_non_semaphores=True)
            elif any(m in message for m in INTERPRET_ERRORS) or message.startswith(NO_LOWERING_RULE):
                locations = _get_global_locations(traced.jaxpr, only_non_semaphores=False)
            elif message.startswith(COLLECTIVE_RUN_SCOPED):
                locations = _eqn_locations(traced.jaxpr, _is_collective_run_scoped, lambda eqn: "run_scoped")
            elif message.startswith(BARRIER_RUN_SCOPED):
                locations = _eqn_locations(traced.jaxpr, _is_barrier_run_scoped, lambda eqn: "run_scoped")
            elif message.startswith(EFFECTS_OUTSIDE_KERNEL):
                locations = _eqn_locations(traced.jaxpr, _is_get_global_outside_kernel, lambda eqn: "get_global")
            elif message.startswith(OVER_BUDGET):
                locations = _eqn_locations(traced.jaxpr, _is_kernel_launch, lambda eqn: "kernel launch",
                                           enclosing=True)
        except Exception as walk_error:  # noqa: BLE001
            error["locating_failed"] = f"{type(walk_error).__name__}: {walk_error}"
    if not locations:
        locations = _traceback_locations(exc, user)
    seen = set()
    for loc in locations:
        key = (loc["path"], loc["line"])
        if key not in seen:
            seen.add(key)
            error["locations"].append(loc)
    return error
