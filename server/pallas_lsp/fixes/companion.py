"""A fix whose result JAX would still reject for a reason another rule's fix removes, made whole with that fix.

Making a kernel compiled ("Run the kernel compiled"), a TPU or barrier type a REGULAR semaphore, or
moving a get_global into the kernel can give a gridless Mosaic GPU kernel its second global semaphore
(or one in a branch Mosaic GPU lowers twice): verification then refuses the fix ("it would add PAL004").
PAL004's rewrites (a get_global moved out of a cond's branch, a one-block grid, one semaphore array) keep
the meaning of any kernel they apply to. Moving a get_global into an interpreted kernel (PAL008) adds
PAL002, which its own fixes remove (a scratch semaphore, the kernel run compiled). Moving one the body uses
only as a barrier adds PAL006 (at each barrier call), which PAL006's SMEM barrier in scratch_types removes;
moving a buffer's get_global (SMEM, VMEM) from where the kernel is launched into it (PAL008) adds PAL001,
which PAL001's scratch allocation removes. Where the join still adds one other such finding (a barrier moved
into an interpreted kernel: PAL002, then PAL006 once it runs compiled), a fix of that one is joined too
(fixes/__init__.py's _made_whole: two in a row, no more). The first fix of the
added finding that makes the whole verify is applied with the first fix, as one fix (unsafe where either
is), which is verified again like any other. Launching a Triton kernel with plgpu.kernel (PAL003) can
also leave a finding Mosaic GPU has and Triton hid (a global array or barrier type: PAL001, a semaphore
output: PAL008, a barrier: PAL006); its companions include that finding's fixes as offered, themselves
joined to their own companion. PAL006's barrier made a plgpu.kernel's scratch on a Triton launch can
leave its semaphore output (PAL008) the same way, or another get_global of a TPU type or a buffer (PAL001). Passing a TPU DMA semaphore's ref where its value was
read (PAL014) leaves a DMA semaphore signalled (PAL013), which PAL013's REGULAR allocation removes.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace

from ..analysis.findings import Finding, Fix
from ..engine import analyze
from .edits import apply_edits, minimal_edits

# The codes whose fixes may complete a finding's fix, by the finding's code (None: any other finding).
# Launching a Triton kernel with plgpu.kernel (PAL003) can leave a get_global of a barrier or a buffer
# (PAL001), a semaphore output (PAL008) or a semaphore used as a barrier (PAL006) that Mosaic GPU rejects;
# so can PAL006's barrier fix on a Triton launch (PAL008, PAL001). A DMA semaphore's value passed as its ref (PAL014)
# is a DMA semaphore signalled (PAL013), which its REGULAR allocation removes. A buffer's get_global moved into
# the kernel (PAL008) is PAL001's there, which its scratch allocation removes.
COMPANION_CODES = {None: ("PAL004", "PAL002", "PAL006"),
                   "PAL003": ("PAL004", "PAL002", "PAL001", "PAL006", "PAL008"),
                   "PAL006": ("PAL004", "PAL002", "PAL008", "PAL001"),
                   "PAL008": ("PAL004", "PAL002", "PAL006", "PAL001"),
                   "PAL014": ("PAL004", "PAL002", "PAL006", "PAL013")}
# The codes whose fixes' companions are themselves made whole with their own companions (their fixes as offered).
COMPANIONS_MADE_WHOLE = ("PAL003", "PAL006")


def completed(project, baseline, finding: Finding, fix: Fix, code: str) -> list[Fix]:
    """`fix` with each fix of the one `code` finding it would add (made on its result), as one fix each, in
    the order they are offered (not verified here); none where it adds no one such finding (or several of
    one get_global), or that has no fix."""
    from . import _finding_rewrites, _get_global_at, _get_global_rewrites, fixes_for

    paths = list(dict.fromkeys([baseline.path, *(os.path.abspath(e.path) for e in fix.edits)]))
    texts = {path: apply_edits(baseline.text(path), [e for e in fix.edits if os.path.abspath(e.path) == path])
             for path in paths}
    companions = []
    with project.trial(texts):
        for path in paths:
            added = _added(baseline.findings(path), baseline.text(path),
                           [f for f in analyze(project, path, texts[path]) if f.code == code], texts[path], code)
            # PAL006 is reported at each barrier use of one get_global: one finding, one fix.
            asked = [f.facts.get("get_global") for f in added]
            if len(added) == 1 or (added and asked[0] is not None and all(a is asked[0] for a in asked)):
                model = project.model(path, texts[path])
                call = _get_global_at(project, model, added[0])
                companions = (_get_global_rewrites(project, model, call, added[0]) if call is not None
                              else _finding_rewrites(project, model, added[0]))
                if finding.code in COMPANIONS_MADE_WHOLE:  # a companion that is itself made whole with its own
                    titles = {c.title for c in companions}
                    companions += [c for c in fixes_for(project, added[0], texts[path])
                                   if c.kind == "rewrite" and c.title not in titles]
                break
    return [_joined(baseline, fix, texts, companion) for companion in companions]


def _added(before: list[Finding], old: str, after: list[Finding], new: str, code: str) -> list[Finding]:
    """The `code` findings of `after` that `before` did not have, told apart by message and line text (an
    edit moves lines, and one get_global's PAL002 reads like another's)."""
    def key(finding: Finding, text: list[str]) -> tuple:
        line = text[finding.span.line].strip() if finding.span.line < len(text) else ""
        return finding.message, line

    old_lines, new_lines = old.splitlines(), new.splitlines()
    left = Counter(key(f, old_lines) for f in before if f.code == code)
    added = []
    for finding in after:
        k = key(finding, new_lines)
        if left[k] > 0:
            left[k] -= 1
        else:
            added.append(finding)
    return added


def _joined(baseline, fix: Fix, texts: dict[str, str], companion: Fix) -> Fix:
    """`fix` and `companion` (made on the texts `fix` gives) as one fix of the original texts."""
    texts = dict(texts)
    for path in {os.path.abspath(e.path) for e in companion.edits}:
        text = texts.get(path, baseline.text(path))
        texts[path] = apply_edits(text, [e for e in companion.edits if os.path.abspath(e.path) == path])
    edits = tuple(edit for path, text in texts.items() for edit in minimal_edits(path, baseline.text(path), text))
    note = companion.title.split("): ", 1)[-1]
    return replace(fix, title=f"{fix.title}, and {note[0].lower()}{note[1:]}", edits=edits,
                   applicability=("display_only" if not (fix.automatic and companion.automatic) else
                                  "safe" if fix.safe and companion.safe else "unsafe"))
