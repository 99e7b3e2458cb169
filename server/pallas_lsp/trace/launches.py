"""The project's own entry points run for real, every Pallas launch they reach traced and lowered by JAX
instead of run.

Standard library and jax only: the trace runner (runner.py) loads this file by path under the ANALYSED
project's interpreter, and runs each entry point (a test, a `__main__` block, an annotated function) in
a contained process of its own (containment.py). Before the user's code is imported, the launch APIs
(`pl.pallas_call`, `plgpu.kernel`, `pl.kernel`; `pl.core_map` through the `pl.run_state` around it) are
replaced wherever a module holds them: the kernel they build is handed back wrapped, and a call of it, with arrays or with tracers (under `jax.jit`,
`jax.vmap`, `jax.custom_vjp`), traces and lowers the ORIGINAL launch for the platform it targets,
sends what JAX said (`containment.emit`: kept if the entry dies later) and returns zeros of its output
types, so the entry goes on. No kernel is ever executed. A launch JAX rejected ends its entry.
"""

from __future__ import annotations

import ast
import functools
import os
import signal
import sys
import threading
import time

GRACE_SECONDS = 2.0  # past an entry's time limit, the hard kill waits this long (or a quarter more) for the soft one
SKIP_EXCEPTIONS = ("Skipped", "SkipTest", "XFailed")  # pytest.skip / importorskip, unittest's, pytest.xfail
NEEDS_DEVICE = ("Unknown backend", "No supported GPU devices", "failed to initialize", "No visible", "TPU",
                "Only interpret mode is supported on CPU backend")
# Launch APIs: (module, attribute, name in reports). Re-exports (jax.experimental.pallas...) hold the
# same function objects and are found by identity.
APIS = (("jax._src.pallas.pallas_call", "pallas_call", "pl.pallas_call"),
        ("jax._src.pallas.mosaic_gpu.core", "kernel", "plgpu.kernel"),
        ("jax._src.pallas.helpers", "kernel", "pl.kernel"),
        # `pl.core_map` on its own: the `pl.run_state` around it is the launch (`_run_state`)
        ("jax._src.pallas.core", "core_map", "pl.core_map"),
        ("jax._src.state.discharge", "run_state", "pl.run_state"))


class LaunchRejected(BaseException):
    """JAX rejected a launch: its entry ends here (a BaseException: user code's `except Exception` does
    not swallow it)."""


class EntryTimeout(BaseException):
    pass


class EntryForked(BaseException):
    pass


class UntraceableLaunch(BaseException):
    """A launch given something that is no array (a ref): it cannot be traced alone, nor answered."""


# ---- which platform a launch lowers for -----------------------------------------------------------

def _backend_of(value, depth: int = 0) -> str | None:
    """`cuda` or `tpu` when `value` (compiler params, a mesh, a memory space, scratch types, block
    specs, through lists, tuples and dicts) belongs to a backend's module; None when it says nothing."""
    if depth > 4 or value is None:
        return None
    found = _backend_of_module(type(value).__module__ or "")
    if found:
        return found
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _backend_of(item, depth + 1)
            if found:
                return found
        return None
    space = getattr(value, "memory_space", None)
    return _backend_of(space, depth + 1) if space is not None and space is not value else None


def _backend_of_body(body) -> str | None:
    """`tpu` or `cuda` when the kernel function (and the functions nested in it) names the Pallas modules
    of that backend only (`pltpu.VMEM`, `pltpu.make_async_copy`): a `pallas_call` whose arguments say
    nothing of its backend runs where its body's primitives do. None when it names both or neither."""
    body = _unwrapped(body)
    body = getattr(body, "__func__", body)
    code, scope = getattr(body, "__code__", None), getattr(body, "__globals__", None)
    if code is None or not isinstance(scope, dict):
        return None
    found, codes = set(), [code]
    while codes:
        current = codes.pop()
        codes.extend(c for c in current.co_consts if hasattr(c, "co_names"))
        for name in current.co_names:
            module = getattr(scope.get(name), "__name__", None) if name in scope else None
            if isinstance(module, str) and ".pallas" in module:
                found.add(_backend_of_module(module))
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _backend_of_module(module: str) -> str | None:
    if ".pallas.mosaic_gpu" in module or ".pallas.triton" in module:
        return "cuda"
    if module.endswith(".pallas.tpu") or ".pallas.mosaic" in module or ".pallas.tpu." in module:
        return "tpu"
    return None


def _interpreted(interpret) -> bool:
    try:
        return bool(interpret)
    except Exception:  # noqa: BLE001 - params objects are truthy
        return True


class LaunchInfo:
    """What a launch API was given: its body, where it was built, and what says its platform."""

    def __init__(self, api: str, args: tuple, kwargs: dict, built: dict | None, bare_platform: str) -> None:
        self.api = api
        self.built = built
        body = args[0] if args else kwargs.get("kernel", kwargs.get("body"))
        if isinstance(body, (list, tuple)) and body:  # pl.kernel's MPMD form: the first body
            body = body[0]
        self.body = _body_location(body)
        self.interpret = kwargs.get("interpret")
        if api == "plgpu.kernel":
            self.platform, self.reason = "cuda", "plgpu.kernel is a Mosaic GPU kernel"
            return
        found = None
        for key in ("compiler_params", "mesh", "scratch_shapes", "scratch_types", "in_specs", "out_specs", "grid_spec"):
            found = _backend_of(kwargs.get(key))
            if found:
                break
        if found:
            backend = "Mosaic GPU" if found == "cuda" else "TPU"
            self.platform = found
            self.reason = f"its mesh is a {backend} one" if key == "mesh" else f"its {key} are {backend} ones"
        elif _backend_of_body(body):
            self.platform = _backend_of_body(body)
            backend = "Mosaic GPU" if self.platform == "cuda" else "TPU"
            self.reason = f"its body uses {backend} primitives and nothing of another backend"
        else:
            self.platform = bare_platform
            self.reason = f"a bare {api} is lowered for {bare_platform} (the project's platform)"

    def platform_now(self) -> tuple[str, str]:
        """The platform at the moment of the launch: interpret mode (the kernel's own, or a
        `force_*_interpret_mode` / `set_*_interpret_mode` in effect) runs on the host."""
        if self.interpret is not None and _interpreted(self.interpret):
            return "host", "it runs in interpret mode (interpret=...): lowered for the CPU"
        try:
            from jax._src import config
            forced = config.pallas_tpu_interpret_mode_context_manager.value
        except Exception:  # noqa: BLE001 - an older jax without the switch
            forced = None
        if forced:
            return "host", "interpret mode is forced where it is launched: lowered for the CPU"
        return self.platform, self.reason


def _unwrapped(body):
    """The kernel function itself: through functools.partial and wrappers."""
    for _ in range(20):
        if isinstance(body, functools.partial):
            body = body.func
        elif getattr(body, "__wrapped__", None) is not None:
            body = body.__wrapped__
        else:
            break
    return body


def _body_location(body) -> dict | None:
    """The kernel function's own code: through functools.partial and wrappers."""
    body = _unwrapped(body)
    code = getattr(body, "__code__", None)
    if code is None:
        return None
    return {"path": os.path.realpath(code.co_filename), "line": code.co_firstlineno,
            "function": getattr(code, "co_qualname", code.co_name)}


# ---- the interception ------------------------------------------------------------------------------

class Launch:
    """A kernel a launch API built, as the user's code gets it: calling it lowers instead of running."""

    def __init__(self, interceptor: "Interceptor", fn, info: LaunchInfo) -> None:
        self._interceptor, self._fn, self._info = interceptor, fn, info
        try:
            functools.update_wrapper(self, fn)
        except (AttributeError, TypeError):
            pass

    def __call__(self, *args, **kwargs):
        if self._interceptor.inside:
            return self._fn(*args, **kwargs)
        return self._interceptor.launch(self, args, kwargs)

    def __getattr__(self, name):
        return getattr(self._fn, name)

    def __get__(self, instance, owner=None):
        """Bound as a method where the kernel itself would be (a jitted `pallas_call` is)."""
        if instance is None or not hasattr(type(self._fn), "__get__"):
            return self
        return functools.partial(self, instance)


class Interceptor:
    """The launch APIs replaced, and what every launch reached so far was."""

    def __init__(self, tracing, worker, user, bare_platform: str = "cuda", emit=lambda record: None) -> None:
        import jax

        self.jax, self.tracing, self.worker, self.user = jax, tracing, worker, user
        self.bare_platform = bare_platform
        self.emit = emit
        self._thread = threading.local()  # per thread: another thread's launch is still the user's
        self._lowering = threading.Lock()  # one lowering at a time: the resource capture is shared
        self.records: list[dict] = []
        self.rejected = False
        self._seen: dict = {}

    @property
    def inside(self) -> bool:
        """This thread is lowering a launch: launches nested in it are JAX's own, not intercepted."""
        return getattr(self._thread, "inside", False)

    def install(self) -> int:
        """Replace every module attribute that is one of the launch APIs; how many were replaced."""
        import importlib

        replaced = 0
        for module_name, attribute, api in APIS:
            try:
                module = importlib.import_module(module_name)
            except Exception:  # noqa: BLE001 - a jax without that backend
                continue
            original = getattr(module, attribute, None)
            if original is None:
                continue
            patched = {"pl.core_map": self._core_map, "pl.run_state": self._run_state}.get(
                api, lambda original: self._constructor(api, original))(original)
            replaced += self.tracing.replace_everywhere(original, patched)
        return replaced

    def _constructor(self, api: str, original):
        interceptor = self

        @functools.wraps(original)
        def construct(*args, **kwargs):
            built = original(*args, **kwargs)
            if interceptor.inside:
                return built
            has_body = bool(args) or "kernel" in kwargs or "body" in kwargs
            if has_body and type(args[0] if args else kwargs.get("kernel", kwargs.get("body"))).__name__ == "NotSpecified":
                has_body = False
            if not has_body:  # the decorator form: the body comes next
                if api == "pl.kernel":  # its decorator does not come back through here
                    return lambda fun: construct(fun, *args, **kwargs)
                return built  # plgpu.kernel's decorator calls the (replaced) module-level kernel
            return Launch(interceptor, built, LaunchInfo(api, args, kwargs, interceptor.user_location(),
                                                         interceptor.bare_platform))

        return construct

    def _core_map(self, original):
        """`pl.core_map(mesh, ...)` as given: while a `pl.run_state` is being probed, what it maps
        (the mesh, the body) is noted, and that run_state is a launch."""
        interceptor = self

        @functools.wraps(original)
        def core_map(mesh, **kwargs):
            decorate = original(mesh, **kwargs)

            def wrapped(body):
                probing = getattr(interceptor._thread, "core_maps", None)
                if probing is not None and not interceptor.inside:
                    probing.append((body, dict(kwargs, mesh=mesh)))
                return decorate(body)
            return wrapped

        return core_map

    def _run_state(self, original):
        """`pl.run_state(f)`: where `f` maps a `pl.core_map` (found by tracing it once, abstractly),
        calling it is a launch of that core_map: lowered for its mesh's platform, zeros returned."""
        interceptor = self

        @functools.wraps(original)
        def run_state(f, *args, **kwargs):
            stateful = original(f, *args, **kwargs)
            if interceptor.inside:
                return stateful

            def call(init):
                jax = interceptor.jax
                interceptor._thread.core_maps = found = []
                try:
                    jax.make_jaxpr(stateful)(jax.tree_util.tree_map(lambda v: _abstract(jax, v) or v, init))
                except Exception:  # noqa: BLE001 - not traceable alone: it runs as the user's code does
                    found.clear()
                finally:
                    interceptor._thread.core_maps = None
                if not found:
                    return stateful(init)
                body, given = found[0]
                info = LaunchInfo("pl.core_map", (body,), given, interceptor.user_location(), interceptor.bare_platform)
                return interceptor.launch(Launch(interceptor, stateful, info), (init,), {})
            return call

        return run_state

    def user_location(self) -> dict | None:
        """The innermost frame of the user's code on the stack now."""
        frame = sys._getframe(1)
        while frame is not None:
            path = frame.f_code.co_filename
            if path in self.user:
                return {"path": os.path.realpath(path), "line": frame.f_lineno, "function": frame.f_code.co_name}
            frame = frame.f_back
        return None

    def launch(self, launch: Launch, args: tuple, kwargs: dict):
        jax = self.jax
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        dynamic = [i for i, leaf in enumerate(leaves) if _is_array(leaf)]
        abstract = [_abstract(jax, leaves[i]) for i in dynamic]
        site = self.user_location()
        platform, reason = launch._info.platform_now()
        if any(a is None for a in abstract):
            raise UntraceableLaunch(f"{launch._info.api} at {_where(site)} is given a ref, not an array: "
                                    "it cannot be traced on its own")
        static = tuple(repr(leaves[i])[:200] for i in range(len(leaves)) if i not in set(dynamic))
        batched = _batched(jax, [leaves[i] for i in dynamic])
        key = (id(launch), platform, tuple(f"{a}{getattr(a, '_memory_space', None)}" for a in abstract), static, str(tree),
               _where(site), str(batched))
        seen = self._seen.get(key)
        if seen is None:
            record, out_info, error = self._lower(launch, leaves, tree, dynamic, abstract, platform, reason, site,
                                                  batched)
            if record["verdict"] == "rejected" and _expected_by_the_caller(sys._getframe(1), self.user):
                record["expected"] = True  # a test of JAX's error (pytest.raises, assertRaises): it gets it
            self.records.append(record)
            self.emit(record)
            seen = self._seen[key] = (record, out_info, error)
        record, out_info, error = seen
        if record.get("expected"):
            raise error
        if record["verdict"] == "rejected":
            self.rejected = True
            raise LaunchRejected(record["error"]["message"])
        if out_info is None:
            raise UntraceableLaunch(f"{launch._info.api} at {_where(site)}: {record.get('unverified_because')}")
        return jax.tree_util.tree_map(lambda s: jax.numpy.zeros(s.shape, s.dtype), out_info)

    def _lower(self, launch: Launch, leaves, tree, dynamic, abstract, platform, reason, site, batched=None):
        """JAX's verdict on the launch; under `jax.vmap` (`batched`: each argument's batch axis, and the
        batched arguments), on the batched launch JAX builds there, as the user's code lowers it."""
        tracing, info = self.tracing, launch._info
        jax = self.jax

        def run(*values):
            full = list(leaves)
            for index, value in zip(dynamic, values):
                full[index] = value
            call_args, call_kwargs = tree.unflatten(full)
            return launch._fn(*call_args, **call_kwargs)

        stage = {"name": "trace"}
        lowered_fn, lowered_args = run, abstract
        if batched is not None:
            axes, full = batched
            lowered_fn, lowered_args = jax.vmap(run, in_axes=tuple(axes)), full
        lowering = tracing.Lowering(lowered_fn, lowered_args, platform, self.worker.gpu,
                                    lambda name: stage.__setitem__("name", name))
        record = {"api": info.api, "body": info.body, "built": info.built, "launch": site,
                  "platform": platform, "platform_reason": reason,
                  "args": [_short(a) for a in abstract], "verdict": "ok", "error": None}
        if batched is not None:
            record["vmapped"] = [_short(a) for a in lowered_args]
        out_info = failure = None
        with self._lowering:
            self.worker.capture.kernels = []
            started = time.perf_counter()
            self._thread.inside = True
            try:
                lowered = lowering.run()
                out_info = lowering.traced.out_info
                if self.worker.compiles(platform):
                    stage["name"] = "compile"
                    lowered.compile()
                    record["compiled"] = True
                if batched is not None:  # the zeros go back into the vmap: one example's
                    out_info = jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct(s.shape[1:], s.dtype), out_info)
            except Exception as exc:  # noqa: BLE001 - JAX's verdict; a timeout (BaseException) goes through
                failure = exc
                unverified = _environment_failure(exc, platform, self.worker.gpu)
                record["verdict"] = "unverified" if unverified else "rejected"
                if unverified:
                    record["unverified_because"] = unverified
                record["error"] = tracing.describe_error(exc, stage["name"], lowering.traced, self.user)
            finally:
                self._thread.inside = False
            record["kernels"] = list(self.worker.capture.kernels)
            if batched is not None and info.body:  # JAX names the batched kernel `batched_body`: it is this body
                function = info.body.get("function") or ""
                record["kernels"] = [dict(k, name=function.rpartition(".")[2] or k.get("name"),
                                          location=k.get("location") or dict(info.body)) for k in record["kernels"]]
        record["seconds"] = round(time.perf_counter() - started, 6)
        record["abstract_device"] = lowering.abstract_device
        try:
            record["kernel_refs"] = tracing._traced_ref_types(lowering.traced.jaxpr) if lowering.traced is not None else []
        except Exception:  # noqa: BLE001 - the verdict stands without them
            record["kernel_refs"] = []
        if record["verdict"] == "unverified" and out_info is None and lowering.traced is not None:
            out_info = lowering.traced.out_info  # it traced: the entry can go on
        return record, out_info, failure


RAISES = ("raises", "assertRaises", "assertRaisesRegex")


def _expected_by_the_caller(frame, user) -> bool:
    """Whether the launch runs inside a `with pytest.raises(...)` / `with self.assertRaises(...)` of the
    project's own code: a test that JAX's error is raised, which gets it and goes on."""
    while frame is not None:
        path = frame.f_code.co_filename
        if path in user and _in_raises_block(path, frame.f_lineno):
            return True
        frame = frame.f_back
    return False


_RAISES_BLOCKS: dict[str, list[tuple[int, int]]] = {}


def _in_raises_block(path: str, line: int) -> bool:
    if path not in _RAISES_BLOCKS:
        blocks = []
        try:
            if os.path.realpath(path) in _TEXTS:
                tree = ast.parse(_TEXTS[os.path.realpath(path)])
            else:
                with open(path, encoding="utf-8") as file:
                    tree = ast.parse(file.read())
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.With, ast.AsyncWith)) and node.body and any(
                    isinstance(item.context_expr, ast.Call) and _called_name(item.context_expr.func) in RAISES
                    for item in node.items):
                blocks.append((node.body[0].lineno, node.end_lineno or node.lineno))
        _RAISES_BLOCKS[path] = blocks
    return any(first <= line <= last for first, last in _RAISES_BLOCKS[path])


def _called_name(node) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _environment_failure(exc: BaseException, platform: str, gpu: bool) -> str | None:
    """Why a failure says nothing about the kernel (this machine cannot lower it), or None."""
    text = str(exc)
    if platform == "cuda" and not gpu and (text.startswith("No supported GPU devices found")
                                           or (isinstance(exc, AssertionError) and not text)):
        return "JAX cannot cross-lower this kernel for cuda without a GPU here"
    return None


def _is_array(value) -> bool:
    import jax
    import numpy

    return isinstance(value, (jax.Array, numpy.ndarray, numpy.generic, jax.ShapeDtypeStruct)) or \
        isinstance(value, jax.core.Tracer)


def _abstract(jax, value):
    if isinstance(value, jax.ShapeDtypeStruct):
        return value
    aval = jax.typeof(value) if hasattr(jax, "typeof") else jax.core.get_aval(value)
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None or type(aval).__name__ != "ShapedArray":
        return None
    space = getattr(aval, "memory_space", None)
    if space is not None and getattr(space, "name", "Device") != "Device":
        try:  # `pltpu.with_memory_space_constraint(x, memory_space=pltpu.HBM)` under jit: the kernel's ref is hbm
            return jax.ShapeDtypeStruct(shape, dtype, _memory_space=space)
        except TypeError:  # a jax whose ShapeDtypeStruct takes none: the default space
            pass
    return jax.ShapeDtypeStruct(shape, dtype)


def _batched(jax, values: list):
    """Under one `jax.vmap`: each argument's batch axis (None where it is not batched) and its batched
    abstract value; None when no argument is a batch tracer, or when they are of nested vmaps (then one
    example is lowered, as without a vmap)."""
    try:
        from jax._src.interpreters.batching import BatchTracer
    except Exception:  # noqa: BLE001 - another jax's layout: one example is lowered
        return None
    tracers = [v for v in values if isinstance(v, BatchTracer)]
    if not tracers or len({id(t._trace) for t in tracers}) != 1 or any(
            isinstance(t.val, BatchTracer) for t in tracers):
        return None
    axes, full = [], []
    for value in values:
        if isinstance(value, BatchTracer) and isinstance(value.batch_dim, int):  # else not mapped
            axes.append(value.batch_dim)
            full.append(_abstract(jax, value.val))
        else:
            axes.append(None)
            full.append(_abstract(jax, value))
    if any(a is None for a in full) or all(a is None for a in axes):
        return None
    return axes, full


def _short(spec) -> str:
    return f"{spec.dtype}{list(spec.shape)}".replace(" ", "")


def _where(location: dict | None) -> str:
    return "an unknown line" if location is None else f"{os.path.basename(location['path'])}:{location['line']}"


# ---- one entry point ---------------------------------------------------------------------------------

def run_entry(tracing, containment, worker, request: dict, entry: dict, limit_memory=lambda: None) -> dict:
    """Run one entry point in the contained process made for it: the launch APIs replaced before its
    code is imported, a soft time limit (the worker's hard one follows), no fork."""
    import jax

    started = time.perf_counter()
    try:
        jax.devices()
    except Exception:  # noqa: BLE001 - launches are lowered without devices
        pass
    limit_memory()
    _exclude_own_frames()
    path = os.path.realpath(entry["path"])
    roots = [r for r in request.get("roots") or [] if r] or [os.path.dirname(path)]
    user = tracing.UserFiles([*roots, os.path.dirname(path)])
    interceptor = Interceptor(tracing, worker, user, request.get("bare_platform") or "cuda", containment.emit)
    interceptor.install()
    tracing.AbstractChip().install()  # no TPU here: the entry's own code asking which TPU gets the abstract one
    use_texts(request.get("texts") or {})
    _forbid_fork()
    seconds = float(request.get("entry_timeout") or 60)
    _alarm(seconds)
    result = {"outcome": "ok", "type": None, "message": None, "location": None}
    try:
        _run(tracing, entry, path, roots)
    except LaunchRejected:
        result["outcome"] = "rejected"
    except EntryTimeout:
        result.update(outcome="timeout", message=f"did not finish within {seconds:g} s: ended")
    except EntryForked as exc:
        result.update(outcome="forked", message=str(exc))
    except UntraceableLaunch as exc:
        result.update(outcome="untraceable", message=str(exc))
    except SystemExit as exc:
        result.update(outcome="exit", message=f"called sys.exit({exc.code!r}): ended")
    except BaseException as exc:  # noqa: BLE001 - the user's exception, whatever it is
        result.update(_classified(tracing, exc, user, bool(interceptor.records)))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if interceptor.rejected:
        result["outcome"] = "rejected"
    result["launches"] = len(interceptor.records)
    result["seconds"] = round(time.perf_counter() - started, 6)
    return result


def _classified(tracing, exc: BaseException, user, launched: bool) -> dict:
    """An exception of the entry's own: after its launches (an assert on the zeros), a skip (what it
    needs is not here), or an error before any launch."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = tracing._first_line(exc)[:tracing.MAX_MESSAGE]
    locations = tracing._traceback_locations(exc, user)
    found = {"type": type(exc).__name__, "message": message, "location": locations[0] if locations else None}
    if names & set(SKIP_EXCEPTIONS) or isinstance(exc, MarkedSkip):
        return {**found, "outcome": "skipped", "message": f"skipped: {message}" if message else "skipped"}
    if launched:
        return {**found, "outcome": "after_launches"}
    if isinstance(exc, ImportError):
        return {**found, "outcome": "skipped", "message": f"needs {exc.name or message}"}
    if isinstance(exc, FileNotFoundError) or (isinstance(exc, RuntimeError) and any(m in message for m in NEEDS_DEVICE)):
        return {**found, "outcome": "skipped", "message": f"needs what is not here: {message}"}
    if _raised_by_jax(exc) and found["location"] is not None and not any(m in message for m in NEEDS_DEVICE):
        return {**found, "outcome": "jax_error"}  # JAX rejected the user's own code around the kernels
    return {**found, "outcome": "error"}


def _raised_by_jax(exc: BaseException) -> bool:
    """The exception came from inside jax (its innermost frame is jax's or jaxlib's): JAX's verdict on
    the code that ran, as running it by hand would show it."""
    seen, chain, e = set(), [], exc
    while e is not None and id(e) not in seen:  # jax filters its frames out; the cause keeps them
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        if type(e).__module__.split(".")[0] in ("jax", "jaxlib") or type(e).__name__ == "UnfilteredStackTrace":
            return True
        if any("JAX has removed its internal frames" in str(note) for note in getattr(e, "__notes__", None) or ()):
            return True  # jax's own traceback filter took them out: it was raised inside jax
        tb, last = e.__traceback__, None
        while tb is not None:
            last, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
        parts = os.path.normpath(last or "").split(os.sep)
        if "jax" in parts[:-1] or "jaxlib" in parts[:-1]:
            return True
    return False


def _run(tracing, entry: dict, path: str, roots: list[str]) -> None:
    kind = entry["kind"]
    if kind == "main":
        import runpy

        sys.argv = [path]
        sys.path.insert(0, os.path.dirname(path))
        if path in _TEXTS:
            _run_text_as_main(path, _TEXTS[path])
        else:
            runpy.run_path(path, run_name="__main__")
        return
    module = tracing._import_user_module(path, roots)
    kwargs = {name: ast.literal_eval(text) for name, text in (entry.get("kwargs") or {}).items()}
    if kind == "annotated":
        import jax.numpy as jnp

        arrays = [jnp.zeros(tuple(a["shape"]), jnp.dtype(a["dtype"])) for a in entry.get("args") or []]
        tracing._resolve(module, entry["function"])(*arrays)
        return
    owner, _, name = entry["function"].rpartition(".")
    if not owner:
        function = tracing._resolve(module, name)
        _skip_marked(function, module)
        function(**kwargs)
        return
    cls = tracing._resolve(module, owner)
    _skip_marked(getattr(cls, name, None), module, cls)
    if entry.get("unittest"):
        _run_unittest(cls, name, kwargs)
    else:
        instance = cls()
        method = getattr(instance, name)
        for hook in ("setup_method",):
            if hasattr(instance, hook):
                getattr(instance, hook)(method)
        try:
            method(**kwargs)
        finally:
            if hasattr(instance, "teardown_method"):
                instance.teardown_method(method)


_TEXTS: dict[str, str] = {}  # real path -> the text that stands in for the file (use_texts)


def use_texts(texts: dict[str, str]) -> None:
    """Code judged before it is written (a fix, applied in memory): these files' texts stand in for what
    is on disk wherever Python reads their source: imports (no cached bytecode of the file on disk is
    used, none is written), tracebacks' lines, and a `__main__` block, which runs its text."""
    if not texts:
        return
    import linecache
    from importlib import machinery

    _TEXTS.update({os.path.realpath(path): text for path, text in texts.items()})
    loader = machinery.SourceFileLoader
    get_data, path_stats = loader.get_data, loader.path_stats

    def data(self, path):
        text = _TEXTS.get(os.path.realpath(path))
        return get_data(self, path) if text is None else text.encode("utf-8")

    def stats(self, path):
        if os.path.realpath(path) in _TEXTS:
            raise OSError("judged from its text in memory: no bytecode cache")
        return path_stats(self, path)

    loader.get_data, loader.path_stats = data, stats
    for path, text in _TEXTS.items():
        lines = text.splitlines(keepends=True)
        linecache.cache[path] = (len(text), None, lines, path)  # mtime None: never checked against the disk


def _run_text_as_main(path: str, text: str) -> None:
    """`runpy.run_path(path, run_name="__main__")` on a text in memory."""
    import types

    module = types.ModuleType("__main__")
    module.__file__ = path
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(compile(text, path, "exec"), module.__dict__)  # noqa: S102 - the user's code, with consent
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _run_unittest(cls, name: str, kwargs: dict) -> None:
    import unittest

    if getattr(cls, "__unittest_skip__", False) or getattr(getattr(cls, name, None), "__unittest_skip__", False):
        raise unittest.SkipTest(getattr(cls, "__unittest_skip_why__", "") or "marked to skip")
    cls.setUpClass()
    try:
        case = cls(name)
        case.setUp()
        try:
            getattr(case, name)(**kwargs)
        finally:
            case.tearDown()
            case.doCleanups()
    finally:
        cls.tearDownClass()


def _skip_marked(function, module, cls=None) -> None:
    """pytest's skip marks (`skip`, `skipif` with a true condition, `usefixtures`), read at run time."""
    marks = []
    for owner in (module, cls, function):
        found = getattr(owner, "pytestmark", ()) if owner is not None else ()
        marks.extend(found if isinstance(found, (list, tuple)) else [found])
    for mark in marks:
        name, args = getattr(mark, "name", None), getattr(mark, "args", ())
        reason = (getattr(mark, "kwargs", None) or {}).get("reason", "")
        if name == "skip" or (name == "skipif" and args and all(isinstance(a, bool) and a for a in args)):
            raise MarkedSkip(f"marked {name}" + (f": {reason}" if reason else ""))
        if name == "usefixtures":
            raise MarkedSkip(f"needs the fixtures {', '.join(map(str, args))}")


class MarkedSkip(Exception):
    """A pytest mark says this test does not run here."""


def _exclude_own_frames() -> None:
    """JAX names an equation by its innermost frame outside jax: never these files."""
    try:
        from jax._src import source_info_util
    except Exception:  # noqa: BLE001
        return
    here = os.path.dirname(os.path.realpath(__file__))
    for name in ("launches.py", "tracing.py", "runner.py", "containment.py"):
        source_info_util.register_exclusion(os.path.join(here, name))


def _forbid_fork() -> None:
    """An entry runs in one process: a fork (os.fork, multiprocessing's default) ends it."""
    def refuse(*args, **kwargs):
        raise EntryForked("forked a process (os.fork): an entry point runs in one process; ended")

    for name in ("fork", "forkpty"):
        if hasattr(os, name):
            setattr(os, name, refuse)


def _alarm(seconds: float) -> None:
    def ring(signum, frame):
        raise EntryTimeout()

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def entry_result(entry: dict, outcome: dict, seconds: float, output_limit: int) -> dict:
    """What the worker answers for one entry: its outcome, the launches it reached, its output."""
    result = dict(outcome.get("result") or {})
    if outcome.get("timed_out"):
        result.update(outcome="timeout", message=f"did not finish within {seconds:g} s: ended", type=None)
    elif outcome.get("output_exceeded"):
        result.update(outcome="output", type=None,
                      message=f"printed more than {output_limit:,} bytes: ended")
    elif "result" not in outcome:
        code = outcome.get("crashed")
        words = ("stopped answering" if code is None else
                 f"crashed (signal {-code})" if code < 0 else f"ended the Python interpreter (exit status {code})")
        result.update(outcome="crashed", type=None, message=words)
    result["id"] = entry.get("id")
    result["launch_records"] = outcome.get("emitted") or []
    result["launches"] = len(result["launch_records"])
    result["output"] = outcome.get("output", "")
    result["output_bytes"] = outcome.get("output_bytes", 0)
    result["killed_leftover_processes"] = outcome.get("killed", 0)
    return result
