"""Agreement with JAX on the kernels written apart from the tool (bench/apart/).

    .venvs/dev/bin/python bench/apart_agreement.py [--trace] [--jax-from bench/apart/JAX_VERDICTS.json]
        [--json OUT]

Runs `pallas-lsp check --format json --python .venvs/jax/bin/python bench/apart` (with `--trace`: the
same with `check --trace`, which also runs the files' `__main__` blocks with every launch lowered by JAX)
and JAX's own verdict on every `bench/apart/*.py` (`tests/jax_truth.py`, or a saved run with
`--jax-from`), and prints, per file and in total:

* agree: JAX rejects the file and the tool has a finding for it, or JAX accepts it and the tool has none;
* false alarm: a finding on a file JAX accepts (the worst kind of disagreement);
* miss: JAX rejects the file and the tool has no finding for it;
* right line: of the files both reject, those where a finding is on a line JAX blames (the offending
  `get_global`, signal, `.start()`, launch, ...).

A finding counts for a file when it is in the file, or in a helper module (`bench/apart/apart_helpers/`)
on a line JAX blames for that file. A helper finding on no line JAX blames for any file is a false alarm
of its own ("helpers" row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APART = REPO / "bench" / "apart"
JAX_PY = REPO / ".venvs" / "jax" / "bin" / "python"


def _rel(path: str) -> str:
    return os.path.relpath(os.path.realpath(os.path.join(REPO, path)), REPO)


def jax_verdicts(files: list[str], saved: str | None) -> dict:
    if saved:
        raw = json.loads(Path(saved).read_text())
    else:
        out = subprocess.run([str(JAX_PY), "tests/jax_truth.py", *files, "--relative"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
        raw = json.loads(out)
    return {_rel(p): r for p, r in raw.items()}


def findings(trace: bool) -> list[dict]:
    cmd = [sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", str(JAX_PY),
           *(["--trace"] if trace else []), "bench/apart"]
    env = dict(os.environ, PYTHONPATH=str(REPO / "server"))
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return [dict(f, path=_rel(f["path"])) for f in json.loads(proc.stdout)]


def compare(verdicts: dict, found: list[dict]) -> tuple[list[dict], list[dict]]:
    """Per file: its verdicts and the findings that count for it; then helper findings blamed by no file."""
    blamed = {(loc["path"], loc["line"]) for r in verdicts.values() for loc in r["locations"]}
    rows = []
    for path, r in sorted(verdicts.items()):
        places = {(loc["path"], loc["line"]) for loc in r["locations"]}
        mine = [f for f in found if f["path"] == path or (f["path"], f["line"]) in places]
        kind = ("agree" if bool(mine) != r["ok"] else "false alarm" if r["ok"] else "miss")
        right = (not r["ok"]) and bool(mine) and any((f["path"], f["line"]) in places for f in mine)
        rows.append({"file": path, "jax_ok": r["ok"], "jax_message": r["message"], "mode": r["mode"],
                     "jax_lines": sorted(f"{p}:{n}" for p, n in places), "kind": kind, "right_line": right,
                     "findings": [f"{f['path']}:{f['line']} {f['code']}" for f in mine]})
    helpers = [f for f in found if f["path"] not in verdicts and (f["path"], f["line"]) not in blamed]
    return rows, helpers


def summary(rows: list[dict], helpers: list[dict]) -> dict:
    both_reject = [r for r in rows if r["kind"] == "agree" and not r["jax_ok"]]
    return {"files": len(rows), "jax_rejects": sum(not r["jax_ok"] for r in rows),
            "agree": sum(r["kind"] == "agree" for r in rows),
            "false_alarms": sum(r["kind"] == "false alarm" for r in rows) + len(helpers),
            "misses": sum(r["kind"] == "miss" for r in rows),
            "both_reject": len(both_reject), "right_line": sum(r["right_line"] for r in both_reject)}


def report(label: str, rows: list[dict], helpers: list[dict]) -> str:
    s = summary(rows, helpers)
    pct = 100 * s["agree"] / s["files"] if s["files"] else 0.0
    out = [f"## {label}",
           f"files {s['files']} (JAX rejects {s['jax_rejects']}): agree {s['agree']} ({pct:.1f} %), "
           f"false alarms {s['false_alarms']}, misses {s['misses']}, right line {s['right_line']}/{s['both_reject']}"]
    for r in rows:
        if r["kind"] != "agree" or (not r["jax_ok"] and not r["right_line"]):
            what = r["kind"] if r["kind"] != "agree" else "wrong line"
            out.append(f"  {what}: {r['file']} ({r['mode']}); JAX: "
                       f"{'ok' if r['jax_ok'] else r['jax_message'][:80]} at {', '.join(r['jax_lines']) or '-'}; "
                       f"tool: {', '.join(r['findings']) or '-'}")
    for f in helpers:
        out.append(f"  false alarm (helper): {f['path']}:{f['line']} {f['code']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", action="store_true", help="also measure `check --trace`")
    ap.add_argument("--jax-from", help="JAX's verdicts from a saved tests/jax_truth.py --relative run")
    ap.add_argument("--json", help="write the per-file records here")
    args = ap.parse_args(argv)
    files = sorted(os.path.relpath(p, REPO) for p in APART.glob("*.py"))
    verdicts = jax_verdicts(files, args.jax_from)
    record = {}
    for label, trace in [("check", False), *([("check --trace", True)] if args.trace else [])]:
        rows, helpers = compare(verdicts, findings(trace))
        print(report(label, rows, helpers))
        record[label] = {"summary": summary(rows, helpers), "files": rows,
                         "helper_false_alarms": [f"{f['path']}:{f['line']} {f['code']}" for f in helpers]}
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
