"""Run fixed kernels through real JAX: lower them for CUDA, or run them interpreted on the CPU.

Usage: .venvs/jax/bin/python tests/fixes/jax_lower.py [--compiled] FILE.py [FILE.py ...]

With `--compiled`, a target() that says "interpret" is judged as "cuda": for a kernel a fix made
compiled ("Run the kernel compiled"), whose target() still says how the original ran.

With `--execute` (on a machine with a GPU), "cuda" and "triton" kernels are also compiled and run on
the GPU with arguments of ones, and "interpret" ones run as usual. Imports only the standard library and jax. Prints one JSON object mapping each path to
{"ok": bool, "error": str|null}. Each file defines `target()` returning `(fn, args, mode)`:

* "cuda": `jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))`, the real Mosaic GPU
  lowering for `plgpu.kernel` / `pl.kernel` (no GPU needed);
* "triton": the same for `pl.pallas_call`, whose CUDA path in jax 0.12 is Triton: lowered against an
  abstract H100 (`jax.sharding.AbstractDevice`) so the real Triton lowering runs without a GPU;
* "tpu": the real Mosaic TPU lowering (`lowering_platforms=("tpu",)`, no TPU needed);
* "interpret": `jax.jit(fn)(*args)` on the CPU; the file's `expected()` gives the values the intended
  program computes, and the result must equal them. With `--unchecked`, a file without `expected()`
  passes when it runs (reported as `"values": "unchecked"`; the agreement fixtures have none).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys


sys.dont_write_bytecode = True  # leave no __pycache__ in the golden folders


def _load(path: str):
  folder = os.path.dirname(os.path.abspath(path))
  if folder not in sys.path:
    sys.path.insert(0, folder)
  name = "_fixed_" + os.path.splitext(os.path.basename(path))[0] + str(abs(hash(path)))
  spec = importlib.util.spec_from_file_location(name, path)
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


def run(path: str, execute: bool = False, unchecked: bool = False, compiled: bool = False) -> dict:
  import jax
  import numpy as np

  try:
    module = _load(path)
    fn, args, mode = module.target()
    if compiled and mode == "interpret":
      mode = "cuda"
    if execute and mode in ("cuda", "triton"):
      ones = [jax.numpy.ones(a.shape, a.dtype) for a in args]
      jax.block_until_ready(jax.jit(fn)(*ones))
    elif mode == "cuda":
      jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
    elif mode == "triton":
      device = jax.sharding.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=None, platform="cuda")
      mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=device)
      with jax.sharding.use_abstract_mesh(mesh):
        jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
    elif mode == "tpu":
      jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))
    elif mode == "interpret":
      got = jax.block_until_ready(jax.jit(fn)(*args))
      if unchecked and not hasattr(module, "expected"):
        return {"ok": True, "error": None, "values": "unchecked"}
      want = module.expected()
      if not np.array_equal(np.asarray(got), np.asarray(want)):
        return {"ok": False, "error": f"values differ: got {np.asarray(got)!r}, want {np.asarray(want)!r}"}
    else:
      raise ValueError(f"unknown mode {mode!r}")
  except Exception as exc:  # noqa: BLE001 - reported to the test, which shows it
    lines = [line for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if "CpuCallback error" in first:  # the callback's traceback: its own exception is the last line
      first += f" ... {lines[-1].strip()}"
    return {"ok": False, "error": f"{type(exc).__name__}: {first}"}
  finally:
    try:
      from jax._src import config
      config.pallas_tpu_interpret_mode_context_manager.set_global(None)
    except Exception:  # noqa: BLE001
      pass
  return {"ok": True, "error": None}


def main(argv: list[str]) -> int:
  execute, unchecked, compiled = "--execute" in argv, "--unchecked" in argv, "--compiled" in argv
  paths = [a for a in argv if a not in ("--execute", "--unchecked", "--compiled")]
  saved = os.dup(1)
  os.dup2(2, 1)  # keep JAX's own output off the JSON
  try:
    results = {p: run(p, execute, unchecked, compiled) for p in paths}
  finally:
    sys.stdout.flush()
    os.dup2(saved, 1)
  with os.fdopen(saved, "w") as out:
    json.dump(results, out)
    out.write("\n")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
