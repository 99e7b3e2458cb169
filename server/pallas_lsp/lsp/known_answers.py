"""Inlay hints and kernel-parameter hovers answered from what the last analysis said while another runs.

Both are computed on the analysis thread, behind whatever analysis runs there: a document's first
analysis of a big package (a second or more) or a whole analysis after an edit held every hint and
hover that long. While the analysis thread is busy with an analysis, the hints computed last for the
document (kept here with the text they were computed for) answer at once, moved onto the current text
(the lines before the first changed line stay, those after the last one move by the lines added or
removed; the changed ones have none), and a hover on a parameter with such a hint says what it said;
the client is asked to ask for hints again (`workspace/inlayHint/refresh`) once the analysis thread
has finished what it was doing. Without the client's refresh support, or without a known answer,
they wait for the analysis, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..analysis.markdown import code_block
from ..analysis.model_patch import same_ends

Hint = tuple[int, int, str, str]  # (0-based line, code-point column after the parameter, label, tooltip)


@dataclass
class _Hints:
    text: str
    lines: list[str]
    by_line: dict[int, list[Hint]] = field(default_factory=dict)


class KnownAnswers:
    """The last inlay hints of each document, and whether the analysis thread is analysing."""

    def __init__(self) -> None:
        self._hints: dict[str, _Hints] = {}
        self._lock = threading.Lock()  # kept on the event loop, asked there and on the analysis thread
        self._analysing = 0  # analyses running on the analysis thread (0 or 1: it is one thread)

    # ---- the analysis thread's state -------------------------------------------------------------

    def analysing(self) -> bool:
        return self._analysing > 0

    def analysis(self):
        """Meanwhile, the analysis thread is analysing (a context manager, entered on that thread)."""
        return _Analysing(self)

    # ---- hints -----------------------------------------------------------------------------------

    def keep_hints(self, path: str, text: str, first_line: int, last_line: int, hints: list[Hint]) -> None:
        """What the analysis answered for lines `first_line`..`last_line` of `text`."""
        with self._lock:
            known = self._hints.get(path)
            if known is None or known.text != text:
                known = self._hints[path] = _Hints(text, text.split("\n"))
            for line in range(first_line, last_line + 1):
                known.by_line.pop(line, None)
            for hint in hints:
                known.by_line.setdefault(hint[0], []).append(hint)

    def hints(self, path: str, text: str, first_line: int, last_line: int) -> list[Hint] | None:
        """The hints known for these lines of `text`, moved from the text they were computed for (None:
        none was computed for this document)."""
        with self._lock:
            known = self._hints.get(path)
            if known is None:
                return None
            moved = _moved(known, text.split("\n"))
        return [hint for line in range(first_line, last_line + 1) for hint in moved.get(line, ())]

    def parameter_hover(self, path: str, text: str, line: int, column: int) -> str | None:
        """A hover on a kernel parameter from its known hint (its name ends where the hint starts)."""
        lines = text.split("\n")
        if line >= len(lines):
            return None
        for _, end, label, tooltip in self.hints(path, text, line, line) or ():
            start = end
            while start > 0 and (lines[line][start - 1].isalnum() or lines[line][start - 1] == "_"):
                start -= 1
            if start <= column <= end and start < end:
                name = lines[line][start:end]
                return "\n\n".join([code_block(f"{name}{label}"), tooltip,
                                    "(from the last analysis: the file is being analysed again)"])
        return None

    def forget(self, path: str) -> None:
        with self._lock:
            self._hints.pop(path, None)


class _Analysing:
    def __init__(self, known: KnownAnswers) -> None:
        self.known = known

    def __enter__(self) -> None:
        self.known._analysing += 1

    def __exit__(self, *exc) -> None:
        self.known._analysing -= 1


def _moved(known: _Hints, lines: list[str]) -> dict[int, list[Hint]]:
    """The known hints on the lines of `lines` the change left as they were."""
    if lines == known.lines:
        return known.by_line
    old = known.lines
    first, tail = same_ends(old, lines)
    shift = len(lines) - len(old)
    moved: dict[int, list[Hint]] = {}
    for line, hints in known.by_line.items():
        if line < first:
            moved[line] = hints
        elif line >= len(old) - tail:
            moved[line + shift] = [(line + shift, *hint[1:]) for hint in hints]
    return moved
