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

    .venvs/dev/bin/python bench/check_scale.py [--runs 3] [--mixed DIR ...] [--pallas DIR ...] [--corpus mixed|pallas] [--json OUT]
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
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    jax_dir = jax_package_dir(args.python)
    corpora = {"mixed": args.mixed or [str(jax_dir / "experimental")],
               "pallas": args.pallas or [str(jax_dir / "experimental" / "pallas"), str(jax_dir / "_src" / "pallas")]}
    command, env = pallas_command("check")
    result = {"benchmark": "check_scale", "machine": machine(), "cpus": os.cpu_count(), "corpora": {}}
    for name, paths in corpora.items():
        if args.corpus and name not in args.corpus:
            continue
        files = python_files(paths)
        lines = sum(len(Path(f).read_bytes().splitlines()) for f in files)
        cache = tempfile.mkdtemp(prefix="pallas-cache-")
        env = {**env, "PALLAS_LSP_CACHE_DIR": cache}
        series = {key: [] for key in ("check_jobs1_wall", "check_jobs1_cpu", "check_wall", "check_cpu",
                                      "ast_parse_wall", "ast_parse_cpu")}
        first, outputs = None, set()
        for run_index in range(args.runs + 1):  # run 0: empty cache folder
            for jobs in ("1", None) if run_index else ("1",):
                jobs_args = ["--jobs", jobs] if jobs else []
                wall, cpu, run = timed([*command, "--format", "json", "--python", args.python, *jobs_args, *paths], env)
                if run.returncode not in (0, 1):
                    raise SystemExit(f"pallas-lsp check failed ({run.returncode}):\n{run.stderr[-3000:]}")
                outputs.add(run.stdout)
                if run_index == 0:
                    if jobs == "1":
                        first = {"wall_s": wall, "cpu_s": cpu}
                    continue
                prefix = "check_jobs1" if jobs else "check"
                series[f"{prefix}_wall"].append(wall)
                series[f"{prefix}_cpu"].append(cpu)
            if run_index:
                wall, cpu, _ = timed([sys.executable, "-c", PARSE_ALL, *files])
                series["ast_parse_wall"].append(wall)
                series["ast_parse_cpu"].append(cpu)
        shutil.rmtree(cache)
        if len(outputs) != 1:
            raise SystemExit(f"{name}: check printed different findings in one process and in many")
        findings = json.loads(outputs.pop())
        summaries = {key: summary(values, 1.0) for key, values in series.items()}
        parse_cpu = summaries["ast_parse_cpu"]["median"]
        result["corpora"][name] = {
            "paths": paths, "files": len(files), "lines": lines,
            "findings": {code: sum(1 for f in findings if f["code"] == code) for code in sorted({f["code"] for f in findings})},
            "check_jobs1_first_run": first, **summaries,
            "ratio_cpu_check_jobs1_to_ast_parse": summaries["check_jobs1_cpu"]["median"] / parse_cpu,
            "ratio_cpu_check_to_ast_parse": summaries["check_cpu"]["median"] / parse_cpu,
            "ratio_wall_check_to_ast_parse": summaries["check_wall"]["median"] / summaries["ast_parse_wall"]["median"],
            "speedup_wall_jobs": summaries["check_jobs1_wall"]["median"] / summaries["check_wall"]["median"]}
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
