"""A server's first pass against a whole analysis, file by file: both must agree.

The server publishes a first pass (analysis/first_pass.py: no kernels of the file's importers), then
models the importers' kernels a step at a time and publishes the whole analysis. For each file, in one project as the server does: `analyze_before_importers`, each step
(`model_importer_kernels`), then `analyze_incremental`; against `analyze` in a fresh project. A file
disagrees when the whole analysis after the first pass differs from the fresh one, or when the first
pass's findings are not exactly the fresh ones of the rules it kept. Nothing is written to the disk cache
(a fresh `PALLAS_LSP_CACHE_DIR`, cache writes deferred): jedi's answers are asked, as on a first start.

Sets: `fixtures` (tests/fixtures/trace and kernel_types), `examples`, `golden` (the quick-fix golden
workspaces of two modules or more), `jax` (jax's tests/pallas, exported from `--jax-git-dir`), `jla`
(jax-linear-attention's files naming Pallas) and `tpu-inference` (its `kernels/`), the pinned wheels
of bench/real_file_latency.py.

    .venvs/dev/bin/python bench/first_pass_agreement.py [--sets fixtures examples ...] [--jax-git-dir DIR]
        [--python JAX_PYTHON]        # exit 1 on any disagreement
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

SETS = ("fixtures", "examples", "golden", "jax", "jla", "tpu-inference")


def files_of(name: str, jax_git_dir: str | None) -> list[tuple[Path, Path]]:
    """(project root, file) of one set."""
    import real_file_latency as bench

    if name == "fixtures":
        return [(root, f) for root in (REPO / "tests/fixtures/trace", REPO / "tests/fixtures/kernel_types")
                for f in sorted(root.rglob("*.py"))]
    if name == "examples":
        return [(REPO / "examples", f) for f in sorted((REPO / "examples").rglob("*.py"))]
    if name == "golden":
        found = []
        for case in sorted((REPO / "tests/fixes/golden").iterdir()):
            modules = sorted(case.rglob("*.py"))
            if len(modules) >= 2:
                found += [(case, f) for f in modules]
        return found
    if name == "jax":
        if not jax_git_dir:
            return []
        from real_code import export_jax
        _, root = export_jax(jax_git_dir, bench.DEFAULT_CACHE)
        return [(root, f) for f in sorted((root / "tests/pallas").rglob("*.py"))]
    root = bench.unpacked(name, bench.DEFAULT_CACHE)
    if name == "jla":
        return [(root, f) for f in sorted(root.rglob("*.py")) if "pallas" in f.read_text(encoding="utf-8", errors="replace")]
    return [(root, f) for f in sorted((root / "tpu_inference/kernels").rglob("*.py"))]


def compare(root: Path, path: Path, python: str) -> dict:
    from pallas_lsp.analysis import Project, first_pass
    from pallas_lsp.engine import analyze, analyze_before_importers, analyze_incremental

    def keys(findings):
        return sorted((f.code, f.span, f.message) for f in findings)

    complete: list[set[str]] = []
    complete_codes = first_pass.Deferral.complete_codes

    def recorded(self):
        codes = complete_codes(self)
        complete.append(codes)
        return codes

    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    project = Project(str(root), python=python)
    project.defer_cache_writes = True
    project.set_text(str(path), text)
    first_pass.Deferral.complete_codes = recorded
    try:
        first, steps = analyze_before_importers(project, str(path), text)
    finally:
        first_pass.Deferral.complete_codes = complete_codes
    for step in steps:
        first_pass.model_importer_kernels(project, str(path), *step)
    after = keys(analyze_incremental(project, str(path), text))
    fresh_project = Project(str(root), python=python)
    fresh_project.defer_cache_writes = True
    fresh = keys(analyze(fresh_project, str(path)))
    kept = [k for k in fresh if not complete or k[0] in complete[0]]
    return {"steps": steps, "kept": len(complete[0]) if complete else None, "whole_agrees": after == fresh,
            "first_agrees": keys(first) == kept, "findings": len(fresh)}


def main(argv: list[str] | None = None) -> int:
    import real_file_latency as bench

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--jax-git-dir", help="a jax git dir (for the `jax` set)")
    parser.add_argument("--python", default=bench.JAX_PYTHON, help="the analysed interpreter")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pallas-lsp-first-pass-") as cache:
        os.environ["PALLAS_LSP_CACHE_DIR"] = cache
        disagreements = 0
        for name in args.sets:
            started = time.process_time()
            counts = {"files": 0, "left out": 0, "findings": 0}
            for root, path in files_of(name, args.jax_git_dir):
                result = compare(root, path, args.python)
                counts["files"] += 1
                counts["left out"] += bool(result["steps"])
                counts["findings"] += result["findings"]
                if not (result["whole_agrees"] and result["first_agrees"]):
                    disagreements += 1
                    print(f"DISAGREES {path}: whole after the first pass "
                          f"{'agrees' if result['whole_agrees'] else 'differs'}, first pass "
                          f"{'agrees' if result['first_agrees'] else 'differs'}")
            print(f"{name}: {counts['files']} files, the first pass left rules out of {counts['left out']}, "
                  f"{counts['findings']} findings; "
                  f"{time.process_time() - started:.1f} s CPU")
        print(f"{disagreements} disagreement(s)")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
