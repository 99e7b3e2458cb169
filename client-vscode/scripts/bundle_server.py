"""Bundles the pallas-lsp server and its libraries into bundled/libs for the extension. The rule
pages come inside the server's wheel (pallas_lsp/rule_docs, see setup.py), as for pip users.

The user's own interpreter runs the server (so it analyses and traces the environment their code
runs in), and may be any CPython from 3.10 on. pygls, lsprotocol and jedi are pure Python, but
libcst has a compiled parser built per Python version, so each supported version gets its own
resolved install; what is byte-identical across all of them goes to libs/common, the rest to
libs/cp3XX. bundled/tool/launch_server.py puts the right two folders on sys.path.

Idempotent: skipped when the server sources and this script are unchanged since the last run.
Run with any Python >= 3.10 that has pip:  python scripts/bundle_server.py
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
REPO = EXTENSION.parent
LIBS = EXTENSION / "bundled" / "libs"
STAMP = LIBS / ".bundle-stamp"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


def source_fingerprint() -> str:
    digest = hashlib.sha256()
    paths = [REPO / "pyproject.toml", REPO / "setup.py", REPO / "MANIFEST.in", Path(__file__).resolve()]
    paths += sorted(p for p in (REPO / "server").rglob("*") if p.is_file() and "__pycache__" not in p.parts
                    and not any(part.endswith(".egg-info") for part in p.parts))  # the wheel build writes it
    paths += sorted((REPO / "docs" / "rules").glob("*.md"))
    for path in paths:
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    digest.update(platform.machine().encode())
    return digest.hexdigest()


def tree_digest(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(path.read_bytes())
        return digest.hexdigest()
    for item in sorted(path.rglob("*")):
        if item.is_file() and "__pycache__" not in item.parts:
            digest.update(str(item.relative_to(path)).encode())
            digest.update(item.read_bytes())
    return digest.hexdigest()


def pip(*args: str) -> None:
    """pip's chatter (warnings about this machine's index settings) is shown only when it fails."""
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"bundle-server: pip {' '.join(args[:2])} failed (exit {done.returncode})")


def install_marker_dependencies(target: Path, version: str, platforms: list[str]) -> None:
    """pip resolves environment markers against the Python running it, not --python-version:
    dependencies that only older Pythons need (tomli, exceptiongroup on 3.10) are added here."""
    from pip._vendor.packaging.markers import default_environment
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

    environment = {**default_environment(), "python_version": version, "python_full_version": version + ".0"}
    tag = "cp" + version.replace(".", "")
    while True:
        installed, wanted = set(), []
        for metadata in target.glob("*.dist-info/METADATA"):
            requires = []
            for line in metadata.read_text(encoding="utf-8").splitlines():
                if line.startswith("Name:"):
                    installed.add(canonicalize_name(line.split(":", 1)[1].strip()))
                elif line.startswith("Requires-Dist:"):
                    requires.append(Requirement(line.split(":", 1)[1].strip()))
                elif not line.strip():
                    break
            for req in requires:
                if req.marker is not None and "extra" not in str(req.marker) and req.marker.evaluate(environment):
                    wanted.append(req)
        missing = [str(r).split(";")[0] for r in wanted if canonicalize_name(r.name) not in installed]
        if not missing:
            return
        pip("install", "--quiet", "--no-compile", "--no-deps", "--target", str(target), "--only-binary=:all:",
            "--python-version", version, "--implementation", "cp", "--abi", tag, "--abi", "abi3", "--abi", "none",
            *[arg for p in platforms for arg in ("--platform", p)], *missing)


def prune(folder: Path) -> None:
    """Test suites of the bundled libraries are dead weight in the extension."""
    for tests in sorted(folder.rglob("tests"), reverse=True):
        if tests.is_dir() and tests.parent.name != "typeshed":
            shutil.rmtree(tests)


def main() -> int:
    fingerprint = source_fingerprint()
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        print(f"bundle-server: {LIBS.relative_to(REPO)} is up to date")
        return 0
    machine = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[platform.machine().lower()]
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in (28, 17)] + [f"manylinux2014_{machine}", f"linux_{machine}"]
    with tempfile.TemporaryDirectory(prefix="pallas-bundle-") as tmp:
        work = Path(tmp)
        pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(work / "wheel"), str(REPO))
        wheel = next((work / "wheel").glob("pallas_lsp-*.whl"))
        for version in PYTHONS:
            tag = "cp" + version.replace(".", "")
            pip("install", "--quiet", "--no-compile", "--target", str(work / tag), "--only-binary=:all:",
                "--python-version", version, "--implementation", "cp", "--abi", tag, "--abi", "abi3", "--abi", "none",
                *[arg for p in platforms for arg in ("--platform", p)], str(wheel))
            install_marker_dependencies(work / tag, version, platforms)
        tags = ["cp" + v.replace(".", "") for v in PYTHONS]
        if LIBS.exists():
            shutil.rmtree(LIBS)
        (LIBS / "common").mkdir(parents=True)
        names = set().union(*({p.name for p in (work / t).iterdir()} for t in tags))
        for name in sorted(names - {"bin", "__pycache__"}):
            digests = {tree_digest(work / t / name) if (work / t / name).exists() else None for t in tags}
            if len(digests) == 1 and None not in digests:
                shutil.move(str(work / tags[0] / name), LIBS / "common" / name)
            else:
                for t in tags:
                    if (work / t / name).exists():
                        (LIBS / t).mkdir(exist_ok=True)
                        shutil.move(str(work / t / name), LIBS / t / name)
        prune(LIBS)
        for t in tags:  # every supported version gets its folder, even with nothing version-specific
            (LIBS / t).mkdir(exist_ok=True)
    STAMP.write_text(fingerprint)
    size = sum(f.stat().st_size for f in LIBS.rglob("*") if f.is_file())
    print(f"bundle-server: {LIBS.relative_to(REPO)} ready ({size / 1e6:.1f} MB; Pythons {', '.join(PYTHONS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
