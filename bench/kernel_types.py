"""Kernel parameter types in hovers against JAX's own, over the corpus in tests/fixtures/kernel_types.

JAX's side: `tests/jax_kernel_types.py` (run with the jax environment) traces each file's own
launches (`__main__`, test functions) and records every kernel ref's `str(aval)`. Our side: the
hover on each such parameter, from this checkout's analysis (in this process, jedi against the jax
environment). Reports how many parameters get JAX's exact type, how many have the right memory
space / dtype / shape, and how many are wrong (a part we state that JAX contradicts).

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/kernel_types.py [--json OUT] [--verbose] [--root DIR] [FILE ...]
    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/kernel_types.py --latency 20

`--latency N`: instead, the warm cost of the inlay hints of each corpus file after an edit (a number
in a comment line at the end rewritten: a new text each time, the file's launches and call sites
analysed again), N edits per file after 2 to warm up, in this process; run it with another
checkout's `server/` on PYTHONPATH for a baseline.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from jax_kernel_types import verdict  # noqa: E402
from lsp_client import JAX_PYTHON, emit, machine  # noqa: E402

CORPUS = REPO / "tests" / "fixtures" / "kernel_types"


def jax_types(files: list[str], jax_python: str = JAX_PYTHON) -> dict:
    run = subprocess.run([jax_python, str(REPO / "tests" / "jax_kernel_types.py"), *files],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"tests/jax_kernel_types.py failed: {run.stderr[-3000:]}")
    return json.loads(run.stdout)


def parameter_position(path: str, line: int, name: str) -> tuple[int, int]:
    """0-based (line, column) of parameter `name` of the function whose def (or first decorator) is at `line`."""
    tree = ast.parse(Path(path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                line in (node.lineno, min([node.lineno, *(d.lineno for d in node.decorator_list)])):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg == name:
                    return arg.lineno - 1, arg.col_offset
    raise LookupError(f"no parameter {name} of a function at {path}:{line}")


def compare(files: list[str], jax_python: str = JAX_PYTHON, root: Path = CORPUS) -> list[dict]:
    """One row per kernel parameter JAX traced: JAX's avals, our hover, the verdict."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.analysis.hover import hover_text

    truth = jax_types(files, jax_python)
    if truth["errors"]:
        raise SystemExit(f"JAX could not trace: {truth['errors']}")
    project = Project(root=str(root), python=jax_python)
    rows = []
    for path, functions in sorted(truth["types"].items()):
        text = Path(path).read_text()
        for line, params in sorted(functions.items(), key=lambda item: int(item[0])):
            for name, avals in params.items():
                at = parameter_position(path, int(line), name)
                hover = hover_text(project, path, text, *at)
                rows.append({"file": Path(path).name, "line": at[0] + 1, "param": name, "jax": avals,
                             "hover": hover, **verdict(hover, avals)})
    return rows


def counts(rows: list[dict]) -> dict:
    total = len(rows)
    result = {"parameters": total}
    for key in ("exact", "space", "dtype", "shape", "wrong"):
        result[key] = sum(1 for r in rows if r[key])
    result["exact_share"] = round(result["exact"] / total, 3) if total else None
    return result


def latency(files: list[str], edits: int, jax_python: str = JAX_PYTHON) -> dict:
    import time

    from pallas_lsp.analysis import Project
    from pallas_lsp.analysis.hover import inlay_hints

    sys.path.insert(0, str(REPO / "bench"))
    from lsp_client import summary

    project = Project(root=str(CORPUS), python=jax_python)
    samples = []
    for path in files:
        text = Path(path).read_text()
        for i in range(edits + 2):
            edited = f"{text}# edit {i}\n"
            started = time.perf_counter()
            inlay_hints(project, path, edited, 0, 10_000)
            if i >= 2:
                samples.append(time.perf_counter() - started)
    return summary(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--json")
    parser.add_argument("--verbose", action="store_true", help="print every parameter that is not exact")
    parser.add_argument("--root", type=Path, default=CORPUS, help="the workspace folder (default: the corpus)")
    parser.add_argument("--latency", type=int, metavar="N", help="time inlay hints after N edits per file instead")
    options = parser.parse_args()
    files = options.files or [str(p) for p in sorted(CORPUS.glob("*.py"))]
    if options.latency:
        emit({"machine": machine(), "files": len(files), "inlay_hints_ms": latency(files, options.latency)},
             options.json)
        return
    rows = compare(files, root=options.root)
    if options.verbose:
        for row in rows:
            if not row["exact"]:
                print(f"{row['file']}:{row['line']} {row['param']}: jax {row['jax']} ours {row['head']} "
                      f"{row.get('seen') or ''}{' WRONG' if row['wrong'] else ''}", file=sys.stderr)
    emit({"machine": machine(), "files": len(files), **counts(rows)}, options.json)


if __name__ == "__main__":
    main()
