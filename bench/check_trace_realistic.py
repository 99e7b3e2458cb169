"""`check --trace` on kernel files that launch their kernels from their own `__main__` block: how often
JAX's verdict is obtained, how many false alarms remain, how often the finding is on JAX's line.

The files: every agreement fixture (`tests/fixtures/agreement/*.py`, ground truth `EXPECTED_JAX.json`:
JAX 0.12's verdict on each, and the line its error points at) given a `__main__` block that launches
what its `target()` returns with zeros of its argument shapes (under `jax.jit`, as the ground truth
lowers it; called as is in interpret mode), except those whose operands are semaphores or barriers
(no host array has that type: counted apart), and the hand-written files of
`bench/trace_corpus/` (config dataclasses, kernel classes, factories, helper modules, tuning
tables), each with its ground truth in `TRUTH` (checked with JAX: `.venvs/jax/bin/python FILE`).
GPU and interpret kernels are checked in one folder, TPU ones in another whose pyproject says
`platform = "tpu"` (where a bare `pallas_call` runs), as a project would.

What is measured is what `check --trace` does (the same calls: the rules, `run_entry_points`, `merge`):
- verdict obtained: the file's `__main__` reached a launch JAX lowered or rejected, or JAX raised in the
  code around the kernels (`jax_error`), or it ran to its end under JAX;
- false alarm: an error finding (the rules' or JAX's) in a file JAX accepts;
- right line: a file JAX rejects has an error finding on the line JAX's error points at.

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/check_trace_realistic.py [--only NAME...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "server"))

from lsp_client import JAX_PYTHON, emit, machine  # noqa: E402

AGREEMENT = REPO / "tests" / "fixtures" / "agreement"
CORPUS = HERE / "trace_corpus"
MAIN = '''

if __name__ == "__main__":
    import jax as _jax
    import numpy as _np

    _fn, _args, _mode = target()
    if any(type(_a).__name__ == "ShapeDtypeStruct" and not isinstance(_a.dtype, _np.dtype) for _a in _args):
        raise SystemExit(NO_HOST_ARRAYS)
    _args = [_jax.numpy.zeros(_a.shape, _a.dtype) if type(_a).__name__ == "ShapeDtypeStruct" else _a for _a in _args]
    (_fn if _mode == "interpret" else _jax.jit(_fn))(*_args)
'''.replace("NO_HOST_ARRAYS", repr("no host arrays for these operands (semaphores, barriers)"))
# bench/trace_corpus/NAME.py -> None (JAX accepts every launch) or the 1-based line JAX's error points at.
TRUTH_FILE = CORPUS / "TRUTH.json"


def gather(work: Path, only: list[str]) -> dict[str, dict]:
    """Copy the files into work/gpu and work/tpu; {copied path: {"ok", "line", "name"}}."""
    expected = json.loads((AGREEMENT / "EXPECTED_JAX.json").read_text())
    files: dict[str, dict] = {}
    for group in ("gpu", "tpu"):
        (work / group).mkdir(parents=True)
        shutil.copytree(AGREEMENT / "pkg_helpers", work / group / "pkg_helpers")
        shutil.copytree(CORPUS / "corpus_helpers", work / group / "corpus_helpers")
    (work / "tpu" / "pyproject.toml").write_text('[tool.pallas-lsp]\nplatform = "tpu"\n')
    for key, truth in sorted(expected.items()):
        source = REPO / key
        if not source.exists() or (only and source.stem not in only):
            continue
        text = source.read_text()
        group = "tpu" if truth.get("mode") in ("tpu", "sparsecore") or "pltpu" in text and "plgpu" not in text else "gpu"
        target = work / group / source.name
        target.write_text(text + MAIN)
        own = [loc for loc in truth.get("locations") or [] if os.path.basename(loc["path"]) == source.name]
        files[str(target)] = {"name": key, "ok": bool(truth["ok"]), "line": own[0]["line"] if own else None,
                              "kind": "agreement fixture"}
    for name, line in json.loads(TRUTH_FILE.read_text()).items():
        if only and Path(name).stem not in only:
            continue
        text = (CORPUS / name).read_text()
        group = "tpu" if "pltpu" in text and "plgpu" not in text else "gpu"
        target = work / group / name
        target.write_text(text)
        files[str(target)] = {"name": f"bench/trace_corpus/{name}", "ok": line is None, "line": line,
                              "kind": "hand-written"}
    return files


def check_trace(folder: Path, pool) -> tuple[list, object]:
    """What `check --trace FOLDER` reports: the rules' findings merged with JAX's, and the run."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.analysis.exclusions import Exclusions
    from pallas_lsp.check_jobs import analyze_files
    from pallas_lsp.engine import load_settings, selected_codes
    from pallas_lsp.trace.entry_points import run_entry_points
    from pallas_lsp.trace.jax_findings import merge

    settings = load_settings(str(folder), {})
    root = str(folder)
    project = Project(root=root, python=JAX_PYTHON, platform=settings.platform, exclusions=Exclusions.for_folder(root, {}))
    files = sorted(str(p) for p in folder.glob("*.py"))
    codes = selected_codes(settings.select, settings.ignore)
    findings = [f for found, _ in analyze_files(project, files, codes, 1) for f in found]
    run = run_entry_points(pool, JAX_PYTHON, root, files, bare_platform="tpu" if settings.platform == "tpu" else "cuda",
                           relevant=lambda path, text: project.can_matter(path, text))
    merged, _ = merge(findings, run)
    return merged, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--json")
    args = parser.parse_args()
    from pallas_lsp.trace.worker import WorkerPool

    work = Path(tempfile.mkdtemp(prefix="pallas-trace-realistic-"))
    files = gather(work, args.only)
    pool = WorkerPool()
    rows, excluded = {}, []
    try:
        for group in ("gpu", "tpu"):
            findings, run = check_trace(work / group, pool)
            for path, truth in files.items():
                if Path(path).parent.name != group:
                    continue
                real = os.path.realpath(path)
                launches = [record for result, record in run.launches() if os.path.realpath(result.entry.path) == real]
                outcomes = [r.outcome + (f" ({r.type}: {r.message})" if r.outcome not in ("ok", "rejected") else "")
                            for r in run.results if os.path.realpath(r.entry.path) == real]
                errors = [f for f in findings if os.path.realpath(f.path) == real and f.severity == "error"]
                if any("no host arrays" in outcome for outcome in outcomes):
                    excluded.append(truth["name"])
                    continue
                verdict = any(record.get("verdict") in ("ok", "rejected") for record in launches) or \
                    any(outcome.startswith(("jax_error", "ok")) for outcome in outcomes)
                rows[truth["name"]] = {
                    "kind": truth["kind"], "jax_ok": truth["ok"], "jax_line": truth["line"], "verdict": verdict,
                    "outcomes": outcomes, "verdicts": [record.get("verdict") for record in launches],
                    "errors": [(f.code, f.span.line + 1) for f in errors],
                    "jax_error_lines": sorted({loc["line"] for record in launches for loc in
                                               (record.get("error") or {}).get("locations") or []
                                               if os.path.realpath(loc.get("path") or "") == real}),
                    "false_alarm": truth["ok"] and bool(errors),
                    "right_line": None if truth["ok"] or truth["line"] is None else
                    any(f.span.line + 1 == truth["line"] for f in errors)}
    finally:
        pool.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    total = len(rows)
    rejected = [r for r in rows.values() if r["right_line"] is not None]
    result = {"machine": machine(), "files": total, "excluded": excluded,
              "verdict_obtained": sum(r["verdict"] for r in rows.values()),
              "false_alarms": sum(r["false_alarm"] for r in rows.values()),
              "rejected_with_a_line": len(rejected),
              "right_line": sum(r["right_line"] for r in rejected),
              "misses": {name: r for name, r in rows.items()
                         if not r["verdict"] or r["false_alarm"] or r["right_line"] is False}}
    result["verdict_obtained_percent"] = round(100 * result["verdict_obtained"] / max(total, 1), 1)
    result["right_line_percent"] = round(100 * result["right_line"] / max(len(rejected), 1), 1)
    emit(result, args.json)


if __name__ == "__main__":
    main()
