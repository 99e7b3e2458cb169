"""A parsed module with its scopes and name bindings: the map the evaluator walks.

Flow-insensitive on purpose, except that a use sees the last binding above it in its own scope:
enough to follow the aliases, constants and helpers real kernels use without executing anything.
"""

from __future__ import annotations

import ast
import contextlib
import re
import weakref
from dataclasses import dataclass, field

from .reads import Memo, current
from .source import ParsedSource, parse
from ..source_text import Refusal

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

# Fields that never hold a node worth visiting: names, constants, and the childless token nodes that only
# say which operator or context (`Load`, `Add`, `Eq`: a third of a kernel body's nodes).
_LEAF_FIELD_TYPES = frozenset({"identifier", "string", "constant", "int", "expr_context", "operator", "unaryop",
                               "cmpop", "boolop"})
_FIELD = re.compile(r"(\w+)([*?]?) (\w+)")
_CHILD_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _child_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """(field, holds a list) of the fields of `cls` that can hold nodes, from its ASDL signature (its docstring,
    `Name(identifier id, expr_context ctx)`); a class whose signature does not match its `_fields` keeps all."""
    signature = (cls.__doc__ or "").split("\n")[0]
    inner = signature[len(cls.__name__) + 1:-1] if signature.startswith(cls.__name__ + "(") else ""
    fields = [_FIELD.fullmatch(part.strip()) for part in inner.split(",")] if inner else []
    if all(fields) and tuple(f.group(3) for f in fields) == cls._fields:
        plan = tuple((f.group(3), f.group(2) == "*") for f in fields if f.group(1) not in _LEAF_FIELD_TYPES)
    else:
        plan = None
    _CHILD_FIELDS[cls] = plan
    return plan


def _all_child_nodes(node: ast.AST) -> list[ast.AST]:
    """Every node in every field, less the token nodes: for a class whose signature was not understood, and
    for a node missing a field (built by hand)."""
    children = []
    for name in node._fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            children.extend(item for item in value
                            if isinstance(item, ast.AST) and item.__class__ not in _TOKEN_NODES)
        elif isinstance(value, ast.AST) and value.__class__ not in _TOKEN_NODES:
            children.append(value)
    return children


# List fields whose items may be None in a parsed tree: `{**a}`'s key, a keyword-only argument without a default.
_NONE_ITEMS = {("Dict", "keys"), ("arguments", "kw_defaults")}


def _no_children(node: ast.AST) -> list[ast.AST]:
    return []


def _children_function(cls: type):
    """A function listing a node's children for one class, written out from its plan (`Call`: `[node.func,
    *node.args, *node.keywords]`): no loop over the fields, no getattr, for the hot walks."""
    plan = _CHILD_FIELDS[cls] if cls in _CHILD_FIELDS else _child_fields(cls)
    if plan is None:
        return _all_child_nodes
    if not plan:
        return _no_children
    optional = {m.group(3) for m in _FIELD.finditer((cls.__doc__ or "").split("\n")[0]) if m.group(2) == "?"}
    body: list[str] = []
    run: list[str] = []  # fields never None, in a row: one list display

    def flush() -> None:
        if run:
            body.append(f"found += [{', '.join(run)}]" if body else f"found = [{', '.join(run)}]")
            run.clear()

    for name, many in plan:
        if name in optional:
            flush()
            body += [] if body else ["found = []"]
            body += [f"value = node.{name}", "if value is not None:", "    found.append(value)"]
        else:
            run.append(f"*node.{name}" if many else f"node.{name}")
    flush()
    lines = ["def children(node):", "    try:", *("        " + line for line in body)]
    lines += ["    except (AttributeError, TypeError):", "        return _all_child_nodes(node)"]
    if any((cls.__name__, name) in _NONE_ITEMS for name, _ in plan):
        lines.append("    found = [child for child in found if child is not None]")
    lines.append("    return found")
    namespace = {"_all_child_nodes": _all_child_nodes}
    exec("\n".join(lines), namespace)  # noqa: S102 - the text is made here, from the ASDL field names
    return namespace["children"]


class _ChildrenFunctions(dict):
    def __missing__(self, cls: type):
        found = self[cls] = _children_function(cls)
        return found


CHILDREN = _ChildrenFunctions()  # class -> its function listing a node's children (see `child_nodes`)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))` less the token nodes (`Load`, `Add`), without its generators and
    without looking at fields that hold names or constants (hot walks): `CHILDREN[node.__class__](node)`."""
    return CHILDREN[node.__class__](node)


def walk_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(node))` less the token nodes, in the same order: `child_nodes` for each node, no
    generators (a check walks every method of every class it evaluates an attribute of)."""
    found = [node]
    children = CHILDREN
    index = 0
    while index < len(found):
        current = found[index]
        found += children[current.__class__](current)
        index += 1
    return found


_TOKEN_NODES = frozenset(cls for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
                         for cls in base.__subclasses__())
ScopeNode = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass
class Binding:
    kind: str  # "assign" | "unpack" | "def" | "class" | "import" | "param" | "other"
    node: ast.AST  # the statement, def, alias or arg that binds the name
    lineno: int
    value: ast.expr | None = None  # right-hand side for "assign" and "unpack"
    import_from: ast.ImportFrom | ast.Import | None = None
    index: tuple[int, int] | None = None  # "unpack": `rows, cols = x.shape` binds cols as item 1 of 2


@dataclass
class Scope:
    node: ast.AST
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    def add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


class ModuleModel:
    # Which memo `eval_cache` is, for every model alive (see `evaluating_in`): "" is the full evaluation's.
    _memo_name = ""
    _alive: "weakref.WeakSet[ModuleModel]" = weakref.WeakSet()
    def __init__(self, path: str, text: str, module_name: str | None = None, source: ParsedSource | None = None,
                 refusal: Refusal | None = None, tree: ast.Module | None = None):
        """`source`, when given, is `text` already parsed (or recovered); `refusal`: what Python says
        of the bytes `text` was read from; `tree`: `big_literals.parse(text)`'s, when something parsed it already."""
        self.path = path
        self.read_key = path  # what an answer read from it notes (a project's models: `Project.read_key`)
        self.owner = None  # the project whose model it is, if any
        self.module_name = module_name
        self.source: ParsedSource = source if source is not None else parse(text, refusal, tree)
        self.tree = self.source.tree
        self._start_indexes()
        _Builder(self).build()

    @classmethod
    def of_statements(cls, statements: list[ast.stmt]) -> "ModuleModel":
        """The bindings and indexes of a module made of these statements alone (no text, no path)."""
        model = cls.__new__(cls)
        model.path = model.read_key = model.owner = None
        model.tree = ast.Module(body=statements, type_ignores=[])
        model._start_indexes()
        _Builder(model).build()
        return model

    def _start_indexes(self) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        self.scopes: dict[ast.AST, Scope] = {}
        self.calls: list[ast.Call] = []
        self.functions: list[ast.AST] = []
        self.withs: list[ast.With] = []
        self._call_positions: dict[str, list[int]] = {}  # callee's last name -> indexes into calls
        self._partial_positions: dict[str, list[int]] = {}  # `partial(f, ...)`: f's last name -> indexes
        self._aliased_calls: list[int] | None = None  # see `calls_named_or_aliased`
        self._memos: dict[str, Memo] = {}
        self._full_memo: Memo = self._memos.setdefault("", Memo())  # the evaluator's memo for this text, dropped with the model
        ModuleModel._alive.add(self)
        self._scope_of: dict[ast.AST, ast.AST] = {}  # asked for every call by every entry point's model
        self._mentions: dict[str, bool] = {}
        self._body_id_sets: dict[ast.AST, frozenset[int]] = {}
        self._segment_lines: list[str] | None = None

    @property
    def text(self) -> str:
        return self.source.text

    @property
    def eval_cache(self) -> Memo:
        """The evaluator's memo for this text: the full evaluation's, or the one `evaluating_in` names.
        Looked up when read, not set on every model alive at each switch: a check switches thousands of
        times with hundreds of models alive (7% of tpu-inference's CPU went to setting them all)."""
        name = ModuleModel._memo_name
        if not name:
            return self._full_memo
        memo = self._memos.get(name)
        if memo is None:
            memo = self._memos[name] = Memo()
        return memo

    def forget_evaluations(self) -> None:
        """Empty every memo of this model (what was evaluated through another module's old text)."""
        for memo in self._memos.values():
            memo.clear()

    @classmethod
    def forget_evaluations_of(cls, path: str, owner) -> None:
        """Empty the memos of every model alive of the file at `path` of project `owner` (or of none)."""
        for model in list(cls._alive):
            if model.path == path and (model.owner is owner or model.owner is None):
                model.forget_evaluations()

    @classmethod
    @contextlib.contextmanager
    def evaluating_in(cls, memo_name: str):
        """Meanwhile every model's `eval_cache` (those made meanwhile too) is its memo `memo_name`: answers
        of an evaluation that asks other questions (`Evaluator.own_module_call_sites`) kept apart from the
        full evaluation's, which a later analysis of the same module reads."""
        previous = ModuleModel._memo_name
        ModuleModel._memo_name = memo_name
        try:
            yield
        finally:
            ModuleModel._memo_name = previous

    def mentions(self, word: str) -> bool:
        """Whether the text holds `word` anywhere: the cheap test before a search for what it names,
        asked once a module rather than once for each of its entry points."""
        read = current()
        if read is not None and self.owner is not None:  # forgotten at an edit that changes the answer (`Project._patch`)
            read.add(self.owner.read_key(self.path, ("mentions", word)))
        found = self._mentions.get(word)
        if found is None:
            found = self._mentions[word] = word in self.source.text
        return found

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The scope a node's names are looked up in (decorators and defaults belong outside)."""
        known = self._scope_of
        found = known.get(node)
        if found is not None:
            return found
        # Climb to the first scope boundary, or to a node whose answer is known: below a boundary a
        # node's scope is its parent's, so every node passed on the way gets the same answer.
        passed = []
        child, parent = node, self.parents.get(node)
        found = self.tree
        while parent is not None:
            passed.append(child)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if id(child) in self._body_ids(parent):
                    found = parent
                    break
            elif isinstance(parent, ast.Lambda):
                if child is parent.body:
                    found = parent
                    break
            elif isinstance(parent, ast.Module):
                found = parent
                break
            above = known.get(parent)
            if above is not None:
                found = above
                break
            child, parent = parent, self.parents.get(parent)
        for each in passed:
            known[each] = found
        return found

    def _body_ids(self, scope: ast.AST) -> frozenset[int]:
        ids = self._body_id_sets.get(scope)
        if ids is None:
            ids = self._body_id_sets[scope] = frozenset(map(id, scope.body))
        return ids

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        scope = self.scope_of(node)
        while isinstance(scope, ast.ClassDef):
            scope = self.scope_of(scope)
        return scope if isinstance(scope, FunctionNode) else None

    def enclosing_class(self, func: ast.AST) -> ast.ClassDef | None:
        scope = self.scope_of(func)
        return scope if isinstance(scope, ast.ClassDef) else None

    def outer_scope(self, scope: ast.AST) -> ast.AST | None:
        """The next scope for name lookup; class bodies are skipped, as Python does."""
        if isinstance(scope, ast.Module):
            return None
        outer = self.scope_of(scope)
        while isinstance(outer, ast.ClassDef):
            outer = self.scope_of(outer)
        return outer

    def lookup(self, name: str, scope: ast.AST, line: int) -> Binding | None:
        """The binding a use of `name` at `line` in `scope` sees, Python's LEGB minus builtins."""
        scopes = self.scopes
        read = current()
        if read is not None:
            read.add(("bind", id(scope), name))
        own = scopes.get(scope)
        bindings = own.bindings.get(name) if own is not None else None
        if bindings:
            if bindings[-1].lineno <= line:  # the last one is above the use: no need to look at the others
                return bindings[-1]
            before = [b for b in bindings if b.lineno <= line]
            return (before or bindings)[-1]
        above = self.outer_scope(scope)
        while above is not None:
            if read is not None:
                read.add(("bind", id(above), name))
            outer = scopes.get(above)
            bindings = outer.bindings.get(name) if outer is not None else None
            if bindings:
                return bindings[-1]
            above = self.outer_scope(above)
        return None

    def calls_named(self, *names: str) -> list[ast.Call]:
        """Calls whose callee ends in one of `names` (`f(...)`, `x.f(...)`), in `calls` order: an index,
        so finding a function's call sites does not scan every call of the module."""
        positions = self._call_positions
        read = current()
        if read is not None:
            for name in names:
                read.add(("calls", id(self), name))
        if len(names) == 1:
            indexes = positions.get(names[0], ())
        else:
            indexes = sorted(i for name in set(names) for i in positions.get(name, ()))
        return [self.calls[i] for i in indexes]

    def calls_named_or_aliased(self, name: str) -> list[ast.Call]:
        """`calls_named(name)` and the calls of a bare name an assignment or import binds (`rs(...)` after
        `rs = pl.run_scoped`: what may be an alias of it), in `calls` order: an index of the second kind
        once a module, so each API's search does not look up the callee of every call again."""
        read = current()
        if read is not None:
            read.add(("calls", id(self), name))
            read.add(("calls", id(self), "*"))
        if self._aliased_calls is None:
            self._aliased_calls = []
            for i, call in enumerate(self.calls):
                func = call.func
                if func.__class__ is ast.Name:
                    binding = self.lookup(func.id, self.scope_of(call), call.lineno)
                    if binding is not None and binding.kind in ("assign", "import"):
                        self._aliased_calls.append(i)
        indexes = sorted({*self._call_positions.get(name, ()), *self._aliased_calls})
        return [self.calls[i] for i in indexes]

    def calls_or_partials_of(self, name: str) -> list[ast.Call]:
        """Calls of `f` and `partial(f, ...)` for a callee whose last name is `name`, in `calls` order:
        a module with hundreds of `functools.partial` decorators need not look at each for every name."""
        read = current()
        if read is not None:
            read.add(("calls", id(self), name))
        indexes = sorted({*self._call_positions.get(name, ()), *self._partial_positions.get(name, ())})
        return [self.calls[i] for i in indexes]

    def own_call_ids(self) -> frozenset[int]:
        """The ids of this module's calls (a `functools.partial` alias is followed only through
        them); kept until an edit changes its calls (`model_patch`)."""
        found = self.__dict__.get("_call_ids")
        if found is None:
            found = self._call_ids = frozenset(map(id, self.calls))
        return found

    def module_binding(self, name: str) -> Binding | None:
        read = current()
        if read is not None:
            read.add(("bind", id(self.tree), name))
        bindings = self.scopes[self.tree].bindings.get(name)
        return bindings[-1] if bindings else None

    def segment(self, node: ast.AST, limit: int = 80) -> str:
        text = self.source_segment(node) or ast.unparse(node)
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def source_segment(self, node: ast.AST) -> str | None:
        """`ast.get_source_segment(text, node)` without re-splitting the whole text on every call
        (that made analysis quadratic in the file's length)."""
        lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return None
        if self._segment_lines is None:
            self._segment_lines = _LINE_WITH_END.findall(self.source.text)
        lines = self._segment_lines
        first, last = lineno - 1, end_lineno - 1
        if not 0 <= first <= last < len(lines):
            return None
        if first == last:
            return lines[first].encode()[col:end_col].decode()
        head = lines[first].encode()[col:].decode()
        tail = lines[last].encode()[:end_col].decode()
        return "".join([head, *lines[first + 1:last], tail])


# Lines as `ast` counts them (only \r\n, \n and \r end a line), each with its end: ast's own pattern.
_LINE_WITH_END = re.compile(r"([^\r\n]*(?:\r\n|\n|\r|$))")  # a line and its end; no lazy match tried at every character


def _link_parents(tree: ast.AST, parents: dict[ast.AST, ast.AST]) -> None:
    """parents[child] = node for every node but the token nodes (`Load`, `Add`: one shared object each, whose
    parent means nothing), in `ast.walk` order."""
    queue = [tree]
    append = queue.append
    children = CHILDREN
    index = 0
    while index < len(queue):
        node = queue[index]
        index += 1
        for child in children[node.__class__](node):
            parents[child] = node
            append(child)


_VISIT: dict[type, object] = {}


class _Builder:
    """Walks the tree with an explicit work list, not recursion: a valid 500-term expression
    (`a + a + ... + a`) nests 500 deep, past Python's recursion limit.

    Each visit method runs its immediate work, then schedules, in order, the children to visit and
    the actions (binding a name, leaving a scope) to run between them; the order of everything is
    exactly that of a recursive pre-order walk.
    """

    def __init__(self, model: ModuleModel):
        self.model = model
        self.stack: list[Scope] = []
        self.todo: list = []

    def build(self) -> None:
        tree = self.model.tree
        _link_parents(tree, self.model.parents)
        self._enter(tree)
        self.then(*tree.body, self._leave)
        self.run()

    def run(self) -> None:
        """Visit what is scheduled (`then`), and what that schedules, to the end."""
        todo = self.todo
        while todo:
            item = todo.pop()
            if isinstance(item, ast.AST):
                method = _VISIT.get(item.__class__)
                if method is None:
                    method = _VISIT[item.__class__] = getattr(
                        _Builder, "visit_" + item.__class__.__name__, _Builder.generic_visit)
                method(self, item)
            else:
                item()

    def then(self, *items) -> None:
        """Visit these nodes / run these actions next, in this order (before anything scheduled earlier)."""
        self.todo.extend(reversed(items))

    def generic_visit(self, node: ast.AST) -> None:
        children = child_nodes(node)  # a token node binds nothing and holds nothing
        children.reverse()
        self.todo.extend(children)

    def _enter(self, node: ast.AST) -> Scope:
        scope = Scope(node)
        self.model.scopes[node] = scope
        self.stack.append(scope)
        return scope

    def _leave(self) -> None:
        self.stack.pop()

    def _bind(self, name: str, binding: Binding) -> None:
        self.stack[-1].add(name, binding)

    def _bind_target(self, target: ast.AST, value: ast.expr | None, stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            kind = "assign" if value is not None else "other"
            self._bind(target.id, Binding(kind, stmt, target.lineno, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            flat = value is not None and values is None and not any(isinstance(e, ast.Starred) for e in target.elts)
            for i, element in enumerate(target.elts):
                if flat and isinstance(element, ast.Name):  # `rows, cols = x.shape`: item i of the value
                    self._bind(element.id, Binding("unpack", stmt, element.lineno, value, index=(i, len(target.elts))))
                else:
                    self._bind_target(element, values[i] if values else None, stmt)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, stmt)

    # The scope each name, call, def and class is visited in is what `scope_of` climbs to (decorators, defaults
    # and bases are visited before the scope is entered): kept now, since the evaluator asks it of every name.
    def visit_Name(self, node: ast.Name) -> None:
        self.model._scope_of[node] = self.stack[-1].node

    def _function(self, node: ast.AST) -> None:
        self.model._scope_of[node] = self.stack[-1].node
        args = node.args
        defaults = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]

        def enter() -> None:
            if not isinstance(node, ast.Lambda):
                self._bind(node.name, Binding("def", node, node.lineno))
            self.model.functions.append(node)
            self._enter(node)
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    self._bind(arg.arg, Binding("param", arg, arg.lineno))

        body = node.body if isinstance(node.body, list) else [node.body]
        self.then(*getattr(node, "decorator_list", []), *defaults, enter, *body, self._leave)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.model._scope_of[node] = self.stack[-1].node

        def enter() -> None:
            self._bind(node.name, Binding("class", node, node.lineno))
            self._enter(node)

        self.then(*node.decorator_list, *node.bases, *node.keywords, enter, *node.body, self._leave)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self._bind(name, Binding("import", alias, node.lineno, import_from=node))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                self._bind(alias.asname or alias.name, Binding("import", alias, node.lineno, import_from=node))

    def visit_Assign(self, node: ast.Assign) -> None:
        items: list = [node.value]
        for target in node.targets:
            items.append(lambda target=target: self._bind_target(target, node.value, node))
            if not isinstance(target, ast.Name):
                items.append(target)
        self.then(*items)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        bind = lambda: self._bind_target(node.target, node.value, node)  # noqa: E731
        self.then(*([node.value] if node.value is not None else []), bind)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.then(node.value, lambda: self._bind_target(node.target, None, node))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.then(node.value, lambda: self._bind(node.target.id, Binding("assign", node, node.lineno, node.value)))

    def _loop_target(self, node: ast.AST) -> None:
        self._bind_target(node.target, None, node)
        self.generic_visit(node)

    visit_For = visit_AsyncFor = _loop_target

    def visit_With(self, node: ast.With) -> None:
        self.model.withs.append(node)
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None, node)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name, Binding("other", node, node.lineno))
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        pass

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is not None:
            self.model._call_positions.setdefault(name, []).append(len(self.model.calls))
        if name == "partial" and node.args:
            first = node.args[0]
            bound = first.id if isinstance(first, ast.Name) else first.attr if isinstance(first, ast.Attribute) else None
            if bound is not None:
                self.model._partial_positions.setdefault(bound, []).append(len(self.model.calls))
        self.model.calls.append(node)
        self.model._scope_of[node] = self.stack[-1].node
        self.generic_visit(node)
