"""Re-analysis of a big module after an edit: only the top-level statements the edit can reach.

A module is cut into chunks: runs of whole lines holding complete top-level statements (with the
comments and blank lines after them). After an edit, only the chunks that overlap it are parsed
again. Two chunks depend on each other when one uses a name the other binds at module level; the
rules' answers for a chunk depend only on the chunks connected to it (its component), because every
way the analysis goes from one statement to another (name lookup, a helper's call sites, the
kernel that launches a body) starts from a name. So the edited chunks' components are analysed
again, on a text where every other chunk is blanked out (same line numbers, so every position is
exact), and every other finding is kept, moved by the lines the edit added or removed.

Import statements are bound by nothing else and used by almost everything; those binding a name
the analysed statements use are kept in every blanked text instead of joining everything into one
component. A statement that switches interpret mode for the whole module is kept too, and so are
star and `__future__` imports. The statements binding names that other
workspace modules use are all tied together (an importer may hand one's function to another's),
and while the blanked text is analysed it stands in for the file's model, so importers launch its
kernels. A text with a syntax error is recovered as a whole analysis recovers it, from the first
changed statement on; the parses that fail stop at the error, and the last one (the whole rest of
the module) is skipped when every repair lies in the edited chunks and they parse alone, since
the statements below them are the last text's, which parsed (a bracket or string left open to the
end of the module included: the recovery drops the line that opened it). Whenever this reasoning would not
hold (an edit to an import or an interpret switch, another file or a setting changed, a recovery
that cuts the text), the whole module is analysed as before; the answer is always the one a whole analysis gives
(tests/test_incremental_analysis.py compares them over random edits).

The rules themselves are not run here: the engine (`engine.analyze_incremental`) hands its rule
runner to `update`, and `seed`s a whole analysis's findings.
"""

from __future__ import annotations

import ast
import contextlib
import keyword
import os
import re
import sys
import warnings
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Callable

from . import big_literals
from .findings import Finding, Span
from .model import ModuleModel
from .project import Project
from .source import ParsedSource, SyntaxProblem, recover, refused_cookie
from ..source_text import split_lines

# Below this many lines a whole analysis is quick: keep the simple path.
INCREMENTAL_MIN_LINES = 1500

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_]\w*", re.ASCII)  # `_IDENTIFIER` on ASCII lines, in half the time
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _identifiers(text: str) -> list[str]:
    """`_IDENTIFIER`'s matches in `text`, in order: on its ASCII lines by the quicker pattern (no word
    spans lines), on the few others by `_IDENTIFIER` itself."""
    if text.isascii():
        return _ASCII_IDENTIFIER.findall(text)
    words: list[str] = []
    done = 0
    while (other := _NON_ASCII.search(text, done)) is not None:
        line_start = text.rfind("\n", 0, other.start()) + 1
        line_end = text.find("\n", other.end())
        line_end = len(text) if line_end < 0 else line_end
        words += _ASCII_IDENTIFIER.findall(text, done, line_start)
        words += _IDENTIFIER.findall(text, line_start, line_end)
        done = line_end
    words += _ASCII_IDENTIFIER.findall(text, done)
    return words


_NOT_INCREMENTAL = ("\r", "\x00", "\x0c")
_LINE_NUMBER = re.compile(r"\bline (\d+)")
_STAR_IMPORT = re.compile(r"\bimport\s*\*")
_BACKEND_WORDS = ("mosaic_gpu", "tpu")  # an import naming them decides the module's kernels' backend
_MODULE_SWITCH = "interpret_mode"  # plgpu.set_gpu_interpret_mode(...) marks every kernel of the module

# What runs the rules over one module's model (the engine's `model_findings`): findings, sorted, `# noqa` applied.
RunRules = Callable[[Project, ModuleModel, "set[str] | None"], "list[Finding]"]


class Chunk(tuple):
    """Whole lines holding complete top-level statements, and what ties them to other chunks.
    Kept for every statement of a big document between edits: small on purpose (one tuple of its
    size, flags and interned names; equal chunks shared: a 5 MB module has tens of thousands)."""

    __slots__ = ()

    @property
    def size(self) -> int:
        """Lines (the text is the document's lines: `DocumentState.lines`)."""
        return self[0]

    @property
    def imports_only(self) -> bool:
        return self[2]

    @property
    def switch(self) -> bool:
        """Always kept in a blanked text: may switch interpret mode for the whole module, or an
        import the whole module depends on (`import *`, `__future__`, one naming a backend: `of`)."""
        return self[3]

    @property
    def names(self) -> tuple:
        """The names bound at module level (`bound`), then every other identifier in the text but
        keywords, once (a superset of the names it uses)."""
        return self[4:]

    @property
    def bound(self) -> tuple:
        """The names bound at module level (the model's own bindings), sorted."""
        return self[4:4 + self[1]]

    @classmethod
    def of(cls, text: str, size: int, imports_only: bool, bound, shared: dict | None = None) -> "Chunk":
        """The chunk of `text`, `size` lines; `shared`: equal chunks already made (one object for all)."""
        bound = sorted(bound)
        names = sorted(map(sys.intern, set(_identifiers(text)) - _KEYWORDS - set(bound)))  # each once
        return cls._made(text, size, imports_only, bound, names, shared)

    @classmethod
    def _made(cls, text: str, size: int, imports_only: bool, bound: list, names: list, shared: dict | None) -> "Chunk":
        # An unbound name may come from `import *`; `__future__` may change the parse; a kernel's
        # backend is read off the whole module's text (`kernel_args._is_mosaic_gpu`: its imports).
        switch = _MODULE_SWITCH in text or (imports_only and (
            bool(_STAR_IMPORT.search(text)) or "__future__" in names or any(m in text for m in _BACKEND_WORDS)))
        chunk = cls((size, len(bound), imports_only, switch, *bound, *names))
        return chunk if shared is None else shared.setdefault(chunk, chunk)  # the same import in every unit

    def edited(self, old_text: str, text: str, shared: dict | None = None) -> "Chunk":
        """`Chunk.of(text, ...)` for `text`, this chunk's `old_text` with some lines changed in place (as many
        lines, the same flags and bindings): this chunk's names, less those only the changed lines held, and
        the changed lines' own. A keystroke in a class of 2,000 lines tokenized the whole class again."""
        first, end = _changed_text_lines(old_text, text)
        old_lines, new_lines = _Lines(old_text), _Lines(text)
        was, now = set(_identifiers(old_lines.joined(first, end))), set(_identifiers(new_lines.joined(first, end)))
        bound = list(self.bound)
        names = set(self[4 + self[1]:]) | (now - _KEYWORDS - set(bound))
        for name in (was - now) & names:
            if not _holds_identifier(text, name):
                names.discard(name)
        return self._made(text, self.size, self.imports_only, bound, sorted(map(sys.intern, names)), shared)


_KEYWORDS = frozenset(keyword.kwlist)


def _holds_identifier(text: str, name: str) -> bool:
    """Is `name` one of `_identifiers(text)`: tokenized on the lines holding it only (no identifier spans lines)."""
    at = text.find(name)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if name in _identifiers(text[start:end]):
            return True
        at = text.find(name, end)
    return False


class _Lines:
    """A text's lines ("\n"-separated) found on demand: an edit of a big document needs a few of
    them, and a list of all (207k strings for 5 MB, made twice per edit) left pages of small blocks
    behind. Slices are lists, as a list's are; equal to another text's lines or a list of lines."""

    _BLOCK = 4096  # characters per entry of the newline index
    _SPLIT_UP_TO = 1 << 20  # characters of a text whose `runs` split it into lines first

    def __init__(self, text: str):
        self.text = text
        block = self._BLOCK
        self._before = list(accumulate((text.count("\n", at, at + block) for at in range(0, len(text), block)),
                                       initial=0))  # newlines before each block

    def __len__(self) -> int:
        return self._before[-1] + 1

    def offset(self, line: int) -> int:
        """Where `line` starts (`len(text) + 1` for the line after the last)."""
        if line <= 0:
            return 0
        if line >= len(self):
            return len(self.text) + 1
        block = bisect_right(self._before, line - 1) - 1  # the block holding the line's newline
        at = block * self._BLOCK - 1
        for _ in range(line - self._before[block]):
            at = self.text.find("\n", at + 1)
        return at + 1

    def runs(self, sizes):
        """The texts of consecutive runs of `sizes` lines from the first, in one pass."""
        text, start = self.text, 0
        if len(text) <= self._SPLIT_UP_TO:  # a list of its lines is small: joined in C, not a find per line
            lines, first = text.split("\n"), 0
            for size in sizes:
                yield "\n".join(lines[first:first + size])
                first += size
            return
        for size in sizes:
            end = start
            for _ in range(size):
                newline = text.find("\n", end)
                end = len(text) + 1 if newline < 0 else newline + 1
            yield text[start:end - 1] if size else ""
            start = end

    def joined(self, start: int, stop: int) -> str:
        """Lines `start`..`stop`-1 joined by "\n" (as `"\n".join(lines[start:stop])`)."""
        if stop <= start:
            return ""
        return self.text[self.offset(start):self.offset(stop) - 1]

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise ValueError("a step")
            return self.joined(start, stop).split("\n") if stop > start else []
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.joined(index, index + 1)

    def __iter__(self):
        return iter(self.text.split("\n"))

    def __eq__(self, other) -> bool:
        if isinstance(other, _Lines):
            return self.text == other.text
        return isinstance(other, list) and len(other) == len(self) and self.text == "\n".join(other)

    __hash__ = None


def _join(lines, start: int, stop: int) -> str:
    return lines.joined(start, stop) if isinstance(lines, _Lines) else "\n".join(lines[start:stop])


@dataclass
class DocumentState:
    """The last analysed text of one document, cut into chunks, and its findings. Texts, not
    lists of lines, between edits (a line is a ~50-byte object: a 5 MB module's lines take 3 times
    its size); the text is the document's own string when it parsed."""

    text: str  # the lines the chunks were parsed from, joined: the document's text, or its recovery
    chunks: list[Chunk]
    findings: list[Finding]
    codes: frozenset | None
    changes: tuple  # `Project.changes_besides` when it was made
    updates: int = 0  # edits taken incrementally since the last whole analysis
    shown_text: str | None = None  # the document's text when it has syntax errors (else `text`)
    _split: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def lines(self) -> "_Lines | list[str]":
        """`text`'s lines while an edit is applied (`release` drops them)."""
        if "lines" not in self._split:
            self._split["lines"] = _Lines(self.text)
        return self._split["lines"]

    @property
    def shown(self) -> list[str] | None:
        """The document's own lines when it has syntax errors (else None)."""
        if self.shown_text is None:
            return None
        if "shown" not in self._split:
            self._split["shown"] = self.shown_text.split("\n")
        return self._split["shown"]

    def move_to(self, text: str, lines: list[str], shown: list[str]) -> None:
        """Now the document's `text`, split as `shown`, parsed (or recovered) as `lines`."""
        parsed = shown is lines
        self.text, self.shown_text = (text, None) if parsed else ("\n".join(lines), text)
        self._split = {"lines": lines} if parsed else {"lines": lines, "shown": shown}

    def release(self) -> None:
        self._split = {}


def update(project: Project, path: str, text: str, codes: set[str] | None, min_lines: int,
           run_rules: RunRules) -> list[Finding] | None:
    """The findings of `text` from the last ones of this path, re-running the rules (`run_rules`,
    the engine's) only on the blanked text of what the edit can change (see the module docstring);
    None when only a whole analysis can tell (then `seed` its findings)."""
    path = os.path.abspath(path)
    frozen_codes = frozenset(codes) if codes is not None else None
    state = project.incremental.pop(path, None)
    if (state is not None and state.codes == frozen_codes and project.unchanged_since(path, state.changes)
            and _eligible(project, path, text, min_lines)):
        findings = _update(project, path, state, text, run_rules)
        state.release()
        if findings is not None:
            state.changes = project.changes_besides(path, state.changes)
            project.incremental[path] = state
            project.save_caches()
            _drop_whole_model(project, path, text)
            return findings
    return None


def seed(project: Project, path: str, text: str, codes: set[str] | None, min_lines: int,
         findings: list[Finding], previous: DocumentState | None = None) -> None:
    """Keep a whole analysis's `findings` of `text`, and its model cut into chunks, for the next edit
    (the chunks of a `previous` state whose lines are the same taken over)."""
    path = os.path.abspath(path)
    if _eligible(project, path, text, min_lines):
        state = _seed(project, path, text, frozenset(codes) if codes is not None else None, findings, previous)
        if state is not None:
            project.incremental[path] = state


def _drop_whole_model(project: Project, path: str, text: str) -> None:
    """A document over the models' memory budget keeps only its chunks between edits: its whole
    model costs ~90 times its text (5 MB: 400 MiB and more), and edits, hovers and inlay hints
    need only chunks (`model_for_lines`); a request that needs the whole model parses it again."""
    if len(text) > project.model_text_budget:
        project.forget_model(path)


def _eligible(project: Project, path: str, text: str, min_lines: int) -> bool:
    if text.count("\n") + 1 < min_lines or any(c in text for c in _NOT_INCREMENTAL) or refused_cookie(text):
        return False
    return project.can_matter(path, text)  # else only compiled: already cheap


def _importer_names(project: Project, path: str) -> tuple[list[str], set[str]] | None:
    """The workspace modules importing this one and every identifier in their texts: what they use
    of it ties those statements together (an importer may pass one's function to another's). None
    when one imports everything (`import *`) or cannot be read."""
    importers = project.index.importers(path, project.module_name(path))
    names: set[str] = set()
    for importer in importers:
        try:
            text = project.text(importer)
        except (OSError, ValueError):
            return None
        if _STAR_IMPORT.search(text):
            return None
        names.update(_identifiers(text))
    return importers, names


def _seed(project: Project, path: str, text: str, codes, findings: list[Finding],
          previous: DocumentState | None = None) -> DocumentState | None:
    """The state after a whole analysis, from its model (none when its recovery cut the text short)."""
    model = project._models.get(path)
    if model is None or model.text != text:
        return None
    source = model.source
    shown = lines = None
    if source.syntax_errors:
        shown = text.split("\n")
        lines = _recovered_lines(source.syntax_errors, source.recovered, source.lines, shown)
        if lines is None:
            return None
    groups = _group_statements(model.tree.body)
    cuts = _cuts(groups, text.count("\n") + 1)
    bound: list[set] = [set() for _ in cuts[1:]]
    for name, bindings in model.scopes[model.tree].bindings.items():
        for binding in bindings:
            bound[max(0, bisect_right(cuts, binding.lineno - 1) - 1)].add(name)
    imports = [_imports_only(g) for g in groups] or [False]
    del model, source, groups
    # What is kept is made once the whole model is gone (a big one is): it then fills the memory
    # the model freed instead of keeping that memory's pages from going back.
    _drop_whole_model(project, path, text)
    # The chunks' texts cut from the text itself when it parsed: a list of all its lines (207k
    # strings for 5 MB), freed right after, left the chunks scattered over its pages.
    sizes = [cuts[k + 1] - cuts[k] for k in range(len(cuts) - 1)]
    pieces = (_Lines(text).runs(sizes) if lines is None
              else ("\n".join(lines[cuts[k]:cuts[k + 1]]) for k in range(len(cuts) - 1)))
    shared: dict = {}
    # A keystroke patched into the model (`Project.set_text`) changes a chunk or two: the others are the last state's.
    before = _chunks_by_text(previous) if lines is None else {}
    # A chunk edited in place (a keystroke): the last state's chunk at its index, of as many lines and bindings.
    in_place = list(before.items()) if before and len(before) == len(sizes) == len(previous.chunks) else None
    chunks = []
    for k, piece in enumerate(pieces):
        found = before.get(piece)
        same = found is not None and found.size == sizes[k] and found.imports_only == imports[k] \
            and set(found.bound) == bound[k]
        if same:
            chunks.append(found)
            continue
        old_text, old = in_place[k] if in_place is not None else (None, None)
        if old is not None and old.size == sizes[k] and old.imports_only == imports[k] and set(old.bound) == bound[k]:
            chunks.append(old.edited(old_text, piece, shared))
        else:
            chunks.append(Chunk.of(piece, sizes[k], imports[k], bound[k], shared))
    if lines is None:
        return DocumentState(text, chunks, findings, codes, project.changes_besides(path))
    return DocumentState("\n".join(lines), chunks, findings, codes, project.changes_besides(path), shown_text=text)


def _chunks_by_text(state: DocumentState | None) -> dict[str, Chunk]:
    """The chunks of a state of a text that parsed, by their text."""
    if state is None or state.shown_text is not None:
        return {}
    return dict(zip(_Lines(state.text).runs([chunk.size for chunk in state.chunks]), state.chunks))


def _recovered_lines(errors: list, recovered: list[str] | None, parsed: list[str],
                     shown: list[str]) -> list[str] | None:
    """The lines (split at "\n", as `shown`) a tree was parsed from, given what recovering the
    `parsed` lines of `shown` gave: `shown` itself when the text parsed; None when no line-for-line
    recovery exists (a cut tail, a text given up on)."""
    if not errors:
        return shown
    if recovered is None or len(recovered) != len(parsed) or len(shown) - len(recovered) not in (0, 1):
        return None
    return [*recovered, *shown[len(recovered):]]


def _imports_only(statements: list[ast.stmt]) -> bool:
    return bool(statements) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in statements)


def _statement_start(statement: ast.stmt) -> int:
    """0-based first line of a statement, its decorators included."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))]) - 1


def _group_statements(statements: list[ast.stmt]) -> list[list[ast.stmt]]:
    """Statements grouped so that no two groups share a line (`a = 1; b = 2` is one group)."""
    groups: list[list[ast.stmt]] = []
    end = -1
    for statement in statements:
        if groups and _statement_start(statement) < end:
            groups[-1].append(statement)
        else:
            groups.append([statement])
        end = max(end, statement.end_lineno)
    return groups


def _cuts(groups: list[list[ast.stmt]], size: int) -> list[int]:
    """Where the chunks of `size` lines holding these statement groups begin, and `size`: each
    chunk starts at its group (the first at line 0) and takes the lines up to the next one."""
    return [0, *(_statement_start(g[0]) for g in groups[1:]), size]


def _module_bindings(statements: list[ast.stmt]) -> frozenset:
    """Names these statements bind at module level, exactly as `ModuleModel` binds them."""
    model = ModuleModel.of_statements(statements)
    return frozenset(model.scopes[model.tree].bindings)


def _parse_region(lines: list[str]) -> list[ast.stmt] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return big_literals.parse("\n".join(lines) + "\n").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@dataclass(frozen=True)
class _RegionBroken:
    """`_apply`'s answer when the changed lines do not parse on their own; the lines above `start`
    are complete statements that did not change, and the lines from `end` (`old_end` in the last
    text) on are the same as there."""

    start: int
    end: int
    old_end: int


def _update(project: Project, path: str, state: DocumentState, text: str, run_rules: RunRules) -> list[Finding] | None:
    """The findings of `text` from those of `state`'s text, and `state` moved to `text`; None when
    only a whole analysis can tell.

    A text that does not parse is recovered as a whole analysis does (`source.parse`: broken lines
    become `pass`), and the recovered lines are what is compared and cut into chunks; the analysed
    (blanked) text is given that recovery, blanked, and the whole text's syntax errors."""
    if text == (state.text if state.shown_text is None else state.shown_text):
        return list(state.findings)
    shown = _Lines(text)
    found = _apply(project, path, state, text, shown, shown, [], run_rules)
    if not isinstance(found, _RegionBroken):
        return found
    # Recover from the first changed statement on, as a whole parse would: the lines above are
    # complete statements, so the parser meets the same tokens from there. Failed parses stop at
    # the error (milliseconds); the one that succeeds is what costs a parse of the rest of the
    # module, and is skipped when the repairs stay inside the edited region and it parses alone.
    start = found.start
    if shown[:start] != state.lines[:start]:
        return None  # a broken line above, repaired in the last text: a whole recovery meets it first
    tail = split_lines("\n".join(shown[start:]))
    known = None
    if shown[found.end:] == state.lines[found.old_end:]:
        known = _repairs_inside(tail, found.end - start)
    _, tail_errors, tail_recovered = recover(tail, known)
    tail_lines = _recovered_lines(tail_errors, tail_recovered, tail, shown[start:])
    if tail_lines is None or not tail_errors:
        return None
    # A message naming a line ("detected at line 3") names it in the tail: moved like the error
    # (the blanked text, which has the whole text's line numbers, must then give the same message).
    errors = [SyntaxProblem(e.line + start, e.column,
                            _LINE_NUMBER.sub(lambda m: f"line {int(m[1]) + start}", e.message))
              for e in tail_errors]
    found = _apply(project, path, state, text, [*shown[:start], *tail_lines], shown, errors, run_rules)
    return None if isinstance(found, _RegionBroken) else found


def _repairs_inside(tail: list[str], end: int):
    """`recover`'s `known_to_parse` for `tail` whose lines from `end` on are complete statements of
    the last analysed text (which parsed): repaired lines parse when every repair is above `end`
    and the lines above it parse alone (statements followed by statements)."""
    def known(work: list[str]) -> bool:
        return len(work) == len(tail) and work[end:] == tail[end:] and _parse_region(work[:end]) is not None
    return known


def _changed_lines(old, new) -> tuple[int, int]:
    """(first line that differs, line after the last one that differs in `old`): at most one line
    more on either side when both are `_Lines` (found on their texts)."""
    if isinstance(old, _Lines) and isinstance(new, _Lines):
        return _changed_text_lines(old.text, new.text)
    old, new = list(old), list(new)
    limit = min(len(old), len(new))
    first = 0
    while first < limit and old[first] == new[first]:
        first += 1
    same_tail = 0
    while same_tail < limit - first and old[len(old) - 1 - same_tail] == new[len(new) - 1 - same_tail]:
        same_tail += 1
    return first, len(old) - same_tail


def _common_length(a: str, b: str, backwards: bool = False, limit: int | None = None) -> int:
    """How many characters `a` and `b` share at their start (at their end: `backwards`), at most
    `limit`; compared a block at a time (the strings' own comparison)."""
    limit = min(len(a), len(b)) if limit is None else limit
    block, same = 65536, 0
    while same < limit:
        size = min(block, limit - same)
        if backwards:
            equal = a[len(a) - same - size:len(a) - same] == b[len(b) - same - size:len(b) - same]
        else:
            equal = a[same:same + size] == b[same:same + size]
        if equal:
            same += size
        elif size > 1:
            block = max(size // 16, 1)
        else:
            break
    return same


def _changed_text_lines(old: str, new: str) -> tuple[int, int]:
    """`_changed_lines` of two texts' lines, on the strings: the line holding the first differing
    character, and the line after the last one holding a differing character of `old`."""
    head = _common_length(old, new)
    tail = _common_length(old, new, backwards=True, limit=min(len(old), len(new)) - head)
    first = old.count("\n", 0, head)
    same_tail = old.count("\n", len(old) - tail) if tail else 0
    return first, old.count("\n") + 1 - same_tail


def _apply(project: Project, path: str, state: DocumentState, text: str, new_lines: list[str], shown: list[str],
           errors: list, run_rules: RunRules) -> list[Finding] | None | object:
    """`_update` for `text`, whose lines are `shown` and parse (or were recovered) as `new_lines`."""
    n_old, n_new = len(state.lines), len(new_lines)
    first, old_end = _changed_lines(state.lines, new_lines)
    if state.shown is not None or shown is not new_lines:  # a broken line edited, still broken
        shown_first, shown_end = _changed_lines(state.shown or state.lines, shown)
        if new_lines == state.lines:  # the same recovery: only the broken text changed
            first, old_end = shown_first, shown_end
        else:
            first, old_end = min(first, shown_first), max(old_end, shown_end)
    # The chunks around the change; the line above it too (an indented line added below a def belongs to it).
    low, high = max(first - 1, 0), max(old_end, min(first + 1, n_old))
    old_chunks = state.chunks
    old_starts = list(accumulate((c.size for c in old_chunks), initial=0))
    i = bisect_right(old_starts, low) - 1
    if old_chunks[i].imports_only and old_starts[i + 1] <= first and i + 1 < len(old_chunks):
        i += 1  # nothing below joins an import statement: an edit just under one leaves it alone
    j = bisect_right(old_starts, high - 1)
    j = max(min(j, len(old_chunks)), i + 1)
    region_start, old_region_end = old_starts[i], old_starts[j]
    delta = n_new - n_old
    new_region_end = old_region_end + delta
    region = new_lines[region_start:new_region_end]
    statements = _parse_region(region)
    if statements is None:
        # a syntax error, or a string or bracket left open past it
        return _RegionBroken(region_start, new_region_end, old_region_end)
    groups = _group_statements(statements)
    cuts = _cuts(groups, len(region))
    new_chunks = [Chunk.of("\n".join(region[cuts[k]:cuts[k + 1]]), cuts[k + 1] - cuts[k], _imports_only(groups[k] if groups else []),
                           _module_bindings(groups[k] if groups else []))
                  for k in range(len(cuts) - 1) if cuts[k + 1] > cuts[k]]
    removed = old_chunks[i:j]
    if any(c.imports_only or c.switch or any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in g)
           for c, g in [*((c, []) for c in removed), *zip(new_chunks, groups)]):
        return None
    chunks = [*old_chunks[:i], *new_chunks, *old_chunks[j:]]
    starts_new = list(accumulate((c.size for c in chunks), initial=0))
    # The chunk of the syntax error is analysed too: PAL000 quotes its line.
    error_chunks = [bisect_right(starts_new, e.line) - 1 for e in errors]
    importers = _importer_names(project, path)
    if importers is None:
        return None
    component = _component(chunks, [*range(i, i + len(new_chunks)), *error_chunks], removed, importers[1])
    if component is None:
        return None
    kept_chunks = _kept(chunks, component, importers[1])
    blanked = _blanked(shown, chunks, starts_new, kept_chunks)
    if errors:
        # The whole text's recovery, blanked: complete statements of lines that parse, with the
        # whole text's syntax errors (recovering the blanked text alone may go another way: a
        # string left open pairs with other quotes once chunks between are blank).
        recovered = _blanked(new_lines, chunks, starts_new, kept_chunks)
        statements = _parse_region([recovered])
        if statements is None:
            return None
        source = ParsedSource(blanked, ast.Module(body=statements, type_ignores=[]), split_lines(blanked),
                              list(errors), split_lines(recovered))
        model = project.own(ModuleModel(path, blanked, project.module_name(path), source=source))
    else:
        model = project.own(ModuleModel(path, blanked, project.module_name(path)))
        if model.source.syntax_errors:
            return None
    codes = set(state.codes) if state.codes is not None else None
    if importers[0]:  # they must see this text's model, not the file's whole (stale) one
        with project.standing_in(model):
            found = run_rules(project, model, codes)
    else:
        found = run_rules(project, model, codes)
    fresh = [f for f in found if (bisect_right(starts_new, f.span.line) - 1) in component]
    moved = len(new_chunks) - (j - i)
    kept = []
    for finding in state.findings:
        k = bisect_right(old_starts, finding.span.line) - 1
        if i <= k < j or (k + moved if k >= j else k) in component or finding.code == "PAL000":
            continue  # PAL000 reports the text's first syntax error: the new one, if any, is fresh
        if any(r.path == path and region_start <= r.span.line < old_region_end for r in finding.related):
            return None  # explained by the edited lines but not in their component: not expected, be safe
        kept.append(_moved(finding, path, old_region_end, delta) if delta else finding)
    findings = sorted([*fresh, *kept], key=Finding.sort_key)
    state.move_to(text, new_lines, shown)
    state.chunks, state.findings = chunks, findings
    state.updates += 1
    return findings


def _kept(chunks: list[Chunk], component: set[int], imported_names: set[str]) -> list[bool]:
    """Which chunks a blanked text keeps: the component, the statements kept always, and the import
    statements binding a name that those use or an importer may take (the others bind names
    nothing analysed reaches: a module importing in each of 30,000 units kept them all, a parse of
    30,000 statements at every edit)."""
    used = set(imported_names)
    for k, chunk in enumerate(chunks):
        if (k in component or chunk.switch) and not chunk.imports_only:
            used.update(chunk.names)
    return [k in component or c.switch or (c.imports_only and not used.isdisjoint(c.bound))
            for k, c in enumerate(chunks)]


def _blanked(lines, chunks: list[Chunk], starts: list[int], kept: list[bool]) -> str:
    """The text of `lines` with every chunk not `kept` made blank lines (a run of chunks at a time)."""
    parts, k = [], 0
    while k < len(chunks):
        end = k + 1
        while end < len(chunks) and kept[end] == kept[k]:
            end += 1
        parts.append(_join(lines, starts[k], starts[end]) if kept[k] else "\n" * (starts[end] - starts[k] - 1))
        k = end
    return "\n".join(parts)


def _component(chunks: list[Chunk], edited: list[int], removed: list[Chunk], imported_names: set[str]) -> set[int] | None:
    """Indexes of the chunks connected to the edited ones (or to what the edit removed) by a name
    one binds at module level and the other uses; names bound only by imports connect nothing.
    The chunks binding a name other modules use (`imported_names`) are all connected together."""
    imported = set().union(*(c.bound for c in chunks if c.imports_only))
    other_bound = set().union(*(c.bound for c in chunks if not c.imports_only))
    removed_bound = set().union(*(c.bound for c in removed))
    removed_names = set().union(*(c.names for c in removed))
    if (removed_bound | set().union(*(chunks[k].bound for k in edited))) & imported:
        return None  # an import's name bound by the edit (or no longer): what imports connect changes
    hubs = imported - other_bound
    binders: dict[str, list[int]] = {}
    for k, chunk in enumerate(chunks):
        for name in chunk.bound:
            if name not in hubs:
                binders.setdefault(name, []).append(k)
    wanted = binders.keys() | removed_bound
    users: dict[str, list[int]] = {}
    for k, chunk in enumerate(chunks):
        for name in wanted.intersection(chunk.names):
            users.setdefault(name, []).append(k)
    shared = [k for k, chunk in enumerate(chunks)
              if any(name not in hubs for name in imported_names.intersection(chunk.bound))]
    shared_set = set(shared)
    todo = list(edited)
    if (removed_bound - hubs) & imported_names:
        todo.extend(shared)
    for name in removed_bound:
        todo.extend(users.get(name, ()))
    for name in removed_names:
        todo.extend(binders.get(name, ()))
    component: set[int] = set()
    while todo:
        k = todo.pop()
        if k in component:
            continue
        component.add(k)
        if k in shared_set:
            todo.extend(shared)
        chunk = chunks[k]
        for name in chunk.names:
            found = binders.get(name)
            if found:
                todo.extend(found)
        for name in chunk.bound:
            found = users.get(name)
            if found:
                todo.extend(found)
    return component


def _moved(finding: Finding, path: str, after: int, delta: int) -> Finding:
    """The finding with its lines (and its related lines in this file) at or below `after` moved by `delta`."""
    def move(span: Span) -> Span:
        if span.line < after:
            return span
        return Span(span.line + delta, span.column, span.end_line + delta, span.end_column)

    related = tuple(replace(r, span=move(r.span)) if r.path == path else r for r in finding.related)
    return replace(finding, span=move(finding.span), related=related)


@contextlib.contextmanager
def model_for_lines(project: Project, path: str, text: str, first_line: int, last_line: int):
    """A model of `text` good for questions about lines `first_line`..`last_line` (hovers, inlay
    hints): the file's whole model when it is kept with this text (its answers are kept with it:
    a blanked one standing in for it would forget them, `Project.standing_in`); else, when the
    document's incremental state is this text, only the chunks of those lines and what is tied to
    them, blanked like an edit's (the whole model of a 20k-line module costs seconds to evaluate);
    else the file's whole model."""
    path = os.path.abspath(path)
    state = project.incremental.get(path)
    model = importers = None
    if project.kept_model(path, text) is not None:
        state = None
    if state is not None and state.shown_text is None and project.unchanged_since(path, state.changes):
        lines = _Lines(text)
        importers = _importer_names(project, path) if text == state.text else None
        if importers is not None:
            starts = list(accumulate((c.size for c in state.chunks), initial=0))
            first = max(0, bisect_right(starts, first_line) - 1)
            last = max(first, min(bisect_right(starts, last_line) - 1, len(state.chunks) - 1))
            component = _component(state.chunks, list(range(first, last + 1)), [], importers[1])
            if component is not None:
                kept = _kept(state.chunks, component, importers[1])
                model = project.own(ModuleModel(path, _blanked(lines, state.chunks, starts, kept), project.module_name(path)))
    if model is None or model.source.syntax_errors:
        yield project.model(path, text)
    elif importers[0]:
        with project.standing_in(model):
            yield model
    else:
        yield model
