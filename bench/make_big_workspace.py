"""Build the big-workspace case: a small kernel file named `example.py` among thousands of unrelated modules.

The unrelated modules are copies of installed Python files (the interpreter's standard library and
the dev and jax environments' site-packages: real code, nothing committed), placed under `vendor/` the way
a project vendors libraries, with a pyproject.toml at the top (the workspace root) (the VS Code extension's bundled libraries are such a tree). Files that
mention Pallas are left out, so nothing in `vendor/` can matter to the kernel file. The kernel file is
`examples/kernels/pal001_global_buffer.py` (one PAL001 finding), named `example.py`: a module name
that many vendored files mention.

    .venvs/dev/bin/python bench/make_big_workspace.py [--files 6000] [--out DIR]

Prints the kernel file's path. Deterministic: the same installed files give the same tree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_OUT = BENCH / ".generated" / "big_workspace"
KERNEL = REPO / "examples" / "kernels" / "pal001_global_buffer.py"


def library_files(limit: int):
    """(source, relative destination) of installed `.py` files that never mention Pallas, in a stable order."""
    trees = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"]),
             *sorted((REPO / ".venvs" / "jax" / "lib").glob("python3*/site-packages"))]
    count = 0
    for index, tree in enumerate(trees):
        for folder, dirs, files in os.walk(tree):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "site-packages") and not d.startswith("."))
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                source = Path(folder) / name
                try:
                    data = source.read_bytes()
                except OSError:
                    continue
                if b"pallas" in data or b"get_global" in data:
                    continue
                yield source, Path(f"lib{index}") / source.relative_to(tree)
                count += 1
                if count >= limit:
                    return


def write(files: int = 6000, out: Path = DEFAULT_OUT) -> Path:
    """The tree at `out` (rebuilt when the file count differs); returns the kernel file."""
    out = Path(out)
    marker = out / ".files"
    if not (marker.exists() and marker.read_text() == str(files)):
        shutil.rmtree(out, ignore_errors=True)
        vendor = out / "vendor"
        for source, relative in library_files(files):
            target = vendor / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        (out / "pyproject.toml").write_text('[project]\nname = "big-workspace"\nversion = "0"\n')
        marker.write_text(str(files))
    kernel = out / "example.py"
    shutil.copyfile(KERNEL, kernel)
    return kernel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    print(write(args.files, Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
