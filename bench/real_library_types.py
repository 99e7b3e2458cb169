"""Kernel parameter types on REAL library kernels, against JAX's own `str(aval)`.

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/real_library_types.py [--cache DIR] [--json OUT] [--verbose]
        [--entry-timeout SECONDS]

The corpus: the public kernel entry points of jax's own Pallas ops (in the jax wheel of the analysed
environment), tokamax, qwix and flywheel-tpu (pinned below), each called with concrete arrays by a small
test-like driver of ours (bench/real_library_drivers/, one `test_*` function per entry). The packages are
downloaded (`pip download --no-deps`) into the cache folder (default ~/.cache/pallas-lsp-bench/real-library-types)
and unpacked there into a workspace folder beside a copy of the drivers; what they import at run time (flax,
absl, ...) is installed there too (`pip install --no-deps --target`, pinned), never into an environment.

Truth: tests/jax_kernel_types.py runs each driver's tests with `jax.make_jaxpr` (TPU drivers under an
abstract `TPU v6 lite` mesh, as JAX cross-builds for a TPU) and records every body parameter's `str(aval)`.
Then, for each such parameter:
- static: the type `pallas-lsp types` infers (trace/parameter_types.py, the hovers' engine);
- traced: the type `pallas-lsp types --trace` gives (the drivers' tests run with JAX in the loop).
Each is exact (JAX's type(s), nothing more), partial (`?` parts or not found) or wrong (a part we state
that JAX contradicts). Prints a table per library and the totals.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from jax_kernel_types import _compatible  # noqa: E402
from kernel_types import parameter_position  # noqa: E402
from lsp_client import JAX_PYTHON, machine  # noqa: E402

CACHE = Path.home() / ".cache" / "pallas-lsp-bench" / "real-library-types"
DRIVERS = REPO / "bench" / "real_library_drivers"
# Libraries with Pallas kernels (PyPI name, version, the top-level packages their wheel holds).
LIBRARIES = {"tokamax": ("0.0.17", ("tokamax",)), "qwix": ("0.1.8", ("qwix",)),
             "flywheel-tpu": ("0.3.0", ("flywheel_tpu",))}
# What they import at run time, besides jax (their dependencies and theirs), pinned.
RUNTIME = ("absl-py==2.5.1", "einshape==1.0", "etils==1.15.0", "fire==0.7.1", "flax==0.12.12",
           "immutabledict==4.3.1", "jaxtyping==0.3.11", "markdown-it-py==4.3.0", "mdurl==0.1.2", "msgpack==1.2.4",
           "optax==0.2.8", "protobuf==7.36.2", "pydantic==2.14.4", "pydantic-core==2.50.5", "pygments==2.21.0",
           "pyyaml==6.0.4", "rich==15.0.0", "six==1.17.0", "termcolor==3.3.0", "tqdm==4.70.1", "treescope==0.1.10",
           "typing-extensions==4.16.0", "typing-inspection==0.4.5", "annotated-types==0.8.0",
           "wadler-lindig==0.1.8", "xprof==2.24.2")
# Which library each driver calls, and the device its kernels are for.
DRIVER_FILES = {"jax_ops_tpu.py": ("jax", "tpu"), "jax_ops_gpu.py": ("jax", "gpu"),
                "tokamax_kernels.py": ("tokamax", "tpu"), "qwix_kernels.py": ("qwix", "tpu"),
                "flywheel_kernels.py": ("flywheel-tpu", "tpu")}
ABSTRACT_TPU = "TPU v6 lite"


def prepare(cache: Path, python: str) -> tuple[Path, Path]:
    """(workspace, runtime folder): the libraries unpacked into the workspace with the drivers beside them."""
    workspace, runtime = cache / "workspace", cache / "runtime"
    for name, (version, packages) in LIBRARIES.items():
        if all((workspace / p).is_dir() for p in packages):
            continue
        wheels = cache / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run([python, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--only-binary",
                        ":all:", f"{name}=={version}", "-d", str(wheels)], check=True, capture_output=True, timeout=900)
        wheel = next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as zipped:
            zipped.extractall(workspace, [m for m in zipped.namelist() if m.split("/")[0] in packages])
    if not (runtime / ".installed").exists():
        subprocess.run([python, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--quiet",
                        "--target", str(runtime), *RUNTIME], check=True, capture_output=True, timeout=1800)
        (runtime / ".installed").write_text("\n".join(RUNTIME))
    drivers = workspace / "drivers"
    shutil.rmtree(drivers, ignore_errors=True)
    shutil.copytree(DRIVERS, drivers, ignore=shutil.ignore_patterns("__pycache__"))
    return workspace, runtime


def jax_truth(workspace: Path, runtime: Path, python: str) -> tuple[dict, dict, dict]:
    """(types, errors, library of each body file) from tracing every driver's tests with JAX; kept in the
    cache while the drivers and this interpreter stay the same (tracing them takes minutes)."""
    import hashlib

    key = hashlib.sha256(repr((python, sorted((p.name, p.read_bytes()) for p in DRIVERS.glob("*.py")))).encode()).hexdigest()
    kept = workspace.parent / "truth.json"
    if kept.exists():
        saved = json.loads(kept.read_text())
        if saved.get("key") == key:
            return saved["types"], saved["errors"], saved["library"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(workspace), str(runtime)])}
    types, errors, library = {}, {}, {}
    for name, (lib, device) in DRIVER_FILES.items():
        command = [python, str(REPO / "tests" / "jax_kernel_types.py"),
                   *(["--abstract-tpu", ABSTRACT_TPU] if device == "tpu" else []), str(workspace / "drivers" / name)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env, cwd=workspace)
        if run.returncode != 0:
            raise SystemExit(f"tests/jax_kernel_types.py failed on {name}: {run.stderr[-3000:]}")
        found = json.loads(run.stdout)
        errors.update(found["errors"])
        for path, bodies in found["types"].items():
            types.setdefault(path, {}).update(bodies)
            library[path] = lib
    kept.write_text(json.dumps({"key": key, "types": types, "errors": errors, "library": library}))
    return types, errors, library


def _position(path: str, line: int, name: str) -> tuple[int, int]:
    """0-based (line, column) of parameter `name` (`*name` too) of the function at `line`."""
    try:
        return parameter_position(path, line, name)
    except LookupError:
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.vararg is not None and \
                    node.args.vararg.arg == name and line in (node.lineno, min([node.lineno, *(d.lineno for d in node.decorator_list)])):
                return node.args.vararg.lineno - 1, node.args.vararg.col_offset
        raise


def grade(stated: list[str], avals: list[str]) -> str:
    """exact (JAX's types, no other), wrong (a stated part JAX contradicts) or partial (`?` or nothing)."""
    if any(not any(_compatible(s, a) for a in avals) for s in stated):
        return "wrong"
    if len(avals) > 1 and len(stated) == 1:  # one picture for several avals: each `?` where they differ
        return "partial"
    return "exact" if stated and set(stated) == set(avals) else "partial"


def compare(workspace: Path, runtime: Path, python: str, trace: bool = True,
            entry_timeout: float = 300) -> tuple[list[dict], dict]:
    from pallas_lsp.analysis import Project
    from pallas_lsp.trace.parameter_types import parameter_types

    truth, errors, library = jax_truth(workspace, runtime, python)
    bodies = sorted(truth)
    project = Project(root=str(workspace), python=python)
    static = parameter_types(project, bodies)
    traced, run = [], None
    if trace:
        from pallas_lsp.trace.entry_points import run_entry_points
        from pallas_lsp.trace.worker import WorkerPool

        os.environ["PYTHONPATH"] = os.pathsep.join([str(workspace), str(runtime)])  # the drivers' imports
        pool = WorkerPool()
        try:
            run = run_entry_points(pool, python, str(workspace), sorted(map(str, (workspace / "drivers").glob("*.py"))),
                                   entry_timeout=entry_timeout, relevant=lambda path, text: True)
        finally:
            pool.shutdown()
        traced = parameter_types(project, bodies, run)
    by_place: dict[str, dict[tuple, list[str]]] = {"static": {}, "traced": {}}
    for kind, rows in (("static", static), ("traced", traced)):
        for row in rows:
            if kind == "static" or row["source"] == "traced":
                place = (os.path.realpath(row["path"]), row["line"], row["column"], row["parameter"])
                by_place[kind].setdefault(place, []).append(row["type"])
    results = []
    for path, functions in truth.items():
        for line, params in functions.items():
            for name, avals in params.items():
                at = _position(path, int(line), name.split("[")[0])  # `refs[0]`: a ref of `*refs`
                place = (os.path.realpath(path), at[0] + 1, at[1] + 1, name)
                ours, jaxs = by_place["static"].get(place, []), by_place["traced"].get(place, [])
                results.append({"library": library[path], "file": os.path.relpath(path, workspace) if path.startswith(
                    str(workspace)) else path.split("site-packages/")[-1], "line": at[0] + 1, "param": name,
                    "jax": avals, "static": ours, "traced": jaxs, "static_grade": grade(ours, avals),
                    "traced_grade": grade(jaxs, avals) if trace else None})
    summary = {"errors": errors, "trace": run.summary() if run is not None else None}
    return results, summary


def table(results: list[dict], trace: bool) -> list[dict]:
    rows = []
    for lib in [*dict.fromkeys(r["library"] for r in results), "total"]:
        mine = [r for r in results if lib == "total" or r["library"] == lib]
        row = {"library": lib, "parameters": len(mine)}
        for kind in ("static", "traced") if trace else ("static",):
            for grade_ in ("exact", "partial", "wrong"):
                row[f"{kind}_{grade_}"] = sum(1 for r in mine if r[f"{kind}_grade"] == grade_)
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--python", default=JAX_PYTHON, help="the analysed environment (jax 0.12)")
    parser.add_argument("--no-trace", action="store_true", help="the static types only")
    parser.add_argument("--entry-timeout", type=float, default=300,
                        help="seconds each driver test may run with JAX in the loop (qwix's unrolled matmuls take minutes)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--verbose", action="store_true", help="every parameter that is not exact")
    args = parser.parse_args()
    workspace, runtime = prepare(args.cache, args.python)
    results, summary = compare(workspace, runtime, args.python, trace=not args.no_trace,
                               entry_timeout=args.entry_timeout)
    rows = table(results, not args.no_trace)
    kinds = ("static", "traced") if not args.no_trace else ("static",)
    print("| library | parameters | " + " | ".join(f"{k} exact | {k} partial | {k} wrong" for k in kinds) + " |")
    print("|---|---|" + "---|---|---|" * len(kinds))
    for row in rows:
        cells = [f"{row[f'{k}_{g}']}" + (f" ({row[f'{k}_{g}'] / row['parameters']:.0%})" if g == "exact" and row["parameters"] else "")
                 for k in kinds for g in ("exact", "partial", "wrong")]
        print(f"| {row['library']} | {row['parameters']} | " + " | ".join(cells) + " |")
    if summary["errors"]:
        print(f"JAX could not trace: {summary['errors']}", file=sys.stderr)
    if summary["trace"]:
        print(f"--trace: {summary['trace']}", file=sys.stderr)
    if args.verbose:
        for r in results:
            for kind in kinds:
                if r[f"{kind}_grade"] != "exact":
                    print(f"{kind} {r[f'{kind}_grade']}: {r['file']}:{r['line']} {r['param']}: jax {r['jax']} ours {r[kind]}",
                          file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "table": rows, "parameters": results, **summary},
                                        indent=1) + "\n")
    return 1 if any(r[f"{k}_grade"] == "wrong" for r in results for k in kinds) else 0


if __name__ == "__main__":
    sys.exit(main())
