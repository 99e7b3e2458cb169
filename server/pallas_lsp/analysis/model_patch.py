"""A module model brought to an edited text in place: the edited statements parsed again, the rest kept.

A keystroke inside a kernel body changes one statement. Parsing the whole module again made every
node a new object, so every answer the evaluator had kept for the module (and every answer of
another module that went through it) had to be found again: a whole analysis per keystroke.
Here, when the edit changed lines inside one run of statements of one block (a function body, a
branch, the module), only those statements are parsed again (alone, at their own lines and
columns: the same nodes a whole parse gives) and put in place of the old ones; every other node
stays the same object, with its parents, scopes, bindings and calls. The answers read from what
the edit changed are then forgotten (`reads`): the values of the expressions of the edited
statements' function (`("own", scope)`), the look-ups of the names they bind there
(`("bind", scope, name)`), the searches of calls by the names they call (`("calls", name)`), whether
the names they change in place are changed in place (`("mutates", name)`), what walked the function whole (`("deep", scope)`), and every answer about the module as a whole
(`reads.BROAD`); the others stay true.

Only an edit that keeps every line where it was (typing inside a line) is taken so; an edit that
adds or removes lines, touches an import, a `global` or `nonlocal`, a tab or a form feed in the
indentation, a text with syntax errors, or anything else this cannot place exactly gives None: the
caller parses the whole text as before.
"""

from __future__ import annotations

import ast
import warnings

from . import big_literals
from .model import CHILDREN, ModuleModel, Scope, ScopeNode, _Builder, _link_parents
from .reaching import changed_in_place
from .reads import BROAD
from .source import ParsedSource
from ..source_text import split_lines

# Blocks a run of statements is looked for in, by the class of the node holding them.
_BODIES = ("body", "orelse", "finalbody")
_NO_PATCH = (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)
MAX_DEPTH = 60  # blocks around and inside the edited statements (Python's parser stops at 100)


def patch(model: ModuleModel, text: str) -> list | None:
    """Bring `model` to `text` in place (see the module docstring): the read keys of the answers
    that may no longer be true ("text" and "exports": those of the file's text and top-level
    names, for its project to name), or None when only a whole parse can tell (`model` is then unchanged)."""
    source = model.source
    if (source.syntax_errors or source.recovered is not None or source.refusal is not None or model.path is None
            or any(c in text for c in ("\r", "\x00", "\x0c")) or text.startswith("\ufeff")
            or source.text.endswith("\n") != text.endswith("\n")):
        return None
    old_lines, new_lines = source.lines, split_lines(text)
    first, same_tail = same_ends(old_lines, new_lines)
    old_last, new_last = len(old_lines) - 1 - same_tail, len(new_lines) - 1 - same_tail
    delta = len(new_lines) - len(old_lines)
    if old_last < first and new_last < first:
        return None  # the same lines
    if _between_statements(model.tree, first, old_last) and all(
            _blank(line) for line in [*old_lines[first:old_last + 1], *new_lines[first:new_last + 1]]):
        return _apply_shift(model, text, new_lines, old_last + 1, delta)
    low, high = (first, old_last) if old_last >= first else (max(first - 1, 0),) * 2  # lines only added: the one above
    for owner, body, i, j, depth in reversed(_candidates(model.tree, low, high)):
        new = _parse_run(body[i:j], new_lines, depth, delta)
        if new is not None:
            return _apply(model, text, new_lines, owner, body, i, j, new, delta)
    return None


def same_ends(old_lines: list[str], new_lines: list[str]) -> tuple[int, int]:
    """(lines the same at the start, lines the same at the end after those)."""
    limit = min(len(old_lines), len(new_lines))
    first = 0
    while first < limit and old_lines[first] == new_lines[first]:
        first += 1
    tail = 0
    while tail < limit - first and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    return first, tail


def words_changed(old: str, new: str, words) -> list[str]:
    """Those of `words` (none holding a line break) found in one of the texts and not in the other. Only
    an occurrence on a changed line can come or go, so only a word the old or the new changed lines hold
    is looked for in the texts."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    first, tail = same_ends(old_lines, new_lines)
    removed = "\n".join(old_lines[first:len(old_lines) - tail])
    added = "\n".join(new_lines[first:len(new_lines) - tail])
    return [word for word in words if "\n" in word or ((word in removed or word in added)
                                                       and ((word in old) != (word in new)
                                                            or has_word(old, word) != has_word(new, word)))]


def has_word(text: str, word: str) -> bool:
    """Whether `text` holds the identifier `word` whole (`kernel`, not only in `kernels` or `kernel_sharding`):
    what a name a call is written with needs. `word` itself when it is no identifier.

    Each occurrence found with `str.find`, its neighbours then looked at: a regex `(?<!\\w)kernel(?!\\w)`
    tried its look-behind at every position of the text (no literal prefix to skip ahead with), 200 ms of
    jax-linear-attention's first analysis asking its importers' texts for its functions' names."""
    find = text.find
    start = find(word)
    if start < 0 or not word.isidentifier():
        return start >= 0
    size, end = len(word), len(text)
    while start >= 0:
        after = start + size
        if (start == 0 or not _word_character(text[start - 1])) and (after == end or not _word_character(text[after])):
            return True
        start = find(word, start + 1)
    return False


def _word_character(character: str) -> bool:
    """What a regex's `\\w` matches in a `str` (the same set: every code point compared)."""
    return character.isalnum() or character == "_"


def _blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _between_statements(tree: ast.Module, first: int, last: int) -> bool:
    """No statement holds lines first..last (0-based; `last < first`: lines added between lines
    first - 1 and first) but as a gap between the statements of one of its blocks."""
    body = tree.body
    while True:
        holding = [s for s in body if _holds(_span(s), first, last)]
        if not holding:
            return True
        if len(holding) > 1:
            return False
        inner = [block for span, block in _blocks(holding[0]) if _holds(span, first, last, whole=True)]
        if not inner:
            return False
        body = inner[0]


def _holds(span: tuple[int, int], first: int, last: int, whole: bool = False) -> bool:
    """Lines `span` hold some of lines first..last (`whole`: all of them); lines added between
    first - 1 and first: both of those."""
    start, end = span
    if last < first:
        return start <= first - 1 and first <= end
    return start <= first and last <= end if whole else end >= first and start <= last


def _blocks(statement: ast.stmt):
    """((first line, last line), block) of each block of statements of a compound statement."""
    for name in _BODIES:
        block = getattr(statement, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield (_span(block[0])[0], _span(block[-1])[1]), block


def _span(statement: ast.stmt) -> tuple[int, int]:
    """0-based first line (decorators included) and last line of a statement."""
    start = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
    return start - 1, statement.end_lineno - 1


def _candidates(tree: ast.Module, first: int, last: int) -> list:
    """(owner, its block, i, j, blocks around it) of each run `block[i:j]` of statements whose lines
    hold lines first..last, outermost first."""
    found = []
    owner, body, depth = tree, tree.body, 0
    while True:
        spans = [_span(s) for s in body]
        inside = [k for k, (start, end) in enumerate(spans) if end >= first and start <= last]
        if not inside:
            return found
        i, j = inside[0], inside[-1] + 1
        if spans[i][0] > first or spans[j - 1][1] < last:
            return found  # part of the edit is between statements (a comment line that became code)
        # Statements sharing a line (`a = 1; b = 2`) go together.
        while i > 0 and spans[i - 1][1] >= spans[i][0]:
            i -= 1
        while j < len(body) and spans[j][0] <= spans[j - 1][1]:
            j += 1
        found.append((owner, body, i, j, depth))
        if j - i != 1:
            return found
        statement = body[i]
        inner = [block for span, block in _blocks(statement) if _holds(span, first, last, whole=True)]
        if not inner:
            return found
        owner, body, depth = statement, inner[0], depth + 1


def _parse_run(old: list[ast.stmt], lines: list[str], depth: int, delta: int) -> list[ast.stmt] | None:
    """The statements the new text of the old ones' lines holds (`delta` lines more), at their
    lines and columns; None when they do not parse alone as complete statements of the same block."""
    start, end = _span(old[0])[0], _span(old[-1])[1] + delta
    if end < start:
        return None
    segment = lines[start:end + 1]
    indent = old[0].col_offset
    head = segment[0]
    if head[:indent].strip() or "\t" in head[:indent] or (len(head) > indent and head[indent] in " \t"):
        return None  # the run's first line no longer starts at its block's indentation
    if any(isinstance(n, _NO_PATCH) for s in old for n in ast.walk(s)):
        return None
    if indent == 0:
        code = "\n" * start + "\n".join(segment) + "\n"
    elif start == 0:
        return None
    else:
        code = "\n" * (start - 1) + "if 1:\n" + "\n".join(segment) + "\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = big_literals.parse(code)  # as the whole text is parsed (`ModuleModel`)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    new = tree.body if indent == 0 else tree.body[0].body
    if not new or any(s.col_offset != indent for s in new):
        return None
    for statement in new:
        for node in ast.walk(statement):
            if isinstance(node, _NO_PATCH):
                return None
    if depth + max(_block_depth(s) for s in new) >= MAX_DEPTH:
        return None
    return new


def _block_depth(statement: ast.stmt) -> int:
    deepest = 0
    for name in _BODIES + ("handlers", "cases"):
        for inner in getattr(statement, name, None) or ():
            deepest = max(deepest, 1 + _block_depth(inner))
    return deepest


def _shift(model: ModuleModel, after: int, delta: int, skip: set[int]) -> None:
    """Lines after line `after` (1-based) moved by `delta`: every node's and binding's (but the
    nodes in `skip`, ids of what the edit replaces)."""
    if not delta:
        return
    stack = [model.tree]
    children = CHILDREN
    while stack:
        node = stack.pop()
        end = getattr(node, "end_lineno", None)
        if end is not None:
            if end <= after or id(node) in skip:
                continue
            if node.lineno > after:
                node.lineno += delta
            node.end_lineno = end + delta
        stack.extend(children[node.__class__](node))
    for scope in model.scopes.values():
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.lineno > after:
                    binding.lineno += delta


def _apply_shift(model: ModuleModel, text: str, lines: list[str], after: int, delta: int) -> list:
    """Only blank lines and comments between statements changed: lines after `after` (1-based) move."""
    _shift(model, after, delta, set())
    _done(model, text, lines)
    return [BROAD, "text"] + (["exports", ("lines", id(model))] if delta else [])


def _done(model: ModuleModel, text: str, lines: list[str]) -> None:
    model._mentions = {}
    model._segment_lines = None
    model.source = ParsedSource(text, model.tree, lines)
    model.__dict__.pop("_jedi_script", None)


def _apply(model: ModuleModel, text: str, lines: list[str], owner: ast.AST, body: list, i: int, j: int,
           new: list[ast.stmt], delta: int) -> list:
    old = body[i:j]
    scope = owner if isinstance(owner, ScopeNode) else model.scope_of(owner)
    start_line, end_line = _span(old[0])[0] + 1, _span(old[-1])[1] + 1  # 1-based, as linenos
    old_nodes: list[ast.AST] = []
    for statement in old:
        stack = [statement]
        while stack:
            node = stack.pop()
            old_nodes.append(node)
            stack.extend(CHILDREN[node.__class__](node))
    old_ids = {id(node) for node in old_nodes}

    # Where the old statements' part of the module's lists is (their nodes' lines are still the old ones).
    spans = {}
    for name in ("calls", "functions", "withs"):
        items = getattr(model, name)
        at = next((k for k, n in enumerate(items) if n.lineno >= start_line), len(items))
        spans[name] = (at, next((k for k in range(at, len(items)) if items[k].lineno > end_line), len(items)))

    # The part of the model the old statements made, gone; what follows them moved.
    parents, scope_of, scopes = model.parents, model._scope_of, model.scopes
    old_scopes = [node for node in old_nodes if isinstance(node, ScopeNode)]
    for node in old_nodes:
        parents.pop(node, None)
        scope_of.pop(node, None)
    for node in old_scopes:
        scopes.pop(node, None)
        model._body_id_sets.pop(node, None)
    model._body_id_sets.pop(owner, None)
    model.__dict__.pop("_subclassed_names", None)  # the classes' bases (`class_attributes._subclassed_names`)
    for node in (owner, scope):  # what is kept on a node its statements' edit changes
        node.__dict__.pop("_pallas_members", None)  # a class body's members (`classes.class_members`)
        node.__dict__.pop("_pallas_fields", None)  # its dataclass fields (`classes.dataclass_fields`)
        node.__dict__.pop("_forwarded_call", None)  # a launch wrapper's call (`launch_wrappers.forwarded_call`)
    enclosing = owner
    while enclosing is not None:  # a launcher building its kernel around a body (`launch_wrappers.body_launcher`)
        enclosing.__dict__.pop("_body_launcher", None)
        enclosing = parents.get(enclosing)
    own = scopes[scope]
    old_bound = set()
    for name, bindings in list(own.bindings.items()):
        kept = [b for b in bindings if id(b.node) not in old_ids]
        if len(kept) != len(bindings):
            old_bound.add(name)
            if kept:
                own.bindings[name] = kept
            else:
                del own.bindings[name]
    _shift(model, end_line, delta, old_ids)

    # The new statements, built as a whole build would (into a scope of their own, merged below).
    body[i:j] = new
    for statement in new:
        parents[statement] = owner
        _link_parents(statement, parents)
    sink = _Sink(model)
    builder = _Builder(sink)
    fresh = Scope(scope)
    builder.stack = [fresh]
    builder.then(*new)
    builder.run()
    new_end = end_line + delta
    for name, bindings in fresh.bindings.items():
        existing = own.bindings.setdefault(name, [])
        at = next((k for k, b in enumerate(existing) if b.lineno > new_end), len(existing))
        existing[at:at] = bindings
    new_bound = set(fresh.bindings)

    functions_changed = spans["functions"][0] != spans["functions"][1] or bool(sink.functions)
    # The module's lists, in the order of a whole build: the run's part in the place of the old one.
    for name in ("calls", "functions", "withs"):
        at, stop = spans[name]
        getattr(model, name)[at:stop] = getattr(sink, name)
    _index_calls(model)
    model._aliased_calls = None
    _done(model, text, lines)

    # What the answers read that changed.
    keys: list = [BROAD, "text", ("own", id(scope))]
    if isinstance(scope, ast.Module) or delta:
        keys.append("exports")
    if functions_changed:  # a function defined in the edited statements: what looked at every one (`entry_kernels`)
        keys.append(("functions", id(model)))
    if delta:  # what names lines below moves (a walk's message: "the Python `if` on line 12")
        keys.append(("lines", id(model)))
    keys += [("own", id(node)) for node in old_scopes]
    keys += [("deep", id(node)) for node in old_scopes]
    above = scope
    while True:
        keys.append(("deep", id(above)))
        if isinstance(above, ast.Module):
            break
        above = model.scope_of(above)
    keys += [("bind", id(scope), name) for name in old_bound | new_bound]
    called = _call_names(old_nodes) | _call_names(n for s in new for n in ast.walk(s))
    keys += [("calls", id(model), name) for name in called]
    if called:
        keys.append(("calls", id(model), "*"))
    changed = changed_in_place(old_nodes) | changed_in_place(n for s in new for n in ast.walk(s))
    keys += [("mutates", id(model), name) for name in changed]  # `reaching.mutates`
    if changed:
        keys.append(("mutates", id(model), "*"))
    return keys


def _call_names(nodes) -> set[str]:
    """What calls among `nodes` are found by (`ModuleModel.calls_named`, `calls_or_partials_of`)."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            names.add(_last_name(node.func) or "")
            if node.args:
                names.add(_last_name(node.args[0]) or "")
    return names


def _last_name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _index_calls(model: ModuleModel) -> None:
    """`_call_positions` and `_partial_positions` of the model's calls, as its build makes them."""
    positions: dict[str, list[int]] = {}
    partials: dict[str, list[int]] = {}
    for index, call in enumerate(model.calls):
        name = _last_name(call.func)
        if name is not None:
            positions.setdefault(name, []).append(index)
        if name == "partial" and call.args:
            bound = _last_name(call.args[0])
            if bound is not None:
                partials.setdefault(bound, []).append(index)
    model._call_positions = positions
    model._partial_positions = partials
    model.__dict__.pop("_call_ids", None)
    model.__dict__.pop("_plain_callees", None)  # `plain_callees.plain_callee`'s answers where nothing is tracked


class _Sink:
    """What a build of the new statements fills: the model's scopes and scope answers, lists of its own."""

    def __init__(self, model: ModuleModel):
        self.scopes = model.scopes
        self._scope_of = model._scope_of
        self.calls: list = []
        self.functions: list = []
        self.withs: list = []
        self._call_positions: dict = {}
        self._partial_positions: dict = {}
