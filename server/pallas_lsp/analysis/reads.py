"""What each remembered answer was read from, so that an edit forgets only the answers it can change.

Every module model keeps its evaluator's answers in memos (`ModuleModel.eval_cache`): the value of
an expression, a parameter seen from its call sites, the kernel models of a module. Many are read
from other files (an importer's call of a function of the edited file, a constant imported from
it) or from parts of their own file the edit did not touch. An edit used to forget every model's
answers, so each keystroke evaluated again all that the edited file's analysis asks of every
module around it (the call sites of its kernels in tests, benchmarks and models: two thirds of a
keystroke in tpu-inference) and of its own unchanged functions.

Here every computation that keeps an answer is a node: `begin` / `end` around it (the evaluator's
value of an expression, a parameter's call sites), or the frame of whatever code keeps an answer
meanwhile (`Memo.__setitem__`; an analysis is the outermost frame, `new_root`). A node records
what it read directly (`note`: a file's path, a part of a module, `INDEX`), and which nodes read
from it: the computation it is part of, and every computation that used one of its answers. An
edit names what it changed (`forget(key)`: a path, `("own", id(function))`, ...; see
`model_patch`): every node that read it, and every node that read from one of those, transitively,
drops its answers; the others stay true. A node's answers are dropped together: an answer kept by
code that says nothing of what it read records the frame it was kept in, which may read more after
it is kept (a memo filled after it is stored), so it is dropped when anything that frame read changes.

Keys name parts of modules by `id()`: a new node may get the id of a freed one, which can only make
an edit forget more, never less.
"""

from __future__ import annotations

import contextlib
from collections import deque

INDEX = "<import index>"  # what the import index answers about the whole workspace (importers, can matter)
# Read by every answer kept without saying what it read (`Memo.__setitem__`): kernel models, entry
# points, launches, found by walking modules whole; forgotten at every edit (`model_patch`).
BROAD = "<modules walked whole>"

_MISSING = object()


class _Node:
    """A computation: what it read directly, the nodes that read from it, the answers it kept."""

    __slots__ = ("direct", "dependents", "kept", "dead", "open", "last", "limit", "again")

    def __init__(self, read=()):
        self.direct = set(read)
        self.dependents: list = []
        self.kept: list = []  # (memo, key)
        self.dead = False
        self.open = True
        self.last = None  # the dependent added last (a run of hits by one computation adds it once)
        self.limit = 16  # prune dead dependents past this many
        self.again = None  # (function, *arguments) that finds its one answer again: see `settled`

    def read_by(self, node: "_Node") -> None:
        if node is not self.last:
            self.last = node
            dependents = self.dependents
            dependents.append(node)
            if len(dependents) > self.limit:
                dependents[:] = [d for d in dependents if not d.dead]
                self.limit = max(16, 2 * len(dependents))


_stack: list[_Node] = [_Node()]
# Off where no text changes while the process lives (`check`): nothing is recorded, and forgetting
# anything forgets everything (`tracking`).
_tracking = [True]
_readers: dict = {}  # key -> nodes that read it directly (filed when they end)
_filed = [0, 1 << 16]  # readers filed since the last sweep, and the count that starts the next one


def set_tracking(on: bool) -> None:
    """Record what answers read (an editor's analyses), or not (`check`: its texts never change)."""
    _tracking[0] = on


def tracking() -> bool:
    return _tracking[0]


@contextlib.contextmanager
def not_tracking():
    """Meanwhile nothing is recorded (`check`, in its process or called in another's: a test)."""
    before = _tracking[0]
    _tracking[0] = False
    try:
        yield
    finally:
        _tracking[0] = before


def note(key) -> None:
    """The computation in progress read `key` (a file's path, a part of a module, `INDEX`)."""
    if _tracking[0]:
        _stack[-1].direct.add(key)


def begin(*read) -> None:
    """A computation that keeps its own answers starts (having read `read`)."""
    _stack.append(_Node(read) if _tracking[0] else _stack[-1])


def end() -> _Node:
    """It ended: its node (read by the computation it is part of)."""
    if not _tracking[0]:
        return _stack.pop()
    node = _stack.pop()
    node.open = False
    node.read_by(_stack[-1])
    _file(node)
    return node


@contextlib.contextmanager
def frame():
    """A computation keeping its answers in memos: what it reads counts for them only (and for the
    computation it is part of)."""
    begin()
    try:
        yield
    finally:
        end()


def kept(memo: "Memo", key, compute, *read):
    """`compute()` as a computation of its own (having read `read`), its answer kept in `memo` under
    `key` with what it read: forgotten by an edit of that only, not at every edit as `memo[key] = ...`."""
    begin(*read)
    try:
        value = compute()
    finally:
        node = end()
    memo.keep(key, value, node)
    return value


def kept_walk(model, kind: str, scope, walk):
    """`walk()`, a walk of `scope` (a function with its nested ones, a class, the module), kept in the model's
    memo under `(kind, id(scope))` until an edit anywhere under it (`model_patch`: "deep") or of the model."""
    key = (kind, id(scope))
    found = model.eval_cache.get(key)
    if found is None:
        found = kept(model.eval_cache, key, walk, model.read_key, ("deep", id(scope)))
    return found


def found_again_by(node: _Node | None, again: tuple) -> None:
    """`node` keeps one answer, which `again[0](*again[1:])` finds again (and keeps): see `settled`."""
    if _tracking[0] and node is not None:
        node.again = again


def standalone(*read) -> _Node:
    """The node of an answer that read `read` and that no computation reads from: those using it say what
    they asked of it themselves (`note`), so that its being found again forgets none of them."""
    node = _Node(read)
    node.open = False
    if _tracking[0]:
        _file(node)
    return node


def current() -> set | None:
    """The direct reads of the computation in progress (`note` adds to it); None when not tracking."""
    return _stack[-1].direct if _tracking[0] else None


@contextlib.contextmanager
def collected():
    """Meanwhile what the computation in progress reads (`note`) is collected in a set of its own, yielded
    (the computation reads it too): for an answer kept outside the memos that notes it again where used."""
    node = _stack[-1]
    saved = node.direct
    node.direct = fresh = set()
    try:
        yield fresh
    finally:
        node.direct = saved
        saved |= fresh


def new_root() -> None:
    """An analysis starts: its outermost frame is a new node (else every answer kept outside any
    computation would read every file ever read)."""
    if len(_stack) == 1:
        root = _stack[0]
        root.open = False
        if _tracking[0]:
            _file(root)
        _stack[0] = _Node()


def _file(node: _Node) -> None:
    for key in node.direct:
        readers = _readers.get(key)
        if readers is None:
            _readers[key] = [node]
        else:
            readers.append(node)
    _filed[0] += len(node.direct)
    if _filed[0] > _filed[1]:
        _sweep()


def _sweep() -> None:
    """Drop the dead nodes from the readers (a part of a module that no longer exists is never forgotten)."""
    total = 0
    for key in list(_readers):
        alive = [node for node in _readers[key] if not node.dead]
        if alive:
            _readers[key] = alive
            total += len(alive)
        else:
            del _readers[key]
    _filed[0] = 0
    _filed[1] = max(1 << 16, 2 * total)


def forget(key) -> None:
    """Drop every answer read from `key`, and from what was read from those, in every memo."""
    queue = _readers.pop(key, [])
    queue.extend(node for node in _stack if key in node.direct)
    _drop(queue)


def _drop(queue: list) -> None:
    seen: set[int] = set()
    while queue:
        node = queue.pop()
        if node.dead or id(node) in seen:
            continue
        seen.add(id(node))
        dependents = node.dependents
        if _settling and _settling[-1] and node.again is not None and not node.open and len(node.kept) == 1:
            memo, key = node.kept[0]
            if memo._nodes.get(key) is node:  # compared with the answer found again (`settled`)
                _pending.append((node, memo, key, dict.get(memo, key), dependents))
                dependents = ()
        for memo, kept in node.kept:
            if memo._nodes.get(kept) is node:
                memo._drop(kept)
        node.kept = []
        queue.extend(dependents)
        node.dependents = []
        node.last = None
        if not node.open:  # a computation still running keeps its later answers
            node.dead = True


# Early cut-off: while `settled` runs, an answer kept with `again` that an edit forgets is found again
# before what read it is forgotten; when it comes out the same, they keep their answers. A parameter's
# value from its call sites reads every call of the function, so an edit of one caller forgot every
# answer of every function called from it (each kernel of a module calling one shared helper), though
# the value the helper's parameter can take is almost always what it was.
_settling: list = []
_pending: deque = deque()  # (node, memo, key, old answer, its dependents)


@contextlib.contextmanager
def settled():
    """Meanwhile, forgetting keeps aside the dependents of the answers kept with `again`; as it ends
    (the texts and the project are those of after the edit) each such answer is found again, and
    what read it is forgotten only when it differs; else it reads the answer found again."""
    _settling.append(True)
    try:
        yield
    finally:
        try:
            if len(_settling) == 1:
                _settle()
        finally:
            _settling.pop()


def _settle() -> None:
    """Finding an answer again may read one that an answer still aside, found different later, makes
    forgotten: it is then forgotten with it (it read it), and what it kept aside with it."""
    budget = _SETTLE_STEPS_PER_ANSWER * len(_pending) + _SETTLE_STEPS
    try:
        while _pending:
            budget -= 1
            if budget < 0:  # answers that keep putting each other aside: forgotten, as without the cut-off
                break
            node, memo, key, old, dependents = _pending[0]
            if all(d.dead for d in dependents):  # nothing kept reads it now: found again only when asked
                _pending.popleft()
                continue
            try:
                node.again[0](*node.again[1:])
            except Exception:  # left to the analysis that asks, as any answer forgotten
                pass
            _pending.popleft()
            new_node = memo._nodes.get(key)
            if new_node is None or new_node.dead or not same(old, dict.get(memo, key, _MISSING)):
                _drop(dependents)  # may put more answers aside
            else:
                new_node.dependents.extend(d for d in dependents if not d.dead)
    finally:  # interrupted: what is still aside is forgotten, as without the cut-off
        if _pending:
            _settling.append(False)
            try:
                leftover = [d for entry in _pending for d in entry[4]]
                _pending.clear()
                _drop(leftover)
            finally:
                _settling.pop()


# Answers found again in one `settled` at most (per answer put aside first, and more): past it, what is
# still aside is forgotten (answers that read each other through a recursion put each other aside again).
_SETTLE_STEPS_PER_ANSWER = 20
_SETTLE_STEPS = 10_000

_PLAIN = (int, str, bytes, bool, type(None))


def same(a, b, depth: int = 0) -> bool:
    """Whether two answers are the same: identical syntax nodes and models, equal constants (a float's
    sign too), and values (dataclasses, sequences) made of the same; never by a class's own `__eq__`,
    which may leave fields out (`KernelCall`'s)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b) or depth > 40:
        return False
    if kind in _PLAIN:
        return a == b
    if kind in (float, complex):
        return repr(a) == repr(b)
    if kind in (tuple, list):
        return len(a) == len(b) and all(same(x, y, depth + 1) for x, y in zip(a, b))
    if kind is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k], depth + 1) for k in a)
    if kind is frozenset:
        return all(type(x) in _PLAIN for x in a) and a == b
    fields = getattr(kind, "__dataclass_fields__", None)
    if fields is None or getattr(a, "__dict__", {}).keys() - fields.keys():
        return False
    return all(same(getattr(a, name), getattr(b, name), depth + 1) for name in fields)


class Memo(dict):
    """A model's memo: a dict whose answers remember the computation that kept them (see the
    module docstring). Using an answer makes the computation in progress read from it."""

    __slots__ = ("_nodes",)

    def __init__(self):
        super().__init__()
        self._nodes: dict = {}  # key -> the node that kept it

    # ---- reading ------------------------------------------------------------------------------

    def get(self, key, default=None):
        found = dict.get(self, key, _MISSING)
        if found is _MISSING:
            return default
        if _tracking[0]:
            self._read(key)
        return found

    hit = get  # the evaluator's hot path

    def node_of(self, key) -> "_Node | None":
        """The computation that kept the answer under `key` (None: none kept, or kept untracked)."""
        return self._nodes.get(key)

    def _read(self, key) -> None:
        node = self._nodes.get(key)  # none: kept while nothing was recorded (`not_tracking`)
        if node is not None:
            node.read_by(_stack[-1])

    def __getitem__(self, key):
        found = dict.__getitem__(self, key)
        if _tracking[0]:
            self._read(key)
        return found

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            if _tracking[0]:
                self._read(key)
            return True
        return False

    def setdefault(self, key, default=None):
        found = dict.get(self, key, _MISSING)
        if found is not _MISSING:
            if _tracking[0]:
                self._read(key)
            return found
        self[key] = default
        return default

    # ---- writing ------------------------------------------------------------------------------

    def __setitem__(self, key, value) -> None:
        """Keep an answer of code that does not say what it read in detail: it read `BROAD`."""
        node = _stack[-1]
        node.direct.add(BROAD)
        self.keep(key, value, node)

    def keep(self, key, value, node: _Node | None = None) -> None:
        """Keep `value` as the answer of `node` (by default the computation in progress, which
        says what it read with `note`)."""
        dict.__setitem__(self, key, value)
        if _tracking[0]:
            node = node or _stack[-1]
            self._nodes[key] = node
            node.kept.append((self, key))

    def _drop(self, key) -> None:
        if dict.__contains__(self, key):
            dict.__delitem__(self, key)
        self._nodes.pop(key, None)

    def __delitem__(self, key) -> None:
        if not dict.__contains__(self, key):
            raise KeyError(key)
        self._drop(key)

    def pop(self, key, *default):
        if dict.__contains__(self, key):
            value = dict.__getitem__(self, key)
            self._drop(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        dict.clear(self)
        self._nodes.clear()

    def update(self, *args, **kwargs):  # noqa: D102 - every write must go through `keep`
        for key, value in dict(*args, **kwargs).items():
            self[key] = value
