"""How many findings get an automatic fix, and whether the fixed kernels lower with real JAX.

On the fix corpus (tests/fixes/corpus/: buggy kernels written the ways people write them) or any
folder of kernels defining `target()` (tests/fixes/jax_lower.py's convention):

1. every finding of every file, and whether a rewrite fix is offered for it (`fixes.fixes_for`);
2. `check --fix --unsafe-fixes` of a copy of the folder (`fix_files`);
3. the fixed copy re-analysed: findings added, names no longer imported;
4. each fixed file with a `target()` lowered (or run, interpreted) with real JAX.

    .venvs/dev/bin/python bench/fix_rate.py [FOLDER] [--python .venvs/jax/bin/python] [--keep DIR] [--json OUT]
    .venvs/dev/bin/python bench/fix_rate.py tests/fixtures/agreement --unchecked   # fixtures: no expected()
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from lsp_client import JAX_PYTHON, emit  # noqa: E402

CORPUS = REPO / "tests" / "fixes" / "corpus"
LOWER = REPO / "tests" / "fixes" / "jax_lower.py"


def measure(folder: Path, python: str = JAX_PYTHON, lower: bool = True, keep: Path | None = None,
            unchecked: bool = False) -> dict:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze
    from pallas_lsp.analysis.project import iter_python_files
    from pallas_lsp.fixes import fixes_for, has_rewrite
    from pallas_lsp.fixes.fix_all import fix_files
    from pallas_lsp.fixes.verify import unimported_names

    work = Path(tempfile.mkdtemp(prefix="fix-rate-"))
    try:
        before, after = work / "before", work / "after"
        shutil.copytree(folder, before, ignore=shutil.ignore_patterns("__pycache__"))
        files = [Path(p) for p in iter_python_files(str(before))]
        project = Project(root=str(before), python=python)
        rows, found = [], {}
        for path in files:
            found[path] = analyze(project, str(path))
            for finding in found[path]:
                fixed = has_rewrite(fixes_for(project, finding))
                rows.append({"file": str(path.relative_to(before)), "line": finding.span.line + 1,
                             "code": finding.code, "fix": fixed})
        changed, applied = fix_files(project, [str(p) for p in files], unsafe=True)
        shutil.copytree(before, after)
        for path, (_, new_text) in changed.items():
            (after / Path(path).relative_to(before)).write_text(new_text)
        fixed_project = Project(root=str(after), python=python)
        added, unimported = [], []
        for path in files:
            relative = path.relative_to(before)
            new = after / relative
            old_kinds = Counter((f.code, f.message) for f in found[path])
            new_kinds = Counter((f.code, f.message) for f in analyze(fixed_project, str(new)))
            added += [f"{relative}: {code}" for code, _ in (new_kinds - old_kinds)]
            lost = unimported_names(ast.parse(new.read_text())) - unimported_names(ast.parse(path.read_text()))
            unimported += [f"{relative}: {name}" for name in lost]
        lowered = {}
        if lower:
            # A fixed file, or the launching file of a fixed module's own folder (multi-module cases).
            targets = [p for p in files if "def target(" in p.read_text() and any(
                str(p) == c or (p.parent != before and Path(c).parent == p.parent) for c in changed)]
            fixed_targets = [str(after / p.relative_to(before)) for p in targets]
            if fixed_targets:
                flags = ["--unchecked"] if unchecked else []
                run = subprocess.run([python, str(LOWER), *flags, *fixed_targets], capture_output=True, text=True,
                                     timeout=1800, cwd=str(after))
                results = json.loads(run.stdout)
                lowered = {str(Path(k).relative_to(after)): v for k, v in results.items()}
        if keep is not None:  # the fixed copy, e.g. to run it on a GPU
            shutil.copytree(after, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        with_fix = sum(r["fix"] for r in rows)
        return {
            "folder": str(folder), "files": len(files), "findings": len(rows), "with_a_fix": with_fix,
            "fix_rate": with_fix / len(rows) if rows else 1.0, "fixes_applied": applied,
            "files_changed": len(changed), "findings_added": added, "names_no_longer_imported": unimported,
            "fixed_files_lowered": sum(v["ok"] for v in lowered.values()), "fixed_files_run": len(lowered),
            "interpreted_values_unchecked": sum(v.get("values") == "unchecked" for v in lowered.values()),
            "lower_failures": {k: v["error"] for k, v in lowered.items() if not v["ok"]},
            "without_fix": [f"{r['file']}:{r['line']} {r['code']}" for r in rows if not r["fix"]],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(CORPUS))
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--no-lower", action="store_true")
    parser.add_argument("--keep", help="also write the fixed copy of the folder here")
    parser.add_argument("--unchecked", action="store_true",
                        help="an interpreted file without expected() passes when it runs (the agreement fixtures)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    keep = Path(args.keep).resolve() if args.keep else None
    emit({"benchmark": "fix_rate", **measure(Path(args.folder).resolve(), args.python, not args.no_lower, keep,
                                                args.unchecked)},
         args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
