"""Fixes verified by JAX: a fix on a kernel an entry point reached is applied in memory and that
entry point's launches run again, in the contained trace process, on the fixed text; the fix is
"accepted" only if JAX lowers them all (no new error, and the error the fix is for is gone).

The static checks (fixes/verify.py) say a fix makes the rules' view better; this says JAX agrees.
Pure data in and out (no LSP types): the server (lsp/code_actions.py) titles an accepted fix
"verified by JAX" and leaves out a rejected one, `check --trace --fix` applies no rejected one.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass

from ..analysis.findings import Finding, Fix
from ..fixes.edits import apply_edits
from .entry_points import EntryPoint, EntryRun, run_entry_points
from .jax_findings import _launch_lines, _Sources

VERIFIED = " (verified by JAX)"
_KEPT = 128
_verdicts: "OrderedDict[tuple, FixVerdict]" = OrderedDict()


@dataclass(frozen=True)
class FixVerdict:
    """`verdict`: "accepted" (JAX lowered every launch the entry points reached in the fixed code),
    "rejected" (`reason`: JAX's error, or what the entry did instead of reaching its launches),
    "unjudged" (`reason`: why JAX could not say: no launch reached, not lowerable on this machine)."""

    verdict: str
    reason: str | None = None
    entries: tuple[str, ...] = ()


def reaching_entries(run: EntryRun, paths: set[str]) -> list[EntryPoint]:
    """The entry points that reached a launch whose body, or where it was built or launched, is in one
    of `paths` (real paths): those a fix of these files can change."""
    found: dict[str, EntryPoint] = {}
    for result, record in run.launches():
        for key in ("body", "built", "launch"):
            where = record.get(key) or {}
            if where.get("path") and os.path.realpath(where["path"]) in paths:
                found.setdefault(result.entry.id, result.entry)
    return list(found.values())


def fixed_texts(fix: Fix, text_of) -> dict[str, str] | None:
    """The texts of the files `fix` edits once applied (`text_of(path)`: a file's text now), or None
    if its edits do not apply."""
    texts = {}
    for path in {edit.path for edit in fix.edits}:
        try:
            texts[path] = apply_edits(text_of(path), [e for e in fix.edits if e.path == path])
        except (OSError, ValueError):
            return None
    return texts


def judge_fix(pool, python: str, run: EntryRun, finding: Finding, fix: Fix, text_of=None, *,
              fixed: dict[str, str] | None = None, others: dict[str, str] | None = None,
              bare_platform: str = "cuda", entry_timeout: float = 60.0, on_worker=None) -> FixVerdict | None:
    """JAX's verdict on `fix` of `finding`, or None where no entry point of `run` reached a launch in
    the files it touches (nothing to verify). The fixed texts are `fixed`, else the fix applied to
    `text_of(path)`; `others`: texts of files changed before (fix-all's earlier fixes) that stand in
    for the disk too. Blocks; cached by the texts judged."""
    if fix.kind != "rewrite":
        return None
    touched = {os.path.realpath(finding.path), *(os.path.realpath(e.path) for e in fix.edits)}
    entries = reaching_entries(run, touched)
    if not entries:
        return None
    texts = fixed if fixed is not None else fixed_texts(fix, text_of)
    if texts is None:
        return FixVerdict("rejected", "its edits do not apply to the file as it is")
    texts = {**(others or {}), **texts}
    key = (python, run.root, bare_platform, tuple(e.id for e in entries), _digest(texts),
           tuple(sorted(_tolerated(run, finding))))
    if key in _verdicts:
        _verdicts.move_to_end(key)
        return _verdicts[key]
    again = run_entry_points(pool, python, run.root, [], entries=entries, texts=texts, bare_platform=bare_platform,
                             entry_timeout=entry_timeout, on_worker=on_worker)
    verdict = _verdict(run, again, finding, entries)
    if not again.problems:  # a dead worker or a cancel says nothing of the fix: asked again next time
        _verdicts[key] = verdict
        while len(_verdicts) > _KEPT:
            _verdicts.popitem(last=False)
    return verdict


def _verdict(before: EntryRun, after: EntryRun, finding: Finding, entries: list[EntryPoint]) -> FixVerdict:
    ids = tuple(e.id for e in entries)
    if after.problems:
        return FixVerdict("unjudged", after.problems[0], ids)
    tolerated = _tolerated(before, finding)
    reached_before = {r.entry.id for r, _ in before.launches()}
    ok = False
    for result in after.results:
        for record in result.launches:
            error = record.get("error") or {}
            if record.get("verdict") == "rejected" and not record.get("expected"):
                if (error.get("type"), error.get("message")) not in tolerated:
                    return FixVerdict("rejected", f"{error.get('type')}: {error.get('message')}", ids)
            elif record.get("verdict") == "ok":
                ok = True
        if not result.launches and result.entry.id in reached_before and result.outcome in (
                "error", "jax_error", "crashed", "exit", "timeout", "untraceable", "output", "forked"):
            what = f"{result.type}: {result.message}" if result.type else result.message or result.outcome
            return FixVerdict("rejected", f"{result.entry.id} no longer reaches its launches ({what})", ids)
    if ok:
        return FixVerdict("accepted", None, ids)
    return FixVerdict("unjudged", "no launch JAX could lower was reached", ids)


def _tolerated(run: EntryRun, finding: Finding) -> set[tuple]:
    """JAX's errors on launches the finding is not on: they stay after its fix, and say nothing of it."""
    sources = _Sources()
    line = (os.path.realpath(finding.path), finding.span.line + 1)
    errors = set()
    for _, record in run.launches():
        error = record.get("error") or {}
        if record.get("verdict") == "rejected" and line not in _launch_lines(record, sources):
            errors.add((error.get("type"), error.get("message")))
    return errors


def _digest(texts: dict[str, str]) -> str:
    hashed = hashlib.blake2b(digest_size=16)
    for path in sorted(texts):
        hashed.update(os.path.realpath(path).encode("utf-8", "surrogatepass") + b"\0")
        hashed.update(texts[path].encode("utf-8", "surrogatepass") + b"\0")
    return hashed.hexdigest()
