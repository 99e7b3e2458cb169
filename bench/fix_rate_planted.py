"""Fixes of bugs planted in real Pallas kernels: a pinned package's kernel (bench/real_code.py's cache) with a bug
written into it, `check --fix --unsafe-fixes`, and JAX's verdict on the planted and the fixed kernel.

    .venvs/dev/bin/python bench/fix_rate_planted.py [--cache DIR] [--json OUT]

Nothing of the packages is kept here: each plant is a list of text replacements applied to a copy of the
package in a temporary folder, and a driver that calls the kernel's own entry point with abstract arguments and
lowers it for CUDA (Mosaic GPU, no GPU needed), with the package and its dependencies on the path (the cache's
`site-real-types*` folders). A plant counts as fixed when JAX rejects the planted kernel, no finding is left in
the fixed file and JAX lowers it (the package's own kernel must lower with the same driver); the fixed text is
also compared with the package's own (the bug undone exactly).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted_kernels import PLANTS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("PALLAS_LSP_BENCH_CACHE", Path.home() / ".cache" / "pallas-lsp-bench"))
JAX_PYTHON = str(REPO / ".venvs" / "jax" / "bin" / "python")

# TPU kernels that ask for the chip (its VMEM size, a core count) are traced for an abstract TPU v5 lite.
_LOWER = """
import contextlib
from jax.sharding import AbstractDevice, AbstractMesh
if PLATFORM == "tpu":
    device = jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_d",), axis_types=AXIS_TYPES,
                                                         abstract_device=AbstractDevice(
        device_kind="TPU v5 lite", num_cores=1, platform="tpu")))
elif ABSTRACT_GPU:
    device = jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_d",), abstract_device=AbstractDevice(
        device_kind="NVIDIA H100 80GB HBM3", num_cores=132, platform="gpu")))
else:
    device = contextlib.nullcontext()
try:
    with device:
        jax.jit(fn).trace(*args).lower(lowering_platforms=(PLATFORM,))
    print(json.dumps({"ok": True, "error": None}))
except Exception as exc:
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {first}"}))
"""


def _runtime(cache: Path) -> list[Path]:
    """The folders of what the packages import at run time (bench/real_library_types.py installs them)."""
    return [*sorted(cache.glob("site-real-types*")), *sorted(cache.glob("real-library-types/runtime")),
            *sorted(cache.glob("real-library-types/workspace"))]


def _verdict(root: Path, plant: dict, python: str, cache: Path) -> dict:
    path = [str(root), *(str(p) for p in _runtime(cache))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "JAX_PLATFORMS": "cpu"}
    axis_types = "(jax.sharding.AxisType.Auto,)" if plant.get("auto_axes") else "None"
    program = (f"import json\nPLATFORM = {plant['platform']!r}\nABSTRACT_GPU = {bool(plant.get('abstract_gpu'))}\n"
               + plant["driver"] + f"\nAXIS_TYPES = {axis_types}\n" + _LOWER)
    run = subprocess.run([python, "-c", program], capture_output=True, text=True, env=env, timeout=600, cwd=str(root))
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"ok": False, "error": f"driver failed: {run.stderr[-300:]}"}


def _site_packages(python: str) -> Path:
    run = subprocess.run([python, "-c", "import jax, os; print(os.path.dirname(os.path.dirname(jax.__file__)))"],
                         capture_output=True, text=True, check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    return Path(run.stdout.strip())


def _copy_package(plant: dict, cache: Path, python: str, work: Path) -> Path | None:
    """The planted file's copy in `work` (None when the package is not there). jax's own ops: the file alone, at
    the top of the path (imported by its name; what it imports comes from the installed jax)."""
    if plant["package"] == "jax":
        source = _site_packages(python) / plant["file"]
        if not source.exists():
            return None
        shutil.copy(source, work / source.name)
        return work / source.name
    source = cache / plant["package"]
    if not (source / plant["file"]).exists():
        return None
    package = plant["file"].split("/")[0]
    shutil.copytree(source / package, work / package, ignore=shutil.ignore_patterns("__pycache__"))
    for library in plant.get("beside", ()):  # a library it launches its kernels through, analysed with it
        found = next((folder / library for folder in _runtime(cache) if (folder / library).is_dir()), None)
        if found is None:
            return None
        shutil.copytree(found, work / library, ignore=shutil.ignore_patterns("__pycache__"))
    return work / plant["file"]


def _outcome(row: dict, changed: bool) -> str:
    if not row["jax_original"]["ok"]:
        return "not driven"  # the driver does not run the package's own kernel
    if row["jax_planted"]["ok"]:
        return "clean_changed" if changed else "not rejected"
    if not changed:
        return "unfixed"
    if row["jax_fixed"]["ok"] and not row["left"]:
        return "fixed"
    if not row["jax_fixed"]["ok"] and row["jax_fixed"]["error"] != row["jax_planted"]["error"]:
        return "fails_differently"
    return "unfixed"


def measure_plant(plant: dict, cache: Path = CACHE, python: str = JAX_PYTHON) -> dict:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze
    from pallas_lsp.fixes.fix_all import fix_files

    row = {"name": plant["name"], "kind": plant["kind"], "package": plant["package"], "platform": plant["platform"]}
    work = Path(tempfile.mkdtemp(prefix="planted-"))
    try:
        target = _copy_package(plant, cache, python, work)
        if target is None:
            row["outcome"] = "no package"
            return row
        row["jax_original"] = _verdict(work, plant, python, cache)
        original = text = target.read_text()
        for old, new in plant["replace"]:
            if text.count(old) != 1:
                raise ValueError(f"{plant['name']}: the text to plant into is not there once: {old!r}")
            text = text.replace(old, new, 1)
        target.write_text(text)
        row["jax_planted"] = _verdict(work, plant, python, cache)
        project = Project(root=str(work), python=python)
        row["findings"] = [f"{f.code} line {f.span.line + 1}" for f in analyze(project, str(target))]
        changed, _ = fix_files(project, [str(target)], unsafe=True)
        for path, (_, new_text) in changed.items():
            Path(path).write_text(new_text)
        fixed = target.read_text()
        row["left"] = [f.code for f in analyze(Project(root=str(work), python=python), str(target))]
        row["jax_fixed"] = _verdict(work, plant, python, cache) if changed else row["jax_planted"]
        row["undone"] = fixed == original
        row["diff"] = "".join(difflib.unified_diff(original.splitlines(True), fixed.splitlines(True),
                                                   "original", "fixed", n=1))
        row["outcome"] = _outcome(row, bool(changed))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


def _table(rows: list[dict]) -> str:
    yes = {True: "yes", False: "no", None: "-"}
    lines = ["| plant | package | kind | original lowers | planted rejected | fixed | text equals the package's |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        planted = row.get("jax_planted")
        lines.append(f"| {row['name']} | {row['package']} ({row['platform']}) | {row['kind']} | "
                     f"{yes[row.get('jax_original', {}).get('ok')]} | "
                     f"{yes[None if planted is None else not planted['ok']]} | {row.get('outcome')} | "
                     f"{yes[row.get('undone')]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(CACHE), help="bench/real_code.py's cache of the pinned packages")
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--only", help="the plants whose name contains this text")
    parser.add_argument("--diff", action="store_true", help="print each fix's diff against the package's text")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = []
    for plant in PLANTS:
        if args.only and args.only not in plant["name"]:
            continue
        row = measure_plant(plant, Path(args.cache), args.python)
        rows.append(row)
        print(f"{row['outcome']:17s} {row['name']}" + ("" if row.get("outcome") != "fixed" else
                                                       f" (bug undone exactly: {row['undone']})"), flush=True)
        if row.get("outcome") not in ("fixed", "no package"):
            print("   ", json.dumps({k: row.get(k) for k in ("findings", "left", "jax_original", "jax_planted",
                                                          "jax_fixed")}), flush=True)
        if args.diff and row.get("diff"):
            print(row["diff"], flush=True)
    print(_table(rows))
    counts = {o: sum(r.get("outcome") == o for r in rows) for o in sorted({r.get("outcome") for r in rows})}
    print("outcomes:", counts, f"undone exactly: {sum(bool(r.get('undone')) for r in rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
