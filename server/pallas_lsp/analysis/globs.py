"""`.gitignore`-style globs matched in time linear in the path's length (times the patterns').

Python's `re` (and `fnmatch`, which translates to it) backtracks: `*a*a*a*a*a*a*a*a*a*a*a*a*b`
against a 60-letter name tries every way to split the name among the stars, minutes of work that a
repository's `.gitignore` can ask of `check` and of the server. Here each pattern is a small NFA (one
state per glob token), and a path is run through the set of states it can be in, one character at a
time, as ruff's globset does; the sets met are kept as a DFA built as paths need it, so a walk pays
for each new set once, then one dictionary lookup per character.

Syntax (as `exclusions.py` has always read it): `*` any run of characters but `/`, `?` one of
them, `[...]` one character of a class (`[!...]` or `[^...]` negated, `a-z` ranges, a `]` first in
the class taken literally, a class that cannot match, as `[z-a]`, matches nothing), `**/` any
number of whole folders, `**` elsewhere anything, `\\x` a literal `x`. A pattern with a `/` is
matched against the whole relative path; one without matches any path's last part (or parts, by
`**`).
"""

from __future__ import annotations

import re
import threading
import warnings
from functools import lru_cache

# Token kinds, one NFA state each; a state's token is what leaves it.
# `**/` takes two states: at a folder's start (left for free: no folders), and inside its name.
_LITERAL, _ONE, _CLASS, _STAR, _ANYTHING, _FOLDERS, _IN_FOLDER, _ACCEPT = range(8)
_LOOPING = (_STAR, _ANYTHING)  # may also match nothing: the next state is reached for free
_NOTHING = re.compile(r"(?!)")

# DFA states kept per set of patterns before the table starts over (each path adds at most one per
# character, so a hostile pattern costs memory only up to here).
MAX_DFA_STATES = 10_000


def is_glob(pattern: str) -> bool:
    """Whether a pattern needs matching at all (else it is a plain name)."""
    return any(char in pattern for char in "/*?[]!\\")


@lru_cache(maxsize=4096)
def _class(body: str) -> re.Pattern:
    """One character class, as `re` reads it (one character: it cannot backtrack)."""
    if body[:1] == "!":
        body = "^" + body[1:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # `[[:alpha:]]`: a literal `[` to re
            return re.compile(f"[{body.replace(chr(92), chr(92) * 2)}]", re.S)
    except re.error:  # `[z-a]`: git's wildmatch matches nothing there either
        return _NOTHING


@lru_cache(maxsize=4096)
def parse(pattern: str) -> tuple[tuple[tuple[int, object], ...], bool]:
    """The pattern's tokens, and whether it is anchored (has a `/`: matched from the path's start)."""
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    tokens: list[tuple[int, object]] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            tokens.append((_FOLDERS, None))
            index += 3
            continue
        if pattern.startswith("**", index):
            tokens.append((_ANYTHING, None))
            index += 2
            continue
        if char == "*":
            tokens.append((_STAR, None))
        elif char == "?":
            tokens.append((_ONE, None))
        elif char == "[":
            first = index + 2 if pattern[index + 1:index + 2] in ("!", "^") else index + 1
            end = pattern.find("]", first + 1)  # a `]` first in the class is one of its characters
            if end < 0:
                tokens.append((_LITERAL, char))
            else:
                tokens.append((_CLASS, _class(pattern[index + 1:end])))
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            tokens.append((_LITERAL, pattern[index]))
        else:
            tokens.append((_LITERAL, char))
        index += 1
    return tuple(tokens), anchored


class _Table:
    """The DFA built so far: sets of NFA states by number, their moves, and the patterns each accepts."""

    def __init__(self):
        self.numbers: dict[frozenset, int] = {}
        self.sets: list[frozenset] = []
        self.moves: list[dict[str, int]] = []
        self.accepted: list[frozenset[int]] = []


class GlobSet:
    """Several patterns matched at once: `matching(path)` is the set of their indices that match."""

    def __init__(self, patterns: list[str]):
        self.patterns = list(patterns)
        kinds: list[int] = []
        arguments: list[object] = []
        accepting: dict[int, int] = {}  # NFA state -> pattern index
        starts, restarts = [], []
        for number, pattern in enumerate(self.patterns):
            tokens, anchored = parse(pattern)
            (starts if anchored else restarts).append(len(kinds))
            for kind, argument in tokens:
                kinds.append(kind)
                arguments.append(argument)
                if kind == _FOLDERS:
                    kinds.append(_IN_FOLDER)
                    arguments.append(None)
            accepting[len(kinds)] = number
            kinds.append(_ACCEPT)
            arguments.append(None)
        self._kinds, self._arguments, self._accepting = kinds, arguments, accepting
        # An unanchored pattern may start at the path's start or after any `/` in it.
        self._restarts = self._closure(restarts)
        self._start = self._closure(starts + restarts)
        self._lock = threading.Lock()
        self._table = self._new_table()

    def _new_table(self) -> _Table:
        table = _Table()
        self._number(table, self._start)
        return table

    def _closure(self, states) -> frozenset:
        """The states plus those reached from them without a character (past `*`, `**`, `**/`)."""
        found = set(states)
        pending = list(states)
        while pending:
            state = pending.pop()
            kind = self._kinds[state]
            free = state + 1 if kind in _LOOPING else state + 2 if kind == _FOLDERS else None
            if free is not None and free not in found:
                found.add(free)
                pending.append(free)
        return frozenset(found)

    def _number(self, table: _Table, states: frozenset) -> int:
        number = table.numbers.get(states)
        if number is None:
            number = table.numbers[states] = len(table.sets)
            table.sets.append(states)
            table.moves.append({})
            table.accepted.append(frozenset(self._accepting[s] for s in states if s in self._accepting))
        return number

    def _step(self, states: frozenset, char: str) -> frozenset:
        kinds, arguments = self._kinds, self._arguments
        reached = set(self._restarts) if char == "/" else set()
        for state in states:
            kind = kinds[state]
            if kind == _LITERAL:
                if arguments[state] == char:
                    reached.add(state + 1)
            elif kind == _ONE:
                if char != "/":
                    reached.add(state + 1)
            elif kind == _CLASS:
                if arguments[state].match(char):
                    reached.add(state + 1)
            elif kind == _STAR:
                if char != "/":
                    reached.add(state)
            elif kind == _ANYTHING:
                reached.add(state)
            elif kind == _FOLDERS:
                reached.add(state if char == "/" else state + 1)
            elif kind == _IN_FOLDER:
                reached.add(state - 1 if char == "/" else state)
        return self._closure(reached)

    def _move(self, table: _Table, number: int, char: str) -> int:
        with self._lock:
            found = table.moves[number].get(char)
            if found is None:
                found = self._number(table, self._step(table.sets[number], char))
                table.moves[number][char] = found
            return found

    def matching(self, path: str) -> frozenset[int]:
        """Indices of the patterns that match `path` (`/`-separated, relative to the patterns' folder)."""
        table = self._table
        if len(table.sets) > MAX_DFA_STATES:
            table = self._table = self._new_table()  # a path already walking the old one keeps it
        moves = table.moves
        number = 0
        for char in path:
            found = moves[number].get(char)
            number = self._move(table, number, char) if found is None else found
        return table.accepted[number]

    def matches(self, path: str) -> bool:
        return bool(self.matching(path))


@lru_cache(maxsize=4096)
def glob(pattern: str) -> GlobSet:
    """One pattern's matcher, shared by every rule that has it."""
    return GlobSet([pattern])
