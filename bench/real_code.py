"""Real Pallas code as the measuring stick: `pallas-lsp check` over pinned PyPI packages with Pallas kernels.

    .venvs/dev/bin/python bench/real_code.py [--cache DIR] [--packages NAME,...] [--only NAME=SUBPATH ...]
        [--jax-git-dir GIT_DIR] [--jobs N] [--python PY] [--json OUT]

Downloads each pinned package (`pip download --no-deps`, a wheel where there is one) into the cache folder
(default `bench/.generated/real_code`, which git ignores), unpacks only its `.py` files, runs
`pallas-lsp check --format json` over them (one process per package; `--jobs` is check's `-j`), and prints per
package: files, findings, CPU seconds (the check process and its workers), peak memory (the largest process's
resident set) and wall seconds. `--jax-git-dir` adds jax's own `tests/pallas` and `jax/experimental/pallas` at
that git dir's HEAD (with `jax/_src/pallas` beside them, as in a checkout), named by its commit. Of a package
in CHECKED only those folders are checked (jax's wheel: its Pallas API, with the ops it ships, and implementation).

Every finding must be in EXPECTED (each justified there, checked with real JAX); the script exits 1 on any
other, on an EXPECTED finding no longer reported (for a package checked whole), and on a package it could not get (with why). A package that fails to download is skipped with a note
unless it was asked for by name.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".generated" / "real_code"
# Packages on PyPI with Pallas kernels, pinned (the newest release when this list was made).
PINNED = {
    "tokamax": "0.0.17",
    "maxtext": "0.2.5",
    "tpu-inference": "0.32.0",
    "ejkernel": "0.0.80.3",
    "easydel": "0.3.0",
    "jax-linear-attention": "0.1.0",
    "qwix": "0.1.8",
    "flywheel-tpu": "0.3.0",
    "fermix": "0.1.0",
    "deltanet-tpu": "0.3.0",
    # jax's own Pallas code as released (newer than the git snapshot below): its public Pallas API with the
    # ops it ships, and the implementation beside it.
    "jax": "0.12.0.1",
}
# Only these folders of a package are checked (default: all of it).
CHECKED = {"jax": ("jax/experimental/pallas", "jax/_src/pallas")}
# What JAX's own code gets from a checkout: its Pallas tests and public Pallas API (with jax/_src/pallas beside
# them, where its tests' base classes live).
JAX_CHECKED = ("tests/pallas", "jax/experimental/pallas")
# pyproject.toml marks the checkout's root, as in a clone: without it the nearest one above the cache (this
# repository's) was the workspace root, `jax._src.pallas.pallas_test_util` was not found, and the tests launched
# through its `self.pallas_call` were not analysed.
JAX_EXPORTED = (*JAX_CHECKED, "jax/_src/pallas", "pyproject.toml")
# (package, path inside it, line, code) -> why it is right, each checked with real JAX (the kernel lowered as its
# code launches it). A package is its PyPI name, jax its commit.
EXPECTED: dict[tuple[str, str, int, str], str] = {
    ("jax@cec06d116c", "tests/pallas/tpu_pallas_test.py", 1418, "PAL005"):
        "test_cannot_dma_with_nonscalar_semaphore_ref asserts JAX's ValueError 'Cannot signal'; jax 0.12 lowering "
        "its kernel for a TPU raises 'Cannot signal on a non-()-shaped semaphore: (1,)' there",
    ("jax@cec06d116c", "tests/pallas/tpu_pallas_test.py", 1609, "PAL015"):
        "test_dma_wait_with_regular_semaphore_raises asserts JAX's ValueError 'semaphore_wait'; jax 0.12 lowering its "
        "kernel for a TPU raises 'dma_wait requires a DMA semaphore, but got a regular semaphore. Use "
        "pl.semaphore_wait() instead.' at the copy's .wait() there",
    ("jax@cec06d116c", "tests/pallas/gpu_pallas_interpret_test.py", 855, "PAL005"):
        "test_not_indexing_multiple_barriers_raises asserts JAX's ValueError 'Attempting to operate on barrier without "
        "indexing, but `num_barriers = 2`', which jax 0.12's GPU interpreter (InterpretGPUParams) raises at the "
        "barrier_arrive of the whole two-barrier array (compiled: 'Operation is only valid for a single barrier')",
}


def download(name: str, version: str, cache: Path) -> Path:
    """The package's wheel (or source archive) in the cache, downloaded once."""
    folder = cache / "dists" / f"{name}-{version}"
    found = sorted(folder.glob("*")) if folder.is_dir() else []
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                          "--prefer-binary", f"{name}=={version}", "-d", str(folder)],
                         capture_output=True, text=True, timeout=900)
    found = sorted(folder.glob("*"))
    if run.returncode != 0 or not found:
        raise RuntimeError(f"pip download {name}=={version} failed: {(run.stderr or run.stdout).strip()[-400:]}")
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    """Only the `.py` files of a wheel or source archive, under `into` (once)."""
    done = into / ".unpacked"
    if done.exists():
        return into
    into.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.namelist():
                if member.endswith(".py") and _safe(member):
                    zipped.extract(member, into)
    else:
        with tarfile.open(archive) as tarred:
            members = [m for m in tarred.getmembers() if m.isfile() and m.name.endswith(".py") and _safe(m.name)]
            tarred.extractall(into, members=members, filter="data")
    done.write_text(archive.name)
    return into


def _safe(member: str) -> bool:
    return not member.startswith("/") and ".." not in Path(member).parts


def export_jax(git_dir: str, cache: Path) -> tuple[str, Path]:
    """jax's Pallas tests and API at the git dir's HEAD, exported once: (commit, folder)."""
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    into = cache / "src" / f"jax-{commit[:10]}"
    if not (into / ".unpacked").exists() or not (into / "pyproject.toml").exists():
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "HEAD", *JAX_EXPORTED],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "x", "-C", str(into)], input=archive, check=True)
        (into / ".unpacked").write_text(commit)
    return commit, into


def check(paths: list[Path], python: str, jobs: int) -> dict:
    """One `pallas-lsp check --format json` process over `paths`: its findings, CPU and peak memory (read from
    its own rusage, which counts the workers it waited for)."""
    command = [sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", python, "-j", str(jobs),
               *map(str, paths)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        output, errors = out.read(), err.read()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"check exited {process.returncode}: {errors.decode(errors='replace')[-800:]}")
    return {"findings": json.loads(output or b"[]"), "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024, "wall_s": wall}


def python_files(paths: list[Path]) -> int:
    return sum(1 for path in paths for _ in path.rglob("*.py"))


def run_package(label: str, root: Path, paths: list[Path], python: str, jobs: int) -> dict:
    result = check(paths, python, jobs)
    findings = []
    for finding in result.pop("findings"):
        relative = os.path.relpath(os.path.abspath(finding["path"]), root)
        key = (label.split("==")[0], relative, finding["line"], finding["code"])  # `tokamax`, `jax@cec06d116c`
        findings.append({**finding, "path": relative, "expected": EXPECTED.get(key)})
    return {"package": label, "files": python_files(paths), "findings": findings, **result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--packages", help="comma-separated names of PINNED (default: all)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME=SUBPATH",
                        help="check only this folder or file of a package (a small sample)")
    parser.add_argument("--jax-git-dir", help="a jax git dir: also check its tests/pallas and jax/experimental/pallas")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--python", default=str(REPO / ".venvs" / "jax" / "bin" / "python"),
                        help="the analysed environment (jax 0.12)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    named = args.packages.split(",") if args.packages else None
    unknown = [name for name in named or () if name not in PINNED]
    if unknown:
        parser.error(f"not pinned: {', '.join(unknown)}")
    only = dict(item.split("=", 1) for item in args.only)
    results, failures = [], []
    for name, version in PINNED.items():
        if named is not None and name not in named:
            continue
        label = f"{name}=={version}"
        try:
            root = unpack(download(name, version, args.cache), args.cache / "src" / f"{name}-{version}")
        except (RuntimeError, OSError, subprocess.SubprocessError, zipfile.BadZipFile, tarfile.TarError) as exc:
            print(f"skipped {label}: {exc}", file=sys.stderr)
            if named is not None:
                failures.append(f"{label}: {exc}")
            continue
        paths = [root / only[name]] if name in only else [root / p for p in CHECKED.get(name, ("",))]
        results.append(run_package(label, root, paths, args.python, args.jobs))
    if args.jax_git_dir:
        commit, root = export_jax(args.jax_git_dir, args.cache)
        results.append(run_package(f"jax@{commit[:10]}", root, [root / p for p in JAX_CHECKED], args.python, args.jobs))
    print("| package | files | findings | unexpected | CPU s | peak MiB | wall s |")
    print("|---|---|---|---|---|---|---|")
    for result in results:
        unexpected = [f for f in result["findings"] if not f["expected"]]
        print(f"| {result['package']} | {result['files']:,} | {len(result['findings'])} | {len(unexpected)} "
              f"| {result['cpu_s']:.1f} | {result['peak_mib']:.0f} | {result['wall_s']:.1f} |")
        for finding in result["findings"]:
            why = f"  (expected: {finding['expected']})" if finding["expected"] else ""
            print(f"    {finding['path']}:{finding['line']}: {finding['code']} {finding['message'][:100]}{why}")
            if not finding["expected"]:
                failures.append(f"{result['package']} {finding['path']}:{finding['line']} {finding['code']}")
    for result in results:  # an expected finding gone is a rule that stopped seeing a real bug
        if result["package"].split("==")[0] in only:
            continue
        found = {(f["path"], f["line"], f["code"]) for f in result["findings"]}
        for package, path, line, code in EXPECTED:
            if package == result["package"].split("==")[0] and (path, line, code) not in found:
                failures.append(f"{result['package']} {path}:{line} {code}: expected, not reported")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "failures": failures}, indent=2) + "\n")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
