"""How many findings get an automatic fix, and whether the fixed kernels lower with real JAX.

On the fix corpus (tests/fixes/corpus/: buggy kernels written the ways people write them) or any
folder of kernels defining `target()` (tests/fixes/jax_lower.py's convention):

1. every finding of every file, and whether a rewrite fix is offered for it (`fixes.fixes_for`);
2. `check --fix --unsafe-fixes` of a copy of the folder (`fix_files`);
3. the fixed copy re-analysed: findings added, names no longer imported;
4. each fixed file with a `target()` lowered (or run, interpreted) with real JAX.

    .venvs/dev/bin/python bench/fix_rate.py [FOLDER] [--python .venvs/jax/bin/python] [--keep DIR] [--json OUT]
    .venvs/dev/bin/python bench/fix_rate.py tests/fixtures/agreement --unchecked   # fixtures: no expected()
    .venvs/dev/bin/python bench/fix_rate.py tests/fixes/realistic --judge   # JAX's verdict before and after

With `--judge` (the realistic corpus, tests/fixes/realistic/: each case is a file with `target()` and, on a
line of its own, `# fix-rate: kind=K meaning=preserving|none` or `# fix-rate: clean`; a case in a folder is
that folder), JAX also judges every original, and each case is counted per fix kind: rejected (JAX fails
the original), **fixed** (no finding left in the case's files and JAX accepts the fixed copy), unfixed (no
change, or JAX still failing as before), **fails differently** (JAX fails the fixed copy with another
error), **broken** (a fix added a finding or left a name unimported), clean and **clean changed** (a clean
case a fix touched). "meaning-preserving" counts the rejected cases whose rewrite a kernel author would
write by hand (meaning=preserving).
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from lsp_client import JAX_PYTHON, emit  # noqa: E402

CORPUS = REPO / "tests" / "fixes" / "corpus"
LOWER = REPO / "tests" / "fixes" / "jax_lower.py"


def _lower(python: str, paths: list[str], cwd: Path, flags: tuple[str, ...] = ()) -> dict:
    if not paths:
        return {}
    run = subprocess.run([python, str(LOWER), *flags, *paths], capture_output=True, text=True, timeout=1800,
                         cwd=str(cwd))
    return {str(Path(k).relative_to(cwd)): v for k, v in json.loads(run.stdout).items()}


# The title of fixes/run_compiled.py's fix, alone or joined to another: the fixed kernel is judged compiled.
RUN_COMPILED = ("): Run the kernel compiled (", ", and run the kernel compiled (")
LABEL = re.compile(r"^# fix-rate: (clean|kind=(\S+) meaning=(preserving|none))$", re.M)


def _sorted_sets(text: str) -> str:
    """A set printed in a JAX message (`{dma_sem, semaphore}`) with its items sorted: its order varies by process."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(i.strip() for i in m.group(1).split(","))) + "}",
                  text)


def _same_error(a: str | None, b: str | None) -> bool:
    """The same JAX error but for numbers (shapes, ids) and the order of a printed set."""
    def key(text):
        return re.sub(r"\d+", "N", _sorted_sets(text or ""))[:120]
    return key(a) == key(b)


def judge(folder: Path, before: Path, after: Path, files: list[Path], changed: dict, chosen: list,
          added: list[str], unimported: list[str], python: str, fixed_findings: dict) -> dict:
    """Each labelled case of the folder: JAX's verdict on the original and the fixed copy, and its outcome."""
    cases = []
    for path in files:
        label = LABEL.search(path.read_text())
        if label is None or "def target(" not in path.read_text():
            continue
        # A case in a folder is the whole folder, its packages too (`case/pkg/_kernel.py`).
        group = [p for p in files if p.is_relative_to(path.parent)] if path.parent != before else [path]
        names = {str(p.relative_to(before)) for p in group}
        titles = [fix.title for finding, fix in chosen if str(Path(finding.path).resolve().relative_to(
            before.resolve())) in names] if chosen else []
        cases.append({"case": str(path.relative_to(before)), "files": sorted(names),
                      "kind": "clean" if label.group(1) == "clean" else label.group(2),
                      "meaning": None if label.group(1) == "clean" else label.group(3), "fixes": titles,
                      "changed": sorted(n for n in names if str(before / n) in changed)})
    verdict_before = _lower(python, [str(before / c["case"]) for c in cases], before)
    compiled = [c for c in cases if c["changed"] and any(m in t for t in c["fixes"] for m in RUN_COMPILED)]
    plain = [c for c in cases if c["changed"] and c not in compiled]
    verdict_after = {**_lower(python, [str(after / c["case"]) for c in plain], after),
                     **_lower(python, [str(after / c["case"]) for c in compiled], after, ("--compiled",))}
    for case in cases:
        was, now = verdict_before[case["case"]], verdict_after.get(case["case"])
        case["jax_before"] = was["error"] or "ok"
        left = sorted({f"{n}: {code}" for n in case["files"] for code in fixed_findings.get(n, [])})
        harm = [a for a in added + unimported if a.split(":")[0] in case["files"]]
        if was["ok"]:
            case["outcome"] = "clean_changed" if case["changed"] else "clean"
            continue
        if not case["changed"]:
            case["outcome"] = "unfixed"
        elif harm:
            case["outcome"], case["why"] = "broken", harm
        elif now["ok"] and not left:
            case["outcome"] = "fixed"
        elif not now["ok"] and not _same_error(now["error"], was["error"]):
            case["outcome"], case["why"] = "fails_differently", now["error"]
        else:
            case["outcome"] = "unfixed"
        if case["outcome"] == "unfixed":
            case["why"] = left or (["no finding: the analysis misses JAX's error"] if not case["changed"] else
                                   [f"JAX still: {now['error']}"])
        if now:
            case["jax_after"] = now["error"] or "ok"
    return {"cases": cases, "by_kind": _by_kind(cases)}


OUTCOMES = ("rejected", "fixed", "unfixed", "fails_differently", "broken", "clean", "clean_changed")


def _by_kind(cases: list[dict]) -> dict:
    rows: dict[str, Counter] = {}
    for case in cases:
        for key in (case["kind"], "all", *(("meaning-preserving",) if case["meaning"] == "preserving" else ())):
            row = rows.setdefault(key, Counter())
            row[case["outcome"]] += 1
            row["rejected"] += case["outcome"] not in ("clean", "clean_changed")
    order = sorted(rows, key=lambda k: (k == "all", k == "clean", k == "meaning-preserving", k))
    return {k: {o: rows[k][o] for o in OUTCOMES} for k in order}


def table(by_kind: dict) -> str:
    lines = ["| fix kind | rejected | fixed | unfixed | fails differently | broken | clean | clean changed |",
             "|---|---|---|---|---|---|---|---|"]
    for kind, row in by_kind.items():
        name = f"**{kind}**" if kind in ("all", "meaning-preserving") else kind
        lines.append(f"| {name} | " + " | ".join(str(row[o]) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def measure(folder: Path, python: str = JAX_PYTHON, lower: bool = True, keep: Path | None = None,
            unchecked: bool = False, verdicts: bool = False) -> dict:
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
        chosen = []
        changed, applied = fix_files(project, [str(p) for p in files], unsafe=True, chosen=chosen)
        shutil.copytree(before, after)
        for path, (_, new_text) in changed.items():
            (after / Path(path).relative_to(before)).write_text(new_text)
        fixed_project = Project(root=str(after), python=python)
        added, unimported, left = [], [], {}
        for path in files:
            relative = path.relative_to(before)
            new = after / relative
            old_kinds = Counter((f.code, f.message) for f in found[path])
            now = analyze(fixed_project, str(new))
            left[str(relative)] = [f.code for f in now]
            new_kinds = Counter((f.code, f.message) for f in now)
            added += [f"{relative}: {code}" for code, _ in (new_kinds - old_kinds)]
            lost = unimported_names(ast.parse(new.read_text())) - unimported_names(ast.parse(path.read_text()))
            unimported += [f"{relative}: {name}" for name in lost]
        judged = judge(folder, before, after, files, changed, chosen, added, unimported, python, left) \
            if verdicts else None
        lowered = {}
        if lower and not verdicts:
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
        return {**({"judged": judged} if judged else {}),
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
    parser.add_argument("--judge", action="store_true",
                        help="JAX's verdict on each labelled case before and after, per fix kind (see above)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    keep = Path(args.keep).resolve() if args.keep else None
    result = measure(Path(args.folder).resolve(), args.python, not args.no_lower, keep, args.unchecked, args.judge)
    if args.judge:
        print(table(result["judged"]["by_kind"]), file=sys.stderr)
        for case in result["judged"]["cases"]:
            if case["outcome"] not in ("fixed", "clean"):
                print(f"{case['outcome']}: {case['case']} ({case['kind']}) {case.get('why', '')}", file=sys.stderr)
    emit({"benchmark": "fix_rate", **result}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
