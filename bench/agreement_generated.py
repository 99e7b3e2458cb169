"""Agreement with real JAX on generated kernels (issue 25): per construct family, false alarms and misses apart.

    .venvs/dev/bin/python bench/agreement_generated.py --seed S --count N [--out DIR] [--json OUT]
        [--shrink [--reproducers DIR]] [--write-expected PATH] [--timeout SECONDS] [--jax-from OLD.json]

Generates N kernels from the grammar in tests/kernel_generator/ (seeded: the same S and N give the same
kernels), asks JAX 0.12 about each (one `nice -n 19` process for a few hundred kernels:
tests/kernel_generator/oracle.py), runs the analysis of `pallas-lsp check` on them, and prints a table
of agreement per family (`axis:choice`). `--shrink` reduces one disagreement of each kind (JAX's verdict,
the analyzer's) to a small kernel with
the same verdicts and writes one reproducer per distinct shrunk kernel (default folder:
tests/fixtures/generated_disagreements/). `--write-expected` writes the record the CI test compares
with (tests/test_generated_agreement.py). `--jax-from` takes JAX's verdicts from an earlier `--json` of the same
seed and count instead of asking JAX again (the kernels are the same): only the analysis is re-run, for
iterating on a rule; the figures to record come from a run that asks JAX.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "server")]

from kernel_generator import differential, grammar  # noqa: E402

REPRODUCERS = REPO / "tests" / "fixtures" / "generated_disagreements"


def expected_record(seed: int, count: int, cases) -> dict:
    """What the CI test compares: every kernel that is not in agreement, and the totals."""
    summary = differential.summarize(cases)
    return {"seed": seed, "count": count, "total": summary["total"],
            "disagreements": {c.name: {"kind": c.kind, "jax": c.jax_verdict, "analyzer": sorted(c.codes)}
                              for c in cases if c.kind != "agree"}}


def table(summary: dict) -> str:
    rows = ["| family | kernels | agree | false alarms | misses | wrong rule | wrong line | agreement |",
            "|---|---|---|---|---|---|---|---|"]
    for tag, t in [("**all**", summary["total"]), *summary["families"].items()]:
        pct = "—" if t["agreement"] is None else f"{100 * t['agreement']:.1f} %"
        rows.append(f"| {tag} | {t['kernels']} | {t['agree']} | {t['false_alarm']} | {t['miss']} | {t['wrong_rule']} "
                    f"| {t['wrong_line']} | {pct} |")
    return "\n".join(rows)


def write_reproducers(shrunk, folder: Path) -> list[str]:
    """One reproducer per distinct shrunk spec, named after its kind and verdicts; VERDICTS.json records them."""
    folder.mkdir(parents=True, exist_ok=True)
    verdicts_path = folder / "VERDICTS.json"
    verdicts = json.loads(verdicts_path.read_text()) if verdicts_path.exists() else {}
    known = {json.dumps(v["spec"], sort_keys=True) for v in verdicts.values()}
    written = []
    for case in shrunk:
        key = json.dumps(differential.spec_to_json(grammar.normalize(case.spec)), sort_keys=True)
        if key in known:
            continue
        known.add(key)
        stem = f"{case.kind}_{case.jax_verdict}_{'_'.join(sorted(case.codes)) or 'none'}".lower()
        n = 1
        while f"{stem}_{n:02d}" in verdicts:
            n += 1
        name = f"{stem}_{n:02d}"
        for file, text in grammar.render(case.spec, name).items():
            (folder / file).write_text(text)
        verdicts[name] = {"kind": case.kind, "jax": case.jax_verdict, "analyzer": sorted(case.codes),
                          "jax_error": case.record()["jax_error"], "from": case.name,
                          "spec": differential.spec_to_json(grammar.normalize(case.spec))}
        written.append(name)
    verdicts_path.write_text(json.dumps(dict(sorted(verdicts.items())), indent=1) + "\n")
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--out", help="folder for the generated kernels (default: a temporary one)")
    parser.add_argument("--json", help="write every kernel's record and the summary here")
    parser.add_argument("--shrink", action="store_true")
    parser.add_argument("--reproducers", default=str(REPRODUCERS))
    parser.add_argument("--write-expected")
    parser.add_argument("--timeout", type=int, default=60, help="seconds JAX may take per kernel")
    parser.add_argument("--jax-from", help="JAX's verdicts from an earlier --json of the same seed and count")
    args = parser.parse_args(argv)

    folder = Path(args.out or tempfile.mkdtemp(prefix="pallas-gen-"))
    started = time.monotonic()
    cases = differential.generate(args.seed, args.count)
    if args.jax_from:
        earlier = json.loads(Path(args.jax_from).read_text())
        if (earlier["seed"], earlier["count"]) != (args.seed, args.count):
            parser.error(f"--jax-from {args.jax_from} is seed {earlier['seed']}, count {earlier['count']}")
        differential.write(cases, folder)
        differential.reuse_jax(cases, earlier["kernels"])
        differential.run_analyzer(cases, folder)
    else:
        differential.evaluate(cases, folder, args.timeout)
    summary = differential.summarize(cases)
    print(f"seed {args.seed}, {args.count} kernels in {folder}, {time.monotonic() - started:.0f} s")
    print("JAX's verdicts:", summary["jax_verdicts"])
    print(table(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "count": args.count, "summary": summary,
                                               "kernels": [c.record() for c in cases]}, indent=1) + "\n")
    if args.write_expected:
        Path(args.write_expected).write_text(json.dumps(expected_record(args.seed, args.count, cases), indent=1) + "\n")
    if args.shrink:
        shrunk = differential.shrink(differential.distinct(cases), folder / "shrink")
        written = write_reproducers(shrunk, Path(args.reproducers))
        print(f"{len(shrunk)} distinct disagreements shrunk, {len(written)} new reproducers: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
