"""Fix-all: apply every fix that may be applied without asking, re-analysing after each one.

Fixes of one file overlap (two buffers of one kernel both edit its parameters and its launch),
so they are applied one at a time, each built (and verified) on the text the previous one left.
A finding without a fix that may be applied is not tried again until a fix changes the text.
`# noqa` fixes are never applied here. A display-only fix changes what a kernel JAX accepts does, so it is
left, except with `--unsafe-fixes` in a kernel that this fix-all already rewrites for another finding: JAX
rejected that kernel, it is not left as it was anyway, and the author pressing "Fix" expects it to come out
doing what its source says (PAL009: after its DMA semaphore became REGULAR, a TPU kernel whose wait still
ignored `decrement=False` would hang on the count the wait consumed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..engine import analyze
from ..analysis.findings import Finding, Fix
from ..analysis.notebooks import is_notebook
from ..source_text import encode_source, read_regular_bytes
from . import fixes_for
from .edits import apply_edits, parses

MAX_ROUNDS = 100


@dataclass
class FixAllResult:
    texts: dict[str, str] = field(default_factory=dict)  # path -> new text, for every file changed
    originals: dict[str, str] = field(default_factory=dict)  # path -> the text its fixes were computed from
    applied: list[Fix] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # the finding each applied fix was for
    notebooks: dict = field(default_factory=dict)  # path -> the fixed `Notebook`, for every notebook changed


def applicable(fixes, unsafe: bool) -> Fix | None:
    """The rewrite fix-all applies from a finding's fixes: preferred first, safe before unsafe."""
    candidates = [f for f in fixes if f.kind == "rewrite" and f.automatic and (f.safe or unsafe)]
    candidates.sort(key=lambda f: (not f.preferred, not f.safe))
    return candidates[0] if candidates else None


def kernels_of(finding: Finding) -> frozenset:
    """The kernels a finding is about, as (module, body function, launch API): what stays the same while the
    fixes before it edit the text. Empty where the finding does not say."""
    facts = finding.facts or {}
    kernels = list(facts.get("kernels") or ()) or [facts.get("kernel")]
    keys = set()
    for kernel in kernels:
        entry = getattr(kernel, "entry", None) or (facts.get("entry") if len(kernels) == 1 else None)
        body = getattr(entry, "body", None)
        if body is None or not hasattr(body.node, "name"):
            return frozenset()
        keys.add((os.path.abspath(entry.model.path), body.node.name, entry.api))
    return frozenset(keys)


def choose(project, text: str, findings, unsafe: bool, skipped: set,
           rewritten: frozenset = frozenset()) -> tuple[object, Fix] | None:
    """The first finding with a fix fix-all applies, and that fix. `rewritten`: the kernels (`kernels_of`)
    that fixes of other findings already changed, where an unsafe fix-all also applies a display-only fix."""
    for finding in findings:
        key = (finding.code, finding.message, finding.span)
        if key in skipped:
            continue
        fixes = fixes_for(project, finding, text)
        chosen = applicable(fixes, unsafe)
        if chosen is None and unsafe and rewritten and kernels_of(finding) and kernels_of(finding) <= rewritten:
            chosen = next((f for f in fixes if f.kind == "rewrite" and not f.automatic), None)
        if chosen is not None:
            return finding, chosen
        skipped.add(key)
    return None


def fix_all(project, path: str, text: str | None = None, codes: set[str] | None = None,
            unsafe: bool = False, accept=None) -> FixAllResult:
    """New texts for `path` (and any file its fixes reach), leaving `project` overlays as it found them.
    `accept(finding, fix, texts)`, where given, has the last word on each fix (`texts`: every file it
    and the fixes before it changed, as they would be): JAX's, with `check --trace --fix`."""
    result = FixAllResult()
    original = {path: text if text is not None else project.text(path)}
    current = dict(original)
    skipped: set = set()
    rewritten: set = set()  # the kernels (kernels_of) that applied fixes changed
    touched: dict[str, str | None] = {}  # other files given new text -> their overlay before
    notebooks: dict = {}  # notebook path -> its notebook as the fixes so far left it
    editor_notebooks = dict(project.notebooks)  # put back after: the fixes' notebooks stand in meanwhile
    # A fix rewrites signatures and launches across a class: each round's text is parsed whole, as a
    # patched model kept answers about the last round's (a second scratch fix in a kernel class was lost).
    patching, project.patch_edits = project.patch_edits, False
    try:
        for _ in range(MAX_ROUNDS):
            findings = analyze(project, path, current[path], codes=codes)
            chosen = choose(project, current[path], findings, unsafe, skipped, frozenset(rewritten))
            if chosen is None:
                break
            finding, fix = chosen
            skipped.add((finding.code, finding.message, finding.span))
            updated: dict[str, str] = {}
            fixed_notebooks: dict = {}
            for edit_path in {e.path for e in fix.edits}:
                before = current.get(edit_path)
                if before is None:
                    before = original[edit_path] = project.text(edit_path)
                edits = [e for e in fix.edits if e.path == edit_path]
                notebook = (notebooks.get(edit_path) or project.notebook_of(edit_path)) if is_notebook(edit_path) else None
                if notebook is not None:  # made in its cells; a fix that spans cells is not applied
                    fixed_notebooks[edit_path] = notebook.edited(edits)
                    if fixed_notebooks[edit_path] is None:
                        break
                    updated[edit_path] = fixed_notebooks[edit_path].module
                else:
                    updated[edit_path] = apply_edits(before, edits)
            if len(updated) < len({e.path for e in fix.edits}) or not all(parses(t) for t in updated.values()):
                continue
            if accept is not None and not accept(finding, fix, {**{p: t for p, t in current.items() if t != original[p]},
                                                                **updated}):
                continue
            notebooks.update(fixed_notebooks)
            project.notebooks.update(fixed_notebooks)  # the next fixes are built (and offered) on them
            for edit_path, new_text in updated.items():
                current[edit_path] = new_text
                if edit_path != path or edit_path not in fixed_notebooks:
                    # The file's own new text too: another module's analysis (an importer's search, a fix's
                    # check) reads it from the project, and would otherwise see, and cache, the old one.
                    touched.setdefault(edit_path, project.overlay.get(os.path.abspath(edit_path)))
                    project.set_text(edit_path, new_text)
            result.applied.append(fix)
            result.findings.append(finding)
            rewritten |= kernels_of(finding)
            # The text changed: a finding that had no applicable fix may have one now (a barrier's scratch
            # fix once "Run the kernel compiled" made its kernel compiled).
            skipped.clear()
    finally:
        for other, overlay in touched.items():
            project.set_text(other, overlay)
        project.notebooks.clear()
        project.notebooks.update(editor_notebooks)
        project.patch_edits = patching
    result.texts = {p: t for p, t in current.items() if t != original.get(p)}
    result.originals = {p: original[p] for p in result.texts}
    result.notebooks = {p: notebooks[p] for p in result.texts if p in notebooks}
    return result


def fix_files(project, files: list[str], codes: set[str] | None = None, unsafe: bool = False,
              applied: list | None = None, chosen: list | None = None,
              accept=None) -> tuple[dict[str, tuple[str, str]], int]:
    """Fix-all over many files, each seeing the others' fixes: ({path: (old, new)}, fixes applied).
    `applied` gets the fixes, `chosen` (finding, fix) pairs: which files must be written together;
    `accept`: as fix_all's.

    New texts are left in `project` as unsaved overlays; the caller writes them or prints a diff.
    `old` is the text the fixes were computed from (not the file as it is now: it may have been
    edited meanwhile, and the writer must notice that). For a notebook, both are its JSON text:
    only the sources of the cells fixed differ.
    """
    changed: dict[str, tuple[str, str]] = {}
    count = 0
    notebook_texts: dict[str, str] = {}  # notebook -> its JSON text before any fix
    for path in files:
        path = os.path.abspath(path)
        try:
            text = project.text(path)
        except OSError:
            continue  # unreadable or too large: the check that follows says so
        result = fix_all(project, path, text, codes, unsafe, accept)
        count += len(result.applied)
        if applied is not None:  # the fixes themselves, for who wants to know which were unsafe
            applied.extend(result.applied)
        if chosen is not None:
            chosen.extend(zip(result.findings, result.applied))
        for fixed_path, new_text in result.texts.items():
            old = changed[fixed_path][0] if fixed_path in changed else result.originals[fixed_path]
            changed[fixed_path] = (old, new_text)
            notebook = result.notebooks.get(fixed_path)
            if notebook is not None:
                notebook_texts.setdefault(fixed_path, project.notebook(fixed_path).json_text())
                project.set_notebook(fixed_path, notebook)
            else:
                project.set_text(fixed_path, new_text)
    for path, old in notebook_texts.items():
        changed[path] = (old, project.notebook(path).json_text())
    return changed, count


def without_fix(project, findings: list[Finding], unsafe: bool) -> tuple[int, int]:
    """(findings with no automatic fix, findings whose only fixes are unsafe ones not applied)."""
    none = unsafe_only = 0
    for finding in findings:
        fixes = [f for f in fixes_for(project, finding) if f.kind == "rewrite" and f.automatic]
        if not fixes:
            none += 1
        elif not unsafe and not any(f.safe for f in fixes):
            unsafe_only += 1
    return none, unsafe_only


def unified_diff(changed: dict[str, tuple[str, str]]) -> bytes:
    """The changes as a patch that `git apply` and `patch -p1` take: lines as they count them (ended
    by `\\n` alone, a last line without one marked), names quoted as git quotes them, each file's
    text in its own encoding (BOM, coding cookie), so that applying it gives the fixed bytes."""
    import difflib

    from ..output import diff_label

    chunks = []
    for path, (old, new) in sorted(changed.items()):
        name = os.path.relpath(path).replace(os.sep, "/")
        like = _bytes_of(path)
        chunks.extend(difflib.diff_bytes(difflib.unified_diff, _patch_lines(old, like), _patch_lines(new, like),
                                         diff_label(f"a/{name}").encode(), diff_label(f"b/{name}").encode()))
    return b"".join(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n" for line in chunks)


def _bytes_of(path: str) -> bytes:
    try:
        return read_regular_bytes(path)
    except OSError:
        return b""  # encoded as UTF-8, then


def _patch_lines(text: str, like: bytes) -> list[bytes]:
    data = encode_source(text, like) or text.encode("utf-8", "surrogateescape")
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
