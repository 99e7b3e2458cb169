"""`pallas-lsp check` on single kernel files: this checkout against another revision, in the same run.

Each repetition runs, interleaved (so machine load hits both alike), a fresh process of
`pallas-lsp check --format json --python .venvs/jax/bin/python FILE` from this checkout's `server/` and
from the baseline revision's `server/` (extracted with `git archive` into a temporary folder). Reports
the medians and their ratio per file.

    .venvs/dev/bin/python bench/check_kernel_file.py --baseline REV [--runs 7] [--json OUT] [FILE ...]
    .venvs/dev/bin/python bench/check_kernel_file.py --baseline-select PAL000,PAL001,PAL002 [...]

`--baseline-select CODES` compares against this same checkout run with `--select CODES` instead of
another revision: the cost of the rules left out, with everything else (other changes since a
revision) equal.

Default files: examples/kernels/*.py and jax's shipped collective_matmul_mgpu.py (get_global, remote
signals) and hopper_matmul_mgpu.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, emit, jax_package_dir, machine, pallas_command, summary  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def default_files() -> list[str]:
    ops = jax_package_dir() / "experimental" / "pallas" / "ops" / "gpu"
    return [*map(str, sorted((REPO / "examples" / "kernels").glob("*.py"))),
            str(ops / "collective_matmul_mgpu.py"), str(ops / "hopper_matmul_mgpu.py")]


def extract(revision: str, into: str) -> str:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "server"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return into


def check_once(source: str | None, path: str, select: str | None = None) -> float:
    command, env = pallas_command("check", source)
    options = ["--select", select] if select else []
    started = time.perf_counter()
    run = subprocess.run([*command, "--format", "json", *options, "--python", JAX_PYTHON, path], capture_output=True,
                         text=True, env=env, timeout=600)
    elapsed = time.perf_counter() - started
    if run.returncode not in (0, 1):
        raise SystemExit(f"check failed ({run.returncode}) on {path}: {run.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--baseline", help="git revision to compare against")
    group.add_argument("--baseline-select", help="compare against this checkout run with --select CODES")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or default_files()
    with tempfile.TemporaryDirectory() as folder:
        base = extract(args.baseline, folder) if args.baseline else None
        select = args.baseline_select
        check_once(None, files[0]), check_once(base, files[0], select)  # warm the disk caches for both
        samples = {path: {"this": [], "baseline": []} for path in files}
        for _ in range(args.runs):
            for path in files:
                samples[path]["this"].append(check_once(None, path))
                samples[path]["baseline"].append(check_once(base, path, select))
    rows = {}
    for path, found in samples.items():
        this, baseline = statistics.median(found["this"]), statistics.median(found["baseline"])
        rows[Path(path).name] = {"this_s": summary(found["this"], 1.0), "baseline_s": summary(found["baseline"], 1.0),
                                 "ratio_of_medians": round(this / baseline, 3)}
    emit({"benchmark": "check_kernel_file", "baseline": args.baseline or f"--select {args.baseline_select}",
          "runs": args.runs, "machine": machine(),
          "files": rows}, args.json)


if __name__ == "__main__":
    main()
