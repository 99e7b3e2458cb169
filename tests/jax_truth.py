"""Ask JAX itself what happens to each agreement fixture.

Usage:
    .venvs/jax/bin/python tests/jax_truth.py FIXTURE.py [FIXTURE.py ...] [--pretty] [--relative] [--resources] [--lines]

Imports only the standard library and jax. Prints ONE JSON object on stdout mapping
each path (exactly as given) to

    {"ok": bool, "exc_type": str|null, "message": str|null, "mode": str|null,
     "locations": [{"path": "<abs path>", "line": N}, ...]}

and with `--resources`, where Mosaic GPU lowered a kernel, "resources": {"smem_bytes": N, "tmem_cols": N}:
the shared memory `_launch` checked against `max_smem_bytes` and the TMEM columns the estimator asked for.

(`--relative`: location paths relative to the current folder, as examples/README.md shows them.
`--lines`: instead of JSON, one line per fixture to read, `PATH: ok (MODE)` or, per location JAX
blames, `PATH:LINE: EXC_TYPE: first line of the message (MODE)`, a set of classes in it as `{...}`.)

Fixture convention (see tests/fixtures/agreement/NOTES.md):

    def target():
        return fn, args, mode

* ``fn``   -- a callable (typically the result of ``plgpu.kernel(...)``/``pl.kernel``/
              ``pl.pallas_call`` or a small wrapper around one).
* ``args`` -- a tuple of positional arguments for ``fn``.
* ``mode`` -- ``"cuda"``: ``jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))``
              (args are ``jax.ShapeDtypeStruct``s; runs the real Mosaic GPU resource
              estimator and lowering on a machine without a GPU), or
              ``"triton"``: the same under an abstract NVIDIA H200 mesh (what a GPU
              ``pl.pallas_call`` lowers through: Triton), or
              ``"tpu"`` / ``"sparsecore"``: ``lowering_platforms=("tpu",)`` under an abstract
              TPU v5 lite / TPU7x mesh, or
              ``"interpret"``: ``jax.block_until_ready(jax.jit(fn)(*args))`` on the CPU
              backend (args are concrete arrays).
  A fixture whose kernel must be *built* under the abstract mesh (SparseCore meshes ask for
  the device) sets a module constant ``MODE = "sparsecore"``: target() is then called inside it.

On a machine with a GPU, ``JAX_TRUTH_COMPILE=1`` also compiles the "cuda" and "triton" kernels
(``.lower(...).compile()``; "triton" then lowers for the real GPU, not under the abstract mesh).

Optionally a fixture defines ``def cleanup():`` which is called (in a ``finally``)
after the fixture was run, e.g. to undo ``plgpu.set_gpu_interpret_mode(...)``.
As a safety net this script also resets the global Pallas interpret-mode config
after every fixture.

``locations`` are the user source lines JAX blames:
* trace-time errors: the deepest traceback frame in a file under the fixture's folder;
* ``get_global only supports semaphores``: the user frame of every ``get_global``
  equation (found by walking the jaxpr recursively) whose ``what`` is not a GMEM
  semaphore;
* interpret-mode failures (``No ir_type_handler for aval type``, the
  ``get_global discharge`` message): the user frame of every ``get_global`` equation left after
  ``pallas_call`` removed dead code;
* Triton's ``Unimplemented primitive ...: get_global`` (which names no equation): the user frame of
  every ``get_global`` equation in a kernel's body (one in host code is not lowered by Triton);
* the TPU interpreter's `Semaphore N occurs as both fixed-id and internal.` (raised in a host
  callback, reported as a `JaxRuntimeError` whose last line it is; that line is the `message`):
  the user frame of every `get_barrier_semaphore` equation, which makes the fixed-id semaphore;
* a kernel asking for its barrier semaphore with no `collective_id` (compiled for a TPU, `collective_id has to
  be specified when using a custom barrier`; under the TPU interpreter `int() argument must be ... not 'NoneType'`
  in its host callback, the last line being the `message`): the user frame of every `get_barrier_semaphore`;
* Mosaic GPU's `Unsupported memory space: gmem` (a BARRIER semaphore from `pl.run_scoped`; JAX names no line): the
  user frame of that run_scoped equation;
* the GPU interpreter's `nan + semaphore` (or `nan + barrier_semaphore`, or with zero-filled memory `type object
  'AbstractSemaphoreTyRules' has no attribute 'full'`: it allocates no semaphore; JAX names no line): the user
  frame of the first `run_scoped` equation that allocates a GMEM semaphore, or of the launch around it (a
  `plgpu.kernel`'s scratch is a run_scoped of its own, with no user frame);
* `Mosaic GPU kernel exceeds available shared memory` and TMEM's `After rounding up, got N columns,
  exceeding the limit of 512` (a kernel refused as a whole; JAX names no line): the user frame of the
  equation that launches the kernel (`kernel(x)` in the fixture's own function), or of the one around it
  where it names none (a launch inside a `jax.jit` that a launcher wraps around the kernel);
* the TPU interpreter's `KeyError: <MemorySpace.GMEM: 'gmem'>` (a Mosaic GPU kernel given `pltpu.InterpretParams`;
  JAX names no line): the user frame of the kernel's launch, as for the shared memory;
* any other error: the deepest traceback frame under the fixture's folder, following the
  exception's causes (a lowering error's ``JaxStackTraceBeforeTransformation`` cause holds the
  user frame of the equation that failed), if any.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import sys
import traceback
import types


def _abs(p: str) -> str:
  return os.path.realpath(os.path.abspath(p))


def _first_line(exc: BaseException) -> str:
  s = str(exc)
  return s.splitlines()[0] if s else ""


def _load_module(path: str) -> types.ModuleType:
  folder = os.path.dirname(_abs(path))
  if folder not in sys.path:
    sys.path.insert(0, folder)
  stem = os.path.splitext(os.path.basename(path))[0]
  name = f"_jax_truth_fixture_{stem}"
  spec = importlib.util.spec_from_file_location(name, path)
  if spec is None or spec.loader is None:
    raise ImportError(f"cannot import {path}")
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


def _walk_eqns(jaxpr):
  from jax._src import core as jax_core
  for eqn in jaxpr.eqns:
    yield eqn
    for sub in jax_core.jaxprs_in_params(eqn.params):
      yield from _walk_eqns(sub)


def _is_gmem_semaphore(what) -> bool:
  import jax.numpy as jnp
  from jax._src.pallas import core as pallas_core
  from jax._src.pallas.mosaic_gpu import core as gpu_core
  try:
    return what.memory_space == gpu_core.GMEM and jnp.issubdtype(
        what.dtype, pallas_core.semaphore)
  except Exception:  # noqa: BLE001 - exotic avals are simply "not a semaphore"
    return False


def _get_global_locations(fn, args, only_non_semaphores: bool):
  import jax
  from jax._src import source_info_util
  jaxpr = jax.jit(fn).trace(*args).jaxpr
  jaxpr = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr on older releases
  out = []
  for eqn in _walk_eqns(jaxpr):
    if eqn.primitive.name != "get_global":
      continue
    if only_non_semaphores and _is_gmem_semaphore(eqn.params.get("what")):
      continue
    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is not None:
      out.append((_abs(frame.file_name), frame.start_line))
  return out


def _eqn_locations(fn, args, wanted, enclosing=False):
  """User frames of the equations `wanted(eqn, inside_kernel)` picks, walking the jaxpr recursively; with
  `enclosing`, an equation without one has that of the equation around it (a launch traced inside a `jax.jit`
  that a test case's launcher wraps around the kernel, whose equations name only JAX's frames)."""
  import jax
  from jax._src import core as jax_core
  from jax._src import source_info_util
  jaxpr = jax.jit(fn).trace(*args).jaxpr
  jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
  out = []

  def walk(jp, inside, around):
    for eqn in jp.eqns:
      frame = source_info_util.user_frame(eqn.source_info.traceback)
      if frame is None and enclosing:
        frame = around
      if wanted(eqn, inside) and frame is not None:
        out.append((_abs(frame.file_name), frame.start_line))
      kernel = inside or eqn.primitive.name in ("pallas_call", "mpmd_map", "core_map")
      for sub in jax_core.jaxprs_in_params(eqn.params):
        walk(sub, kernel, frame)

  walk(jaxpr, False, None)
  return out


def _barrier_semaphore_run_scoped(eqn, inside):
  """A run_scoped that asked for a Mosaic GPU BARRIER semaphore (GMEM, not a `semaphore` subtype): the estimator
  refuses its memory space."""
  if eqn.primitive.name != "run_scoped":
    return False
  import jax.numpy as jnp
  from jax._src.pallas import core as pallas_core
  jaxpr = eqn.params.get("jaxpr")
  avals = [v.aval for v in getattr(jaxpr, "invars", ())]
  return any(str(getattr(a, "memory_space", "")).lower() in ("gmem", "memoryspace.gmem")
             and jnp.issubdtype(getattr(a, "dtype", None) or jnp.float32, pallas_core.barrier_semaphore)
             for a in avals)


def _collective_run_scoped(eqn, inside):
  """A run_scoped asked for a collective allocation (over more than the thread axis), or for a semaphore
  with no collective axes at all (refused in a kernel with warpgroups: it must name the thread axis)."""
  if eqn.primitive.name != "run_scoped":
    return False
  if eqn.params.get("collective_axes"):
    return True
  import jax.numpy as jnp
  from jax._src.pallas import core as pallas_core
  jaxpr = eqn.params.get("jaxpr")
  avals = [v.aval for v in getattr(jaxpr, "invars", ())]
  return any(str(getattr(a, "memory_space", "")).lower() in ("gmem", "memoryspace.gmem")
             and jnp.issubdtype(getattr(a, "dtype", None) or jnp.float32, pallas_core.semaphore) for a in avals)


def _first_semaphore_allocation():
  """A picker of the first run_scoped (in the order the GPU interpreter meets them) allocating a GMEM semaphore:
  it stops there."""
  found = []

  def wanted(eqn, inside):
    if found or eqn.primitive.name != "run_scoped":
      return False
    import jax.numpy as jnp
    from jax._src.pallas import core as pallas_core
    avals = [v.aval for v in getattr(eqn.params.get("jaxpr"), "invars", ())]
    if any(str(getattr(a, "memory_space", "")).lower() in ("gmem", "memoryspace.gmem")
           and jnp.issubdtype(getattr(a, "dtype", None) or jnp.float32, pallas_core.semaphore_dtype) for a in avals):
      found.append(eqn)
      return True
    return False

  return wanted


# The TPU interpreter given a Mosaic GPU kernel: it knows no GMEM operand (JAX names no line).
_TPU_INTERPRETER_GMEM = "<MemorySpace.GMEM: 'gmem'>"
_GPU_INTERPRETER_SEMAPHORE = ("nan + semaphore", "nan + barrier_semaphore",
                              "type object 'AbstractSemaphoreTyRules' has no attribute 'full'")


def _non_semaphore_get_global(eqn, inside):
  """A get_global of something that is no semaphore at all (an array, an SMEM barrier): any semaphore type
  (REGULAR, BARRIER, a TPU DMA one; GPU or TPU kind alike) is one, as PAL003 counts them."""
  import jax.numpy as jnp
  from jax._src.pallas import core as pallas_core
  if eqn.primitive.name != "get_global":
    return False
  try:
    return not jnp.issubdtype(eqn.params["what"].dtype, pallas_core.semaphore_dtype)
  except Exception:  # noqa: BLE001 - exotic dtypes are no semaphore
    return True


def _get_global_inside_kernel(eqn, inside):
  return eqn.primitive.name == "get_global" and inside


def _get_global_outside_kernel(eqn, inside):
  return eqn.primitive.name == "get_global" and not inside


def _barrier_semaphore(eqn, inside):
  return eqn.primitive.name == "get_barrier_semaphore"


def _callback_error(exc: BaseException) -> str | None:
  """The TPU interpreter's semaphore-id clash, raised in a host callback: the last line of the traceback
  JAX's `INTERNAL: CpuCallback error` carries (`ValueError: Semaphore 2000 occurs ...`). Other callback
  errors keep their first line, as recorded before."""
  lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
  last = lines[-1] if len(lines) > 1 else ""
  return last if any(words in last for words in _CALLBACK_LAST_LINES) else None


# Host-callback errors recorded by their last line: the TPU interpreter's semaphore-id clash, and its
# `int(collective_id)` of a kernel that asks for its barrier semaphore with no collective_id.
_CALLBACK_LAST_LINES = ("occurs as both fixed-id and internal", "int() argument must be a string, a bytes-like object "
                        "or a real number, not 'NoneType'")
# Errors about the kernel's barrier semaphore, which name no line: the user frame of its get_barrier_semaphore.
_BARRIER_SEMAPHORE_ERRORS = (*_CALLBACK_LAST_LINES, "collective_id has to be specified when using a custom barrier")


def _traceback_locations(exc: BaseException, root: str):
  """Deepest frame under `root`, following __cause__/__context__ chains."""
  best = None
  seen = set()
  e = exc
  while e is not None and id(e) not in seen:
    seen.add(id(e))
    for fs in traceback.extract_tb(e.__traceback__):
      fname = _abs(fs.filename)
      if fname.startswith(root + os.sep):
        best = (fname, fs.lineno)
    if best is not None:
      break
    e = e.__cause__ or e.__context__
  return [best] if best else []


def _kernel_launch(eqn, inside):
  """The equation that runs a kernel, outside any kernel: where a kernel JAX refuses as a whole is launched."""
  return not inside and eqn.primitive.name in ("custom_vmap_call", "pallas_call", "mpmd_map", "core_map")


@contextlib.contextmanager
def _resource_capture(record: dict):
  """Keeps what Mosaic GPU computed for the kernel it lowered: the estimator's outermost `Resources`
  (TMEM columns) and the shared-memory bytes `_launch` compares with `max_smem_bytes`."""
  try:
    from jax._src.pallas.mosaic_gpu import lowering
    from jax.experimental.mosaic.gpu import core as mgpu_core
  except ImportError:
    yield
    return
  estimate, tree_size = lowering._estimate_resources, mgpu_core._smem_tree_size
  depth = [0]

  def estimate_resources(ctx, jaxpr, *args, **kwargs):
    depth[0] += 1
    try:
      resources = estimate(ctx, jaxpr, *args, **kwargs)
    finally:
      depth[0] -= 1
    if depth[0] == 0:
      record["tmem_cols"] = resources.tmem_scratch_cols + resources.tmem_collective_scratch_cols
    return resources

  def smem_tree_size(buffers):
    size = tree_size(buffers)
    if sys._getframe(1).f_code.co_name == "_launch":
      record["smem_bytes"] = size
    return size

  lowering._estimate_resources, mgpu_core._smem_tree_size = estimate_resources, smem_tree_size
  try:
    yield
  finally:
    lowering._estimate_resources, mgpu_core._smem_tree_size = estimate, tree_size


def _reset_interpret_mode():
  try:
    from jax._src import config
    config.pallas_tpu_interpret_mode_context_manager.set_global(None)
  except Exception:  # noqa: BLE001
    pass


# Abstract devices to cross-lower for: (device kind, cores, platform).
_ABSTRACT = {
    "triton": ("NVIDIA H200", 132, "gpu"),
    "tpu": ("TPU v5 lite", 1, "tpu"),
    "sparsecore": ("TPU7x", 1, "tpu"),
}
_PLATFORM = {"cuda": "cuda", "triton": "cuda", "tpu": "tpu", "sparsecore": "tpu"}


def _compiling() -> bool:
  return os.environ.get("JAX_TRUTH_COMPILE") == "1"


def _device_context(mode):
  import jax
  if mode not in _ABSTRACT or (mode == "triton" and _compiling()):
    return contextlib.nullcontext()
  from jax.sharding import AbstractDevice, AbstractMesh
  kind, cores, platform = _ABSTRACT[mode]
  mesh = AbstractMesh((1,), ("_d",), abstract_device=AbstractDevice(
      device_kind=kind, num_cores=cores, platform=platform))
  return jax.sharding.use_abstract_mesh(mesh)


def run_fixture(path: str, with_resources: bool = False, compiled: bool = False) -> dict:
  """With `compiled`, a fixture whose target() says "interpret" is judged as "cuda" (Mosaic GPU
  cross-lowering of the same function and arguments): for a kernel a fix made compiled (issue 20's
  "Run the kernel compiled"), while its target() still says how the original ran."""
  import jax
  root = os.path.dirname(_abs(path))
  result = {"ok": True, "exc_type": None, "message": None, "mode": None, "locations": []}
  module = None
  fn = args = None
  stage = "import"
  mode = None
  try:
    module = _load_module(path)
    if not hasattr(module, "target"):
      raise LookupError(f"{path}: fixture defines no target()")
    with _device_context(getattr(module, "MODE", None)):
      fn, args, mode = module.target()
    if compiled and mode == "interpret":
      mode = "cuda"
    result["mode"] = mode
    args = tuple(args)
    if mode not in _PLATFORM and mode != "interpret":
      raise ValueError(f"{path}: unknown mode {mode!r}")
    with _device_context(mode):
      stage = "trace"
      traced = jax.jit(fn).trace(*args)
      stage = "run"
      if mode == "interpret":
        jax.block_until_ready(jax.jit(fn)(*args))
      else:
        resources: dict = {}
        try:
          with _resource_capture(resources):
            lowered = traced.lower(lowering_platforms=(_PLATFORM[mode],))
            if _compiling() and mode in ("cuda", "triton"):
              lowered.compile()
        finally:
          if "smem_bytes" in resources and with_resources:
            result["resources"] = resources
  except Exception as exc:  # noqa: BLE001
    msg = _first_line(exc)
    if type(exc).__name__ == "JaxRuntimeError" and "CpuCallback error" in msg:
      msg = _callback_error(exc) or msg
    result.update(ok=False, exc_type=type(exc).__name__, message=msg)
    locs = []
    try:
      with _device_context(mode):
        if stage == "run" and msg.startswith("get_global only supports semaphores"):
          locs = _get_global_locations(fn, args, only_non_semaphores=True)
        elif stage == "run" and (
            "No ir_type_handler for aval type" in msg
            or "get_global discharge is not supported" in msg):
          locs = _get_global_locations(fn, args, only_non_semaphores=False)
        elif stage == "run" and msg.startswith("Unimplemented primitive in Pallas Triton lowering: get_global"):
          locs = _eqn_locations(fn, args, _get_global_inside_kernel)  # Triton lowers only the kernel's body
        if stage == "run" and msg.startswith("Unimplemented primitive in Pallas") and "get_global" in msg:
          # Only a get_global in a kernel's body reaches the backend's lowering; one outside any kernel
          # (host code that jit drops as dead) is not what failed.
          result["non_semaphore"] = bool(_eqn_locations(
              fn, args, lambda eqn, inside: inside and _non_semaphore_get_global(eqn, inside)))
        elif stage == "run" and msg.startswith("Only thread-collective allocations"):
          locs = _eqn_locations(fn, args, _collective_run_scoped)
        elif stage == "run" and msg.startswith("Unsupported memory space: gmem"):
          locs = _eqn_locations(fn, args, _barrier_semaphore_run_scoped)
        if not locs and stage == "run" and msg.startswith(("Unsupported memory space: ", "Invalid memory space: ")):
          locs = _eqn_locations(fn, args, _kernel_launch, enclosing=True)  # a buffer's type: JAX names no line
        elif stage == "run" and msg.startswith("Cannot lower jaxpr with effects"):
          locs = _eqn_locations(fn, args, _get_global_outside_kernel)
        elif stage == "run" and any(words in msg for words in _BARRIER_SEMAPHORE_ERRORS):
          locs = _eqn_locations(fn, args, _barrier_semaphore)
        elif stage == "run" and msg in _GPU_INTERPRETER_SEMAPHORE:
          locs = _eqn_locations(fn, args, _first_semaphore_allocation(), enclosing=True)
        elif stage == "run" and (msg.startswith("Mosaic GPU kernel exceeds available shared memory")
                                 or msg.startswith("After rounding up, got")
                                 or msg == _TPU_INTERPRETER_GMEM and isinstance(exc, KeyError)):
          locs = _eqn_locations(fn, args, _kernel_launch, enclosing=True)  # JAX names no line: the kernel's launch
    except Exception as exc2:  # noqa: BLE001
      print(f"jax_truth: locating failed for {path}: {exc2!r}", file=sys.stderr)
    if not locs:
      locs = _traceback_locations(exc, root)
    seen = set()
    for p, line in locs:
      if (p, line) not in seen:
        seen.add((p, line))
        result["locations"].append({"path": p, "line": line})
    print(f"jax_truth: {path}: {type(exc).__name__}: {msg}", file=sys.stderr)
  finally:
    if module is not None and callable(getattr(module, "cleanup", None)):
      try:
        module.cleanup()
      except Exception as exc:  # noqa: BLE001
        print(f"jax_truth: cleanup failed for {path}: {exc!r}", file=sys.stderr)
    _reset_interpret_mode()
  return result


@contextlib.contextmanager
def _stdout_to_stderr():
  """Send everything written to fd 1 (Python or C level) to stderr; yield the real stdout."""
  sys.stdout.flush()
  saved = os.dup(1)
  os.dup2(2, 1)
  real = os.fdopen(saved, "w")
  old_sys_stdout = sys.stdout
  sys.stdout = sys.stderr
  try:
    yield real
  finally:
    sys.stdout.flush()
    sys.stdout = old_sys_stdout
    os.dup2(saved, 1)


def _lines(path: str, result: dict) -> str:
  """`--lines`: what JAX says of one fixture, a line per place it blames (or `ok`)."""
  mode = f" ({result['mode']})" if result.get("mode") else ""
  if result["ok"]:
    return f"{path}: ok{mode}\n"
  message = (result.get("message") or "").splitlines()[0] if result.get("message") else ""
  message = re.sub(r"\{<class [^{}]*\}", "{...}", message)  # a set of types: its order changes run to run
  said = f"{result['exc_type']}: {message}{mode}"
  places = [f"{loc['path']}:{loc['line']}" for loc in result["locations"]] or [path]
  return "".join(f"{place}: {said}\n" for place in places)


def main(argv: list[str]) -> int:
  pretty = "--pretty" in argv
  relative = "--relative" in argv
  paths = [a for a in argv if a not in ("--pretty", "--relative", "--resources", "--lines")]
  if not paths:
    print(__doc__, file=sys.stderr)
    return 2
  with _stdout_to_stderr() as real_stdout:
    results = {p: run_fixture(p, "--resources" in argv) for p in paths}
    if relative:
      for result in results.values():
        for location in result["locations"]:
          location["path"] = os.path.relpath(location["path"])
    if "--lines" in argv:
      real_stdout.write("".join(_lines(path, result) for path, result in results.items()))
    else:
      json.dump(results, real_stdout, indent=2 if pretty else None)
      real_stdout.write("\n")
    real_stdout.flush()
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
