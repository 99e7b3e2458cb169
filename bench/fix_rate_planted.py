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
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("PALLAS_LSP_BENCH_CACHE", Path.home() / ".cache" / "pallas-lsp-bench"))
JAX_PYTHON = str(REPO / ".venvs" / "jax" / "bin" / "python")

# A CPU has no core_count: the kernels size their grid by the GPU's, so the driver gives them an H100's.
_FAKE_DEVICE = ("import types\n"
                "DEVICE = types.SimpleNamespace(get_default_device=lambda: types.SimpleNamespace(core_count=132))\n")

PLANTS = [
    {"name": "tokamax gated_linear_unit sm80: epilogue SMEM tile from get_global", "kind": "scratch",
     "package": "tokamax-0.0.17", "file": "tokamax/_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm80.py",
     "replace": [("      scratch_types=(mgpu_lib.tiled_swizzled_smem((tile_m, tile_n), dtype),),\n", ""),
                 ("  def kernel(x_gmem, weights_gmem, out_gmem, out_smem):\n",
                  "  def kernel(x_gmem, weights_gmem, out_gmem):\n"
                  "    out_smem = pl.get_global(mgpu_lib.tiled_swizzled_smem((tile_m, tile_n), dtype))\n")],
     "driver": _FAKE_DEVICE + """
import functools, jax, jax.numpy as jnp
import tokamax._src.ops.gated_linear_unit.pallas_mosaic_gpu_kernel_sm80 as m
from tokamax._src.ops.gated_linear_unit import pallas_mosaic_gpu_common as common
m.backend = DEVICE
fn = functools.partial(m.gated_linear_unit, activation=jax.nn.silu,
                       config=common.Config(tile_m=64, tile_n=64, tile_k=64, num_stages=2))
args = (jax.ShapeDtypeStruct((128, 128), jnp.float16), jax.ShapeDtypeStruct((128, 2, 128), jnp.float16))
"""},
    {"name": "tokamax ragged_dot sm80: output SMEM tile from get_global", "kind": "scratch",
     "package": "tokamax-0.0.17", "file": "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm80.py",
     "replace": [("      scratch_types=[\n          plgpu.SMEM((block_m, block_n), out_dtype),\n      ],\n", ""),
                 ("      out_gmem,\n      out_smem,\n  ):\n",
                  "      out_gmem,\n  ):\n    out_smem = pl.get_global(plgpu.SMEM((block_m, block_n), out_dtype))\n")],
     "driver": """
import functools, jax, jax.numpy as jnp
import tokamax._src.ops.ragged_dot.pallas_mosaic_gpu_kernel_sm80 as m
from tokamax._src.ops.ragged_dot import pallas_mosaic_gpu_common as common
fn = functools.partial(m.ragged_dot_kernel, out_dtype=jnp.float16,
                       config=common.Config(block_m=64, block_n=128, block_k=64, num_stages=2, split_k=1))
args = (jax.ShapeDtypeStruct((256, 128), jnp.float16), jax.ShapeDtypeStruct((4, 128, 128), jnp.float16),
        jax.ShapeDtypeStruct((4,), jnp.int32))
"""},
]

_LOWER = """
try:
    jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
    print(json.dumps({"ok": True, "error": None}))
except Exception as exc:
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {first}"}))
"""


def _verdict(root: Path, driver: str, python: str, cache: Path) -> dict:
    path = [str(root), *(str(p) for p in sorted(cache.glob("site-real-types*")))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "JAX_PLATFORMS": "cpu"}
    run = subprocess.run([python, "-c", "import json\n" + driver + _LOWER], capture_output=True, text=True,
                         env=env, timeout=600, cwd=str(root))
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"ok": False, "error": f"driver failed: {run.stderr[-300:]}"}


def measure(cache: Path = CACHE, python: str = JAX_PYTHON) -> list[dict]:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze
    from pallas_lsp.fixes.fix_all import fix_files

    rows = []
    for plant in PLANTS:
        source = cache / plant["package"]
        row = {"name": plant["name"], "kind": plant["kind"]}
        rows.append(row)
        if not (source / plant["file"]).exists():
            row["outcome"] = "no package"
            continue
        work = Path(tempfile.mkdtemp(prefix="planted-"))
        try:
            package = plant["file"].split("/")[0]
            shutil.copytree(source / package, work / package, ignore=shutil.ignore_patterns("__pycache__"))
            target = work / plant["file"]
            row["jax_original"] = _verdict(work, plant["driver"], python, cache)
            original = text = target.read_text()
            for old, new in plant["replace"]:
                if old not in text:
                    raise ValueError(f"{plant['name']}: the text to plant into is not there: {old!r}")
                text = text.replace(old, new, 1)
            target.write_text(text)
            row["jax_planted"] = _verdict(work, plant["driver"], python, cache)
            project = Project(root=str(work), python=python)
            row["findings"] = [f"{f.code} line {f.span.line + 1}" for f in analyze(project, str(target))]
            changed, _ = fix_files(project, [str(target)], unsafe=True)
            for path, (_, new_text) in changed.items():
                Path(path).write_text(new_text)
            fixed = target.read_text()
            row["left"] = [f.code for f in analyze(Project(root=str(work), python=python), str(target))]
            row["jax_fixed"] = _verdict(work, plant["driver"], python, cache) if changed else row["jax_planted"]
            row["undone"] = fixed == original
            if not row["jax_original"]["ok"]:
                row["outcome"] = "not driven"  # the driver does not run the package's own kernel
            elif row["jax_planted"]["ok"]:
                row["outcome"] = "clean_changed" if changed else "not rejected"
            elif not changed:
                row["outcome"] = "unfixed"
            elif row["jax_fixed"]["ok"] and not row["left"]:
                row["outcome"] = "fixed"
            elif not row["jax_fixed"]["ok"] and row["jax_fixed"]["error"] != row["jax_planted"]["error"]:
                row["outcome"] = "fails_differently"
            else:
                row["outcome"] = "unfixed"
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(CACHE), help="bench/real_code.py's cache of the pinned packages")
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = measure(Path(args.cache), args.python)
    for row in rows:
        print(f"{row['outcome']:17s} {row['name']}" + ("" if row.get("outcome") != "fixed" else
                                                       f" (bug undone exactly: {row['undone']})"))
        if row.get("outcome") not in ("fixed", "no package"):
            print("   ", json.dumps({k: row.get(k) for k in ("findings", "left", "jax_original", "jax_planted", "jax_fixed")}))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
