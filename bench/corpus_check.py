"""Whole-corpus `pallas-lsp check` wall time, against two baselines measured in the same run.

Corpus: the Pallas files shipped in the installed jax (jax/experimental/pallas/**, jax/_src/pallas/**)
plus the generated 20k-line module (bench/make_big_file.py). Each repetition, interleaved:

- `pallas-lsp check --format json --python .venvs/jax/bin/python <corpus>` in a fresh process;
- `ast.parse` of the same files in a fresh process of the same interpreter (read + parse);
- JAX discovering one bad get_global: a fresh `.venvs/jax/bin/python bench/jax_discover_error.py`
  (`import jax` + cross-lowering one kernel for CUDA).

    .venvs/dev/bin/python bench/corpus_check.py [--runs 5] [--no-big] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_file  # noqa: E402
from lsp_client import JAX_PYTHON, corpus_files, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402

BENCH = Path(__file__).resolve().parent
PARSE_ALL = ("import ast, sys, time\nstarted = time.perf_counter()\n"
             "for path in sys.argv[1:]:\n    ast.parse(open(path, 'rb').read())\n"
             "print(time.perf_counter() - started)\n")


def timed(command: list[str], env=None, timeout: float = 1800) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    return time.perf_counter() - started, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-big", action="store_true", help="leave the generated 20k-line module out")
    parser.add_argument("--paths", nargs="+", help="check these files and folders instead of jax's Pallas files")
    parser.add_argument("--big-lines", type=int, default=20000)
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--source", help="run pallas-lsp from another checkout (its server/ folder)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    if args.paths:
        paths = [str(Path(p).resolve()) for p in args.paths]
        files = [str(f) for p in map(Path, paths) for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p])]
    else:
        jax_dir = jax_package_dir(args.python)
        paths = [str(jax_dir / "experimental" / "pallas"), str(jax_dir / "_src" / "pallas")]
        files = [str(f) for f in corpus_files(args.python)]
    planted: dict = {}
    if not args.no_big:
        big, planted = make_big_file.write(lines=args.big_lines)
        paths.append(str(big))
        files.append(str(big))
    lines = sum(len(Path(f).read_bytes().splitlines()) for f in files)
    command, env = pallas_command("check", args.source)
    check_cmd = [*command, "--format", "json", "--python", args.python, *paths]
    check, parse_process, parse_only, jax_process, jax_inner = [], [], [], [], []
    findings: Counter = Counter()
    jax_error = None
    for _ in range(args.runs):  # interleaved, so load changes hit every series alike
        seconds, run = timed(check_cmd, env=env)
        if run.returncode not in (0, 1):
            raise SystemExit(f"pallas-lsp check failed ({run.returncode}):\n{run.stderr[-3000:]}")
        check.append(seconds)
        findings = Counter(f["code"] for f in json.loads(run.stdout))
        seconds, run = timed([sys.executable, "-c", PARSE_ALL, *files])
        parse_process.append(seconds)
        parse_only.append(float(run.stdout))
        seconds, run = timed([args.python, str(BENCH / "jax_discover_error.py")])
        result = json.loads(run.stdout.strip().splitlines()[-1])
        if not result["found"]:
            raise SystemExit(f"JAX did not report the bad get_global: {result}")
        jax_process.append(seconds)
        jax_inner.append(result["total_s"])
        jax_error = result["error"]
    check_s = summary(check, 1.0)
    parse_s = summary(parse_process, 1.0)
    jax_s = summary(jax_process, 1.0)
    emit({"benchmark": "corpus_check", "machine": machine(), "files": len(files), "lines": lines,
          "command": " ".join(check_cmd),
          "findings": dict(findings), "planted_in_big_file": planted,
          "check_s": check_s, "ast_parse_process_s": parse_s, "ast_parse_only_s": summary(parse_only, 1.0),
          "jax_discover_one_error_process_s": jax_s, "jax_discover_one_error_inprocess_s": summary(jax_inner, 1.0),
          "jax_error": jax_error,
          "ratio_check_to_ast_parse": check_s["median"] / parse_s["median"],
          "ratio_check_to_jax_one_error": check_s["median"] / jax_s["median"]}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
