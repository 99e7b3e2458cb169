"""Fix rate on generated kernels (issue 20): `check --fix --unsafe-fixes` on every kernel JAX rejects, judged by JAX.

    .venvs/dev/bin/python bench/fix_rate_generated.py --seed S --count N [--profile P] [--family F] [--out DIR] [--json OUT]

The kernels are those of bench/agreement_generated.py (tests/kernel_generator/: the same S and N give
the same kernels), written by nobody here. `--profile full` takes them as that grammar writes them;
`--profile meaningful` (the default) takes the same draws with the three constructs that have no meaning to
preserve written as a person writes them (grammar.meaningful: a barrier arrived on before it is waited on,
as many in-range `.at[]` indices as the semaphore has dimensions, a `get_global` used where the kernel is
launched passed into the launch instead), and counts the kernels so rewritten. `--family get_global` (the
default, the kernels this rate was first measured on) takes the get_global family's kernels of the seed,
`--family semaphore` those of the semaphore family (issue 25: no get_global; the kernels of that seed's
`generate(families=("get_global", "semaphore"))` that are of it), `--family both` all of that seed's. For each one:

1. JAX's verdict on the original (tests/kernel_generator/oracle.py, `nice -n 19`);
2. every safe and unsafe fix applied to a copy, as `check --fix --unsafe-fixes` does (`fix_files`);
3. JAX's verdict on each changed kernel (one that "Run the kernel compiled" made compiled: Mosaic GPU
   cross-lowering of its target, `oracle.py --compiled`), and the analysis of the fixed copy.

A kernel JAX rejects is **fixed** when JAX accepts its fixed version and no finding remains ("of them
unsafe": an unsafe fix, whose title says how the meaning changes, was among those applied). Otherwise
it is left unfixed (with the reason: no finding to fix, findings with no fix and why, JAX still failing
as before), or the fix **broke** it: JAX now fails for another reason. A kernel JAX accepts (**clean**)
must come out unchanged. Broken fixes and changed clean kernels must both be 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "server")]

from kernel_generator import differential, grammar  # noqa: E402


# The title of server/pallas_lsp/fixes/run_compiled.py's fix, on its own or joined to another (fixes/companion.py).
RUN_COMPILED = ("): Run the kernel compiled (", ", and run the kernel compiled (")


def _refusals(project, findings) -> list[str]:
    """For each remaining finding: its code and why it has no applicable fix (what the editor's
    disabled code action says)."""
    from pallas_lsp.fixes import fixes_and_reason, has_rewrite

    out = []
    for finding in findings:
        fixes, reason = fixes_and_reason(project, finding)
        if has_rewrite(fixes) and not any(f.automatic for f in fixes if f.kind == "rewrite"):
            reason = "only a display-only fix, which fix-all does not apply: JAX accepts the kernel as it is"
        elif has_rewrite(fixes):
            reason = "a fix is offered but was not applied"
        out.append(f"{finding.code}: {reason}")
    return out


FAMILIES = ("get_global", "semaphore", "both")


def generate(seed: int, count: int, family: str = "get_global", profile: str = "full") -> list:
    """The kernels of `family` among the seed's `count` (all `count` of them for get_global and both)."""
    if family == "get_global":
        return differential.generate(seed, count, families=("get_global",), profile=profile)
    cases = differential.generate(seed, count, families=("get_global", "semaphore"), profile=profile)
    if family == "semaphore":
        return [c for c in cases if c.spec.sem_launch != "none"]
    if family != "both":
        raise ValueError(family)
    return cases


def rewritten_constructs(seed: int, count: int, family: str = "get_global") -> dict[str, int]:
    """How many of the full grammar's kernels the meaningful profile writes otherwise, by construct (a kernel
    can have several). The profile rewrites get_global items only: a semaphore-family kernel (no items) counts
    under "semaphore family" if its files differ."""
    full = generate(seed, count, family)
    meant = generate(seed, count, family, profile="meaningful")
    counts = Counter()
    for a, b in zip(full, meant):
        if a.spec.sem_launch != "none":
            counts["semaphore family"] += a.files != b.files
            continue
        pairs = list(zip(grammar.normalize(a.spec).items, b.spec.items))
        kinds = {"barrier_arrive before barrier_wait": any(x.use != y.use for x, y in pairs),
                 ".at[] indices matching the shape": any(x.index != y.index for x, y in pairs),
                 "get_global passed into the launch": any(x.site != y.site for x, y in pairs)}
        counts.update(k for k, v in kinds.items() if v)
        counts["any of them"] += any(kinds.values())
    return dict(counts)


def measure(seed: int, count: int, folder: Path, timeout: int = 60, profile: str = "meaningful",
            family: str = "get_global", only: set[str] | None = None) -> dict:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze
    from pallas_lsp.fixes.fix_all import fix_files

    before, after = folder / "before", folder / "after"
    for path in (before, after):
        shutil.rmtree(path, ignore_errors=True)
    cases = [c for c in generate(seed, count, family, profile) if not only or c.name in only]
    started = time.monotonic()
    differential.write(cases, before)
    differential.run_jax(cases, before, timeout)
    jax_s = time.monotonic() - started
    shutil.copytree(before, after)

    started = time.monotonic()
    project = Project(root=str(after), python=differential.jax_python())
    changed_cases = []
    for case in cases:
        paths = [str(after / file) for file in case.files]
        applied = []
        changed, _ = fix_files(project, paths, unsafe=True, applied=applied)
        for path, (_, new_text) in changed.items():
            Path(path).write_text(new_text)
        case.fixed_files = sorted(Path(p).name for p in changed)
        case.unsafe_fixes = [f.title for f in applied if not f.safe]
        if changed:
            changed_cases.append(case)
    fix_s = time.monotonic() - started

    fixed_cases = [differential.Case(c.name, c.spec, c.files) for c in changed_cases]
    # A kernel a fix made compiled ("Run the kernel compiled") is judged compiled: Mosaic GPU cross-lowering
    # of the same target (its target() still says how the original ran).
    compiled = {c.name for c in changed_cases if any(m in title for title in c.unsafe_fixes for m in RUN_COMPILED)}
    started = time.monotonic()
    differential.run_jax([c for c in fixed_cases if c.name not in compiled], after, timeout)
    differential.run_jax([c for c in fixed_cases if c.name in compiled], after, timeout, compiled=True)
    jax_s += time.monotonic() - started
    after_verdict = {c.name: (c.jax_verdict, c.jax) for c in fixed_cases}

    fixed_project = Project(root=str(after), python=differential.jax_python())
    records = []
    for case in cases:
        findings = [f for file in case.files for f in analyze(fixed_project, str(after / file))]
        verdict, result = after_verdict.get(case.name, (case.jax_verdict, case.jax))
        record = {"name": case.name, "tags": grammar.tags(case.spec), "jax_before": case.jax_verdict,
                  "jax_after": verdict, "fixed_files": case.fixed_files, "unsafe_fixes": case.unsafe_fixes,
                  "remaining": sorted({f.code for f in findings})}
        if not result["ok"]:
            record["jax_error_after"] = f"{result['exc_type']}: {result['message']}"
        record["outcome"], record["why"] = _outcome(case, record, fixed_project, findings)
        records.append(record)
    rewritten = rewritten_constructs(seed, count, family) if profile == "meaningful" and not only else {}
    return {"seed": seed, "count": count, "profile": profile, "family": family, "rewritten": rewritten, "folder": str(folder), "jax_s": round(jax_s), "fix_s": round(fix_s),
            "summary": summarize(records), "kernels": records}


def _outcome(case, record, project, findings) -> tuple[str, str | None]:
    before, after = record["jax_before"], record["jax_after"]
    if before == "unexplained":
        return "unexplained", None  # a generator bug, not a kernel JAX judged
    if before == "ok":
        return ("clean_changed", None) if record["fixed_files"] else ("clean", None)
    if after == "ok" and not findings:
        return "fixed", None
    if record["fixed_files"] and after != "ok" and after != before:
        if after == "unexplained":
            return "broke", record.get("jax_error_after")
        # JAX stops at its first error: a second bug of the original shows once the first is fixed.
        return "unfixed", f"JAX now stops at a later error ({after}): {record.get('jax_error_after')}"
    if not findings:
        if after == "ok":
            return "fixed", None
        return "unfixed", f"no finding: the analysis misses JAX's {after} error"
    return "unfixed", " | ".join(_refusals(project, findings)) + (
        "" if after == "ok" else f" (JAX: {after})")


OUTCOMES = ("fixed", "unfixed", "broke", "clean", "clean_changed", "unexplained")


def summarize(records: list[dict]) -> dict:
    def tally(group):
        counts = Counter(r["outcome"] for r in group)
        rejected = counts["fixed"] + counts["unfixed"] + counts["broke"]
        unsafe = sum(1 for r in group if r["outcome"] == "fixed" and r["unsafe_fixes"])
        return {**{o: counts[o] for o in OUTCOMES}, "rejected": rejected, "fixed_with_unsafe_fix": unsafe,
                "fix_rate": round(counts["fixed"] / rejected, 4) if rejected else None}

    families: dict[str, list[dict]] = {}
    for record in records:
        for tag in record["tags"]:
            families.setdefault(tag, []).append(record)
    reasons = Counter(_reason_kind(r["why"]) for r in records if r["outcome"] == "unfixed")
    return {"total": tally(records), "families": {t: tally(g) for t, g in sorted(families.items())},
            "unfixed_reasons": dict(reasons.most_common())}


def _reason_kind(why: str) -> str:
    """A reason without the kernel's own names, to count alike reasons together."""
    import re

    return re.sub(r"g\d+_\d+\w*|line \d+|'[^']*'", "…", why or "")[:300]


def table(summary: dict) -> str:
    rows = ["| family | rejected | fixed | of them unsafe | unfixed | broke | clean | clean changed | fix rate |",
            "|---|---|---|---|---|---|---|---|---|"]
    for tag, t in [("**all**", summary["total"]), *summary["families"].items()]:
        pct = "—" if t["fix_rate"] is None else f"{100 * t['fix_rate']:.1f} %"
        rows.append(f"| {tag} | {t['rejected']} | {t['fixed']} | {t['fixed_with_unsafe_fix']} | {t['unfixed']} | "
                    f"{t['broke']} | {t['clean']} | {t['clean_changed']} | {pct} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--out", help="folder for the kernels, before/ and after/ (default: a temporary one)")
    parser.add_argument("--json", help="write every kernel's record and the summary here")
    parser.add_argument("--timeout", type=int, default=60, help="seconds JAX may take per kernel")
    parser.add_argument("--profile", choices=grammar.PROFILES, default="meaningful",
                        help="the grammar's profile (default: meaningful, see above)")
    parser.add_argument("--family", choices=FAMILIES, default="get_global",
                        help="the construct family (default: get_global, see above)")
    parser.add_argument("--only", type=lambda names: set(names.split(",")),
                        help="comma-separated kernel names (g3_00477,...): measure those of the seed's kernels only")
    args = parser.parse_args(argv)
    folder = Path(args.out or tempfile.mkdtemp(prefix="pallas-fix-gen-")).resolve()
    result = measure(args.seed, args.count, folder, args.timeout, args.profile, args.family, args.only)
    summary = result["summary"]
    print(f"seed {args.seed}, {args.count} kernels ({len(result['kernels'])} of family {args.family}), "
          f"profile {args.profile}, in {folder}: JAX {result['jax_s']} s, "
          f"fixes {result['fix_s']} s")
    for construct, n in result["rewritten"].items():
        print(f"  rewritten by the profile: {n:4d} kernels: {construct}")
    print(table(summary))
    print("\nWhy kernels JAX rejects were left unfixed:")
    for why, n in summary["unfixed_reasons"].items():
        print(f"  {n:4d}  {why}")
    for record in result["kernels"]:
        if record["outcome"] in ("broke", "clean_changed"):
            print(f"{record['outcome']}: {record['name']} {record.get('why') or ''}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
