"""`pallas-lsp check` on single kernel files: this checkout against another revision, in the same run.

Each repetition runs, interleaved (so machine load hits both alike), a fresh process of
`pallas-lsp check --format json --python .venvs/jax/bin/python FILE` from this checkout's `server/` and
from the baseline revision's `server/` (extracted with `git archive` into a temporary folder). Reports
the medians and their ratio per file.

    .venvs/dev/bin/python bench/check_kernel_file.py --baseline REV [--runs 7] [--json OUT] [FILE ...]

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


def check_once(source: str | None, path: str) -> float:
    command, env = pallas_command("check", source)
    started = time.perf_counter()
    run = subprocess.run([*command, "--format", "json", "--python", JAX_PYTHON, path], capture_output=True,
                         text=True, env=env, timeout=600)
    elapsed = time.perf_counter() - started
    if run.returncode not in (0, 1):
        raise SystemExit(f"check failed ({run.returncode}) on {path}: {run.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare against")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or default_files()
    with tempfile.TemporaryDirectory() as base:
        extract(args.baseline, base)
        check_once(None, files[0]), check_once(base, files[0])  # warm the disk caches for both
        samples = {path: {"this": [], "baseline": []} for path in files}
        for _ in range(args.runs):
            for path in files:
                samples[path]["this"].append(check_once(None, path))
                samples[path]["baseline"].append(check_once(base, path))
    rows = {}
    for path, found in samples.items():
        this, baseline = statistics.median(found["this"]), statistics.median(found["baseline"])
        rows[Path(path).name] = {"this_s": summary(found["this"], 1.0), "baseline_s": summary(found["baseline"], 1.0),
                                 "ratio_of_medians": round(this / baseline, 3)}
    emit({"benchmark": "check_kernel_file", "baseline": args.baseline, "runs": args.runs, "machine": machine(),
          "files": rows}, args.json)


if __name__ == "__main__":
    main()
