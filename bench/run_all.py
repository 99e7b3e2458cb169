"""Run every benchmark in the configuration docs/benchmarks.md reports, one after the other.

    .venvs/dev/bin/python bench/run_all.py --out DIR [--source CHECKOUT] [--quick]

Writes one JSON file per measurement into DIR and prints a markdown summary. `--source` runs another
checkout's server (for before/after comparisons; export one with `git archive REV server | tar -x -C DIR`).
`*_jax_only` leave the generated 20k-line module out (comparable with older checkouts, which took
minutes per analysis of it). What building quick fixes costs: `fix_cost.py`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent

# (name, script, arguments, quick-mode arguments)
STEPS = [
    ("latency_kernel", "lsp_latency.py", ["--edits", "30", "--warmup", "3", "--file", "{jax}/experimental/pallas/ops/gpu/collective_matmul_mgpu.py",
                                          "--root", "{jax}"], ["--edits", "5", "--warmup", "1"]),
    ("latency_big", "lsp_latency.py", ["--edits", "5", "--warmup", "1", "--file", "{big}"], ["--edits", "2", "--warmup", "0"]),
    ("cold_start", "cold_start.py", ["--runs", "10"], ["--runs", "2"]),
    ("corpus_check", "corpus_check.py", ["--runs", "3"], ["--runs", "1"]),
    ("corpus_check_jax_only", "corpus_check.py", ["--runs", "5", "--no-big"], ["--runs", "1"]),
    ("memory", "server_memory.py", ["--runs", "1"], ["--runs", "1"]),
    ("memory_jax_only", "server_memory.py", ["--runs", "3", "--no-big"], ["--runs", "1"]),
]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(BENCH))
    import make_big_file
    from lsp_client import JAX_PYTHON, jax_package_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--source")
    parser.add_argument("--quick", action="store_true", help="few repetitions")
    parser.add_argument("--only", nargs="+", help="run only these steps: " + ", ".join(s[0] for s in STEPS))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = {"jax": str(jax_package_dir(JAX_PYTHON)), "big": str(make_big_file.write()[0])}
    for name, script, arguments, quick in STEPS:
        if args.only and name not in args.only:
            continue
        arguments = [a.format(**names) for a in arguments]
        if args.quick:  # later options win in argparse
            arguments += quick
        if args.source:
            arguments += ["--source", args.source]
        command = [sys.executable, str(BENCH / script), *arguments, "--json", str(out / f"{name}.json")]
        print("$", " ".join(command), file=sys.stderr, flush=True)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print(summarize(out))
    return 0


def summarize(out: Path) -> str:
    """One markdown line per measurement found in `out`."""
    rows = ["| measurement | median | p95 | min–max | notes |", "|---|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        result = json.loads(path.read_text())
        kind = result["benchmark"]
        if kind == "lsp_latency":
            for f in result["files"]:
                s = f["edit_ms"]
                rows.append(f"| {path.stem}: {Path(f['file']).name} edit→publish (ms, n={s['n']}) | {s['median']:.0f} | "
                            f"{s['p95']:.0f} | {s['min']:.0f}–{s['max']:.0f} | first analysis {f['first_analysis_ms']:.0f} ms, "
                            f"diagnostics {f['diagnostics']} |")
        elif kind == "cold_start":
            for f in result["files"]:
                s = f["cold_start_ms"]
                rows.append(f"| {path.stem}: {Path(f['file']).name} (ms, n={s['n']}) | {s['median']:.0f} | {s['p95']:.0f} | "
                            f"{s['min']:.0f}–{s['max']:.0f} | initialize answered at {f['initialize_answered_ms']['median']:.0f} ms; "
                            f"{f['ratio_to_python_startup']:.0f}× bare `python -c pass`; import of the server alone "
                            f"{result['import_server_ms']['median']:.0f} ms"
                            + (f"; {f['compare_source']}: {f['compare_source_cold_start_ms']['median']:.0f} ms"
                               if "compare_source" in f else "") + " |")
        elif kind == "corpus_check":
            s = result["check_s"]
            rows.append(f"| {path.stem}: {result['files']} files, {result['lines']} lines (s, n={s['n']}) | {s['median']:.1f} | "
                        f"{s['p95']:.1f} | {s['min']:.1f}–{s['max']:.1f} | {result['ratio_check_to_ast_parse']:.1f}× ast.parse "
                        f"({result['ast_parse_process_s']['median']:.2f} s), {result['ratio_check_to_jax_one_error']:.1f}× JAX "
                        f"finding one error ({result['jax_discover_one_error_process_s']['median']:.1f} s); "
                        f"findings {result['findings']} |")
        elif kind == "server_memory":
            s = result["server_vmhwm_mib"]
            run = result["runs"][0]
            rows.append(f"| {path.stem}: VmHWM after {run['files']} files (MiB, n={len(result['runs'])}) | {s['median']:.0f} | – | "
                        f"{s['min']:.0f}–{s['max']:.0f} | VmRSS {run['server_vmrss_mib']:.0f} MiB; jedi helper "
                        f"{run['helper_processes_vmhwm_mib']} MiB; {run['seconds_to_analyse_all']:.0f} s to analyse all |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
