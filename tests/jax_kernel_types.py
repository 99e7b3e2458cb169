"""Ask JAX what each kernel parameter of a file is, as the file's own call sites launch it.

Usage:
    .venvs/jax/bin/python tests/jax_kernel_types.py FILE.py [FILE.py ...]

Imports only the standard library and jax. Each file is run as `__main__`, and then each of its
`test_*` functions (taking no arguments) is called, all inside `jax.make_jaxpr`, so that a launch
on concrete arrays is traced rather than run (no kernel is compiled or executed; `jax.jit(f).trace`
and `jax.eval_shape` trace as they always do). Every `pallas_call` / `mpmd_map` bound meanwhile is
recorded: the kernel body's jaxpr sits in the equation's params and its invars are the refs in
parameter order; `plgpu.kernel` allocates scratch in a nested `run_scoped`, whose invars follow.

Prints ONE JSON object: {"types": {body_path: {body_line: {param: [str(aval), ...]}}},
"errors": {file: "ExcType: message"}}: the avals JAX gave each parameter (distinct, in the order
seen), keyed by the path and first line (`def`, or its first decorator) of the body.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import runpy
import sys
import traceback


def _function_at(path: str, line: int) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if line in (first, node.lineno):
                return node
    return None


def _where(debug_info) -> tuple[str, int] | None:
    """(path, line) of `name at path:line`."""
    src = getattr(debug_info, "func_src_info", None) or ""
    _, _, location = src.rpartition(" at ")
    path, _, line = location.rpartition(":")
    return (os.path.abspath(path), int(line)) if line.isdigit() else None


def _positional_names(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in [*function.args.posonlyargs, *function.args.args]]


class Recorder:
    def __init__(self):
        self.types: dict[str, dict[int, dict[str, list[str]]]] = {}

    def add(self, where: tuple[str, int], name: str, aval) -> None:
        path, line = where
        seen = self.types.setdefault(path, {}).setdefault(line, {}).setdefault(name, [])
        if str(aval) not in seen:
            seen.append(str(aval))

    def pallas_call(self, params) -> None:
        jaxpr = params["jaxpr"]
        where = _where(jaxpr.debug_info)
        if where is None:
            return
        for name, var in zip(jaxpr.debug_info.arg_names or (), jaxpr.invars):
            self.add(where, name, var.aval)

    def mpmd_map(self, params) -> None:
        """plgpu.kernel: operands and outputs are the mpmd body's invars, scratch the run_scoped's."""
        for jaxpr in params["jaxprs"]:
            jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
            scoped = next((e for e in jaxpr.eqns if e.primitive.name == "run_scoped"), None)
            if scoped is None:
                continue
            inner = scoped.params["jaxpr"]
            where = _where(inner.debug_info)
            function = _function_at(*where) if where else None
            if function is None:
                continue
            names = _positional_names(function)
            for name, var in zip(names, jaxpr.invars):
                self.add(where, name, var.aval)
            rest = names[len(jaxpr.invars):]
            keywords = {a.arg for a in [*function.args.args, *function.args.kwonlyargs]}
            for index, (name, var) in enumerate(zip(inner.debug_info.arg_names or (), inner.invars)):
                self.add(where, name if name in keywords else rest[index], var.aval)


def _hook(recorder: Recorder) -> None:
    from jax._src.pallas import mpmd, pallas_call

    for primitive, record in ((pallas_call.pallas_call_p, recorder.pallas_call), (mpmd.mpmd_map_p, recorder.mpmd_map)):
        original = primitive.bind

        def bind(*args, _original=original, _record=record, **params):
            _record(params)
            return _original(*args, **params)

        primitive.bind = bind


def _run(path: str) -> None:
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
            jax.make_jaxpr(value)()


def main(argv: list[str]) -> int:
    recorder = Recorder()
    _hook(recorder)
    errors = {}
    for path in argv:
        try:
            with contextlib.redirect_stdout(sys.stderr):  # the file's own prints
                _run(path)
        except Exception as error:  # reported, the other files still run
            frames = traceback.extract_tb(error.__traceback__)
            mine = [f for f in frames if os.path.abspath(f.filename).startswith(os.path.dirname(os.path.abspath(path)))]
            at = f" ({os.path.basename(mine[-1].filename)}:{mine[-1].lineno})" if mine else ""
            errors[path] = f"{type(error).__name__}: {error}{at}"
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
