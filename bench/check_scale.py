"""`pallas-lsp check` over whole repositories, one process and every core, against `ast.parse` of the same files.

Corpora (installed code, nothing committed):
- mixed: the installed `jax/experimental` (a real repository's folder: Pallas kernels beside
  jax2tf, Mosaic, sparse, ...; 131 files, of which 41 mention Pallas), or folders given with `--mixed`;
- pallas: jax's Pallas files only (jax/experimental/pallas/**, jax/_src/pallas/**).

Each repetition, interleaved, in fresh processes: `check --jobs 1`, `check` (one worker per CPU) and
`ast.parse` of every file (read + parse, one process). Wall time and CPU time (user + system of the
process and its children: workers and jedi's interpreter) are both recorded; the targets are CPU
ratios (`check` CPU / `ast.parse` CPU). The first `check --jobs 1` of each corpus runs with an
empty cache folder (reported apart as `check_jobs1_first_run`); later ones find the import index
and jedi's answers there.

`--empty-cache` measures what a CI job on a fresh machine does every time: every `check` gets a fresh
`PALLAS_LSP_CACHE_DIR` and a fresh `XDG_CACHE_HOME` (jedi's parso cache empty too), so every repetition
is a first run. `--source CHECKOUT` runs another checkout's `server/` (the tree before a change) in every
repetition too, interleaved (`before_*` series and ratios); its findings must equal this tree's.

    .venvs/dev/bin/python bench/check_scale.py [--runs 3] [--mixed DIR ...] [--pallas DIR ...] [--corpus mixed|pallas] [--empty-cache] [--source CHECKOUT] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_check import PARSE_ALL  # noqa: E402
from lsp_client import JAX_PYTHON, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402


def timed(command: list[str], env=None) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds, CPU seconds (the process and everything it waited for) and the run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), run


def python_files(paths: list[str]) -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from pallas_lsp.analysis.project import iter_python_files

    return [f for p in paths for f in (iter_python_files(p) if os.path.isdir(p) else [p])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mixed", nargs="+", help="folders of a mixed repository (default: the installed jax package)")
    parser.add_argument("--pallas", nargs="+", help="folders of a Pallas-only corpus (default: jax's Pallas files)")
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--corpus", choices=("mixed", "pallas"), action="append", help="only these corpora")
    parser.add_argument("--empty-cache", action="store_true",
                        help="every check starts with empty pallas-lsp and jedi caches (a first run, as in CI)")
    parser.add_argument("--source", help="also run another checkout's server/ (before/after), interleaved")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    jax_dir = jax_package_dir(args.python)
    corpora = {"mixed": args.mixed or [str(jax_dir / "experimental")],
               "pallas": args.pallas or [str(jax_dir / "experimental" / "pallas"), str(jax_dir / "_src" / "pallas")]}
    trees = {"": None, **({"before_": args.source} if args.source else {})}
    result = {"benchmark": "check_scale", "machine": machine(), "cpus": os.cpu_count(),
              "empty_cache": args.empty_cache, "source": args.source, "corpora": {}}
    for name, paths in corpora.items():
        if args.corpus and name not in args.corpus:
            continue
        files = python_files(paths)
        lines = sum(len(Path(f).read_bytes().splitlines()) for f in files)
        kept_cache = {tree: tempfile.mkdtemp(prefix="pallas-cache-") for tree in trees}
        series = {f"{tree}{key}": [] for tree in trees
                  for key in ("check_jobs1_wall", "check_jobs1_cpu", "check_wall", "check_cpu")}
        series.update(ast_parse_wall=[], ast_parse_cpu=[])
        first, outputs, loads = {}, {tree: set() for tree in trees}, []
        # Without --empty-cache, run 0 fills the kept cache folder (its `--jobs 1` is reported apart).
        for run_index in range(args.runs if args.empty_cache else args.runs + 1):
            measured = args.empty_cache or run_index > 0
            for tree, source in trees.items():
                command, env = pallas_command("check", source)
                for jobs in ("1", None) if measured else ("1",):
                    fresh = Path(tempfile.mkdtemp(prefix="pallas-first-")) if args.empty_cache else None
                    if fresh:
                        env = {**env, "PALLAS_LSP_CACHE_DIR": str(fresh / "pallas-lsp"), "XDG_CACHE_HOME": str(fresh)}
                    else:
                        env = {**env, "PALLAS_LSP_CACHE_DIR": kept_cache[tree]}
                    jobs_args = ["--jobs", jobs] if jobs else []
                    loads.append(os.getloadavg()[0])
                    wall, cpu, run = timed([*command, "--format", "json", "--python", args.python, *jobs_args, *paths], env)
                    if fresh:
                        shutil.rmtree(fresh)
                    if run.returncode not in (0, 1):
                        raise SystemExit(f"pallas-lsp check failed ({run.returncode}):\n{run.stderr[-3000:]}")
                    outputs[tree].add(run.stdout)
                    if not measured:
                        first[tree] = {"wall_s": wall, "cpu_s": cpu}
                        continue
                    prefix = f"{tree}check_jobs1" if jobs else f"{tree}check"
                    series[f"{prefix}_wall"].append(wall)
                    series[f"{prefix}_cpu"].append(cpu)
            if measured:
                wall, cpu, _ = timed([sys.executable, "-c", PARSE_ALL, *files])
                series["ast_parse_wall"].append(wall)
                series["ast_parse_cpu"].append(cpu)
        for folder in kept_cache.values():
            shutil.rmtree(folder)
        for tree, printed in outputs.items():
            if len(printed) != 1:
                raise SystemExit(f"{name}: {tree or 'this '}tree's check printed different findings in one process and in many")
        findings = json.loads(next(iter(outputs[""])))
        summaries = {key: summary(values, 1.0) for key, values in series.items()}
        parse_cpu = summaries["ast_parse_cpu"]["median"]
        entry = {
            "paths": paths, "files": len(files), "lines": lines, "load_average_1min": summary(loads, 1.0),
            "findings": {code: sum(1 for f in findings if f["code"] == code) for code in sorted({f["code"] for f in findings})},
            **({"check_jobs1_first_run": first[""]} if first else {}), **summaries}
        for tree in trees:
            entry.update({
                f"{tree}ratio_cpu_check_jobs1_to_ast_parse": summaries[f"{tree}check_jobs1_cpu"]["median"] / parse_cpu,
                f"{tree}ratio_cpu_check_to_ast_parse": summaries[f"{tree}check_cpu"]["median"] / parse_cpu,
                f"{tree}ratio_wall_check_to_ast_parse":
                    summaries[f"{tree}check_wall"]["median"] / summaries["ast_parse_wall"]["median"],
                f"{tree}speedup_wall_jobs": summaries[f"{tree}check_jobs1_wall"]["median"] / summaries[f"{tree}check_wall"]["median"]})
        if args.source:
            entry["same_findings_as_before"] = outputs[""] == outputs["before_"]
        result["corpora"][name] = entry
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
