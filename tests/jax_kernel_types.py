"""Ask JAX what each kernel parameter of a file is, as the file's own call sites launch it.

Usage:
    .venvs/jax/bin/python tests/jax_kernel_types.py [--abstract-tpu KIND] FILE.py [FILE.py ...]

Imports only the standard library and jax. Each file is run as `__main__`, and then each of its
`test_*` functions (taking no arguments) is called, all inside `jax.make_jaxpr`, so that a launch
on concrete arrays is traced rather than run (no kernel is compiled or executed; `jax.jit(f).trace`
and `jax.eval_shape` trace as they always do). Every `pallas_call` / `mpmd_map` bound meanwhile is
recorded: the kernel body's jaxpr sits in the equation's params and its invars are the refs in
parameter order; `plgpu.kernel` allocates scratch in a nested `run_scoped`, whose invars follow.
The equations are read by the trace worker's own `kernel_ref_types` (server/pallas_lsp/trace/
tracing.py), the same reading a trace's hovers show.

Prints ONE JSON object: {"types": {body_path: {body_line: {param: [str(aval), ...]}}},
"errors": {file: "ExcType: message"}}: the avals JAX gave each parameter (distinct, in the order
seen), keyed by the path and first line (`def`, or its first decorator) of the body. A test function
that raises is reported (`FILE::test_name`) and the file's other tests still run.

`--abstract-tpu KIND` (`"TPU v6 lite"`): everything runs under an abstract mesh of that TPU device, JAX's
own way to build TPU kernels on a machine without one (library code asks `pltpu.get_tpu_info()` or
builds a TensorCore mesh before it launches).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import runpy
import sys
import traceback


def _tracing():
    """The trace worker's own reading of kernel equations (server/pallas_lsp/trace/tracing.py, standard
    library and jax only), loaded by path: this environment has no pallas_lsp installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server", "pallas_lsp", "trace", "tracing.py")
    spec = importlib.util.spec_from_file_location("pallas_trace_tracing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recorder:
    def __init__(self):
        self.types: dict[str, dict[int, dict[str, list[str]]]] = {}
        self.tracing = _tracing()

    def record(self, primitive: str, params) -> None:
        for ref in self.tracing.kernel_ref_types(primitive, params):
            seen = self.types.setdefault(ref["path"], {}).setdefault(ref["line"], {}).setdefault(ref["name"], [])
            if ref["aval"] not in seen:
                seen.append(ref["aval"])


def _hook(recorder: Recorder) -> None:
    from jax._src.pallas import mpmd, pallas_call

    for primitive in (pallas_call.pallas_call_p, mpmd.mpmd_map_p):
        original = primitive.bind

        def bind(*args, _original=original, _name=primitive.name, **params):
            recorder.record(_name, params)
            return _original(*args, **params)

        primitive.bind = bind


def _abstract_tpu(kind: str | None):
    if kind is None:
        return contextlib.nullcontext()
    import jax
    from jax.sharding import AbstractDevice, AbstractMesh

    mesh = AbstractMesh((1,), ("_device",), abstract_device=AbstractDevice(device_kind=kind, num_cores=1, platform="tpu"))
    return jax.sharding.use_abstract_mesh(mesh)


def _where(error: Exception, path: str) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename).startswith(os.path.dirname(os.path.abspath(path)))]
    return f" ({os.path.basename(mine[-1].filename)}:{mine[-1].lineno})" if mine else ""


def _run(path: str, errors: dict) -> None:
    import jax

    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)

    def as_main():
        namespace = runpy.run_path(path, run_name="__main__")
        return namespace

    namespace: dict = {}

    def main_traced():
        namespace.update(as_main())

    jax.make_jaxpr(main_traced)()
    for name, value in list(namespace.items()):
        if name.startswith("test_") and callable(value):
            try:
                jax.make_jaxpr(value)()
            except Exception as error:  # reported, the file's other tests still run
                errors[f"{path}::{name}"] = f"{type(error).__name__}: {error}{_where(error, path)}"


def main(argv: list[str]) -> int:
    recorder = Recorder()
    _hook(recorder)
    errors = {}
    tpu = None
    if argv[:1] == ["--abstract-tpu"]:
        tpu, argv = argv[1], argv[2:]
    for path in argv:
        try:
            with contextlib.redirect_stdout(sys.stderr), _abstract_tpu(tpu):  # the file's own prints
                _run(path, errors)
        except Exception as error:  # reported, the other files still run
            errors[path] = f"{type(error).__name__}: {error}{_where(error, path)}"
    json.dump({"types": recorder.types, "errors": errors}, sys.stdout, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


# ---- comparing a hover's types with JAX's (standard library only) -------------------------------

_PICTURE = re.compile(r"Ref<([^>]*)>\{([A-Za-z0-9_]+|\?)\[([^\]]*)\]\}")


def pictures(hover: str | None) -> tuple[str | None, list[str]]:
    """(head picture, pictures listed as seen at disagreeing call sites) of a parameter hover."""
    if not hover:
        return None, []
    head = _PICTURE.search(hover.split("```", 2)[1]) if hover.startswith("```") else None
    seen_part = hover.split("seen at the call sites:", 1)
    seen = [m.group(0) for m in _PICTURE.finditer(seen_part[1].split("\n\n", 1)[0])] if len(seen_part) > 1 else []
    return (head.group(0) if head else None), seen


def _parts(picture: str) -> tuple[str, str, list[str]]:
    space, dtype, shape = _PICTURE.fullmatch(picture).groups()
    return space, dtype, shape.split(",") if shape else []


def _compatible(ours: str, jax: str) -> bool:
    """Every part we state (not `?`) is what JAX says."""
    (space, dtype, shape), (j_space, j_dtype, j_shape) = _parts(ours), _parts(jax)
    if space != "?" and space != j_space or dtype != "?" and dtype != j_dtype:
        return False
    if shape == ["?"]:
        return True
    return len(shape) == len(j_shape) and all(d in ("?", j) for d, j in zip(shape, j_shape))


def verdict(hover: str | None, jax_avals: list[str]) -> dict:
    """exact / wrong, and which parts (space, dtype, shape) equal JAX's, for one parameter.

    A parameter JAX saw with several types is exact when the hover lists exactly those as seen at
    the call sites (and its head admits each); one JAX type must be the hover's head itself."""
    head, seen = pictures(hover)
    if head is None:
        return {"exact": False, "wrong": False, "space": False, "dtype": False, "shape": False, "head": None}
    wrong = not all(_compatible(head, j) for j in jax_avals) or (bool(seen) and set(seen) != set(jax_avals))
    exact = not wrong and (set(seen) == set(jax_avals) if len(jax_avals) > 1 else head == jax_avals[0] and not seen)
    parts = [_parts(j) for j in jax_avals]
    space, dtype, shape = _parts(head)
    return {"exact": exact, "wrong": wrong, "head": head, "seen": seen,
            "space": all(space == p[0] for p in parts), "dtype": all(dtype == p[1] for p in parts),
            "shape": exact or all(shape == p[2] for p in parts)}
