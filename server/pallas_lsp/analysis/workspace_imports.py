"""What an absolute import into a workspace module binds, answered from the modules' own top-level
statements instead of jedi.

In a workspace that is a big package (jax's own), every import of the package's modules is a
workspace answer: jedi loaded dozens of modules' trees per analysed file for them (most of the
server's peak memory) and asked again in every new process (most of a cold start). Here the target
module's top-level names are read from its syntax tree (a small table per module, kept while the
file's stamp or unsaved text stays the same) and followed through re-exports, giving the answer jedi
gives: the same module, name, line, type and dotted names. Whatever jedi might answer differently
is left to jedi (`None`): relative imports, stubs (`.pyi`) beside a module whose names are asked,
names bound conditionally (but for `if TYPE_CHECKING:`), by `global` or `*`, modules with `__getattr__`, extension
modules and namespace packages met before the workspace file on jedi's search path.

Imports into installed modules (jax in site-packages, when the workspace is a user project or a
folder of jax) are answered the same way (`targets(..., installed=True)`): on a first run, with no
answer on disk yet, jedi parsed each target module with parso (most of a first `check`). Modules
jedi's bundled typeshed has third-party stubs for, and `-stubs` packages, are left to jedi. A
standard module is answered only where jedi goes from typeshed's stub to the module's source: the
stub exists and binds the name, and the source (found on the interpreter's path, not in the
workspace root) binds it once; names missing from the stub are jedi's. A C module (built in, or
only an extension module on the path) and an extension module with a `.pyi` beside it are answered
as jedi answers them, with the stub module; their names stay jedi's. A name a standard stub gets
from its one star import (`collections.abc.Sequence`) is followed through the stubs as jedi does;
a def/class replaced by its C version's `try:` import (`functools.partial`) gets jedi's two
answers, in a fixed order (jedi's changes between runs; the analysis' value is the same).
"""

from __future__ import annotations

import ast
import re
import logging
import contextlib
import functools
import importlib.util
import os
import sys
from dataclasses import dataclass

from . import big_literals, disk_cache, reads
from .model import Binding, walk_nodes
from ..source_text import read_source


@dataclass(frozen=True)
class ImportTarget:
    """What jedi's `goto` found, as plain facts (jedi's own objects pin its whole inference state)."""

    module_path: str | None
    module_name: str
    line: int | None
    type: str
    name: str
    full_name: str | None

    @classmethod
    def of(cls, definition) -> "ImportTarget":
        path = str(definition.module_path) if definition.module_path else None
        return cls(os.path.abspath(path) if path else None, definition.module_name or "", definition.line,
                   definition.type, definition.name, definition.full_name)


# The path jedi is given for a probe script (its text is handed over; beside the module asked about).
PROBE_NAME = "_pallas_lsp_import_probe_.py"

log = logging.getLogger(__name__)

FOLLOW_LIMIT = 8  # re-exports followed before giving up (jedi then answers)
_EXTENSION_SUFFIXES = (".so", ".pyd")


@dataclass(frozen=True)
class Exports:
    """A module's top-level names: name -> ("function"|"class"|"statement", line),
    ("module", dotted, line) for `import a.b [as n]`, ("from", level, module, name, line);
    `multiple`: the names among them bound more than once (the last reachable binding is jedi's)."""

    names: dict
    unclear: frozenset
    star: bool
    multiple: frozenset = frozenset()
    extends_path: bool = False  # `pkgutil.extend_path` / `declare_namespace`: jedi searches other folders
    # name -> (kind, line of the def/class, line of the import) for a pure-Python def or class
    # replaced by its C version (`try: from _functools import partial` / `except ImportError: pass`)
    accelerated: dict | None = None
    star_modules: tuple = ()  # (level, module) of each reachable top-level `from module import *`


# A `global` statement's start: the keyword before a name, first on its line or after `;` or `:` (also
# in a string: then the tree is walked for nothing; "get_global" or a comment's "global step" is no match).
_SPACE = r"(?:[ \t\f]|\\(?:\r\n?|\n))"
_GLOBAL_STATEMENT = re.compile(rf"(?:^|(?<=\r)|[;:]){_SPACE}*global{_SPACE}+[^\W\d]", re.MULTILINE)

# jedi's flow analysis answers "unsure" for every binding in these (`is_big_annoying_library`): all
# of a name's bindings, not the last one
_FLOW_ANALYSIS_SKIPPED = frozenset({"pandas", "numpy", "tensorflow", "matplotlib"})


def module_exports(text: str, parsed=None) -> Exports | None:
    """The top-level bindings of a module text (None: it does not parse).

    A name bound several times by plain top-level statements (`@overload` defs and the final def)
    is jedi's last binding: its flow analysis goes back from the last one and stops at the first
    surely reachable. The body of `if TYPE_CHECKING:` (the name imported from `typing`, which jedi
    takes as true) is reachable too, its `else:` unreachable (the other way round for `if not
    TYPE_CHECKING:`). Any other flow leaves the name to jedi. `parsed(text)`: its tree, as
    `big_literals.parse` gives it (the project's, parsed once for the module's model too)."""
    try:
        tree = (parsed or big_literals.parse)(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound: dict[str, list] = {}  # name -> [(entry, reachable), ...] in the order of the text
    unclear: set[str] = set()
    guarded: set[str] = set()  # bound under `if TYPE_CHECKING:` (clear only if that name is typing's)
    star = False
    star_modules = []
    type_checking_ifs = []
    accelerator_imports: dict[str, list[int]] = {}  # name -> lines of its `try: from _c import name`

    def bind(name: str, entry: tuple, reachable: bool = True) -> None:
        bound.setdefault(name, []).append((entry, reachable))

    def plain(statement: ast.AST, reachable: bool = True) -> bool:
        """Bind what a plain statement binds; False: not a plain one (nothing bound)."""
        nonlocal star
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bind(statement.name, ("function", statement.lineno), reachable)
        elif isinstance(statement, ast.ClassDef):
            bind(statement.name, ("class", statement.lineno), reachable)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    bind(alias.asname, ("module", alias.name, statement.lineno), reachable)
                else:
                    top = alias.name.split(".")[0]
                    bind(top, ("module", top, statement.lineno), reachable)
        elif isinstance(statement, ast.ImportFrom):
            if any(alias.name == "*" for alias in statement.names):
                if not reachable:
                    return False
                star = True
                star_modules.append((statement.level, statement.module or ""))
            for alias in statement.names:
                if alias.name != "*":
                    bind(alias.asname or alias.name,
                         ("from", statement.level, statement.module or "", alias.name, statement.lineno), reachable)
        elif isinstance(statement, ast.Assign) and all(_plain_targets(t) for t in statement.targets):
            for target in statement.targets:
                for name in _target_names(target):
                    bind(name.id, ("statement", name.lineno), reachable)
                unclear.update(_item_assigned_names(target))
            unclear.update(_walrus_names(statement.value))
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None and isinstance(statement.target, ast.Name):
            bind(statement.target.id, ("statement", statement.target.lineno), reachable)
            unclear.update(_walrus_names(statement.value))
        else:
            return False
        return True

    for statement in tree.body:
        if plain(statement):
            continue
        accelerator = _accelerator_import(statement)
        if accelerator is not None:
            for name, line in accelerator.items():
                accelerator_imports.setdefault(name, []).append(line)
            continue
        checking = _type_checking_test(statement)
        if checking is not None:
            type_checking_ifs.append(statement)
            guarded.update(_bound_names(statement))
            for branch, reachable in ((statement.body, checking), (statement.orelse, not checking)):
                for inner in branch:
                    if not plain(inner, reachable):
                        unclear.update(_bound_names(inner))
            continue
        # if / try / with / for / augmented assignment ...: whatever it binds is left to jedi
        unclear.update(_bound_names(statement))
    if type_checking_ifs:
        typing_name = bound.get("TYPE_CHECKING")
        if not (typing_name and len(typing_name) == 1 and typing_name[0][0][:4] == ("from", 0, "typing", "TYPE_CHECKING")
                and typing_name[0][1] and "TYPE_CHECKING" not in unclear
                and typing_name[0][0][4] < type_checking_ifs[0].lineno):
            unclear.update(guarded)  # not typing's TYPE_CHECKING: jedi evaluates the test
    if "global" in text and _GLOBAL_STATEMENT.search(text):  # the tree walked only where one may be
        unclear.update(name for node in walk_nodes(tree) if isinstance(node, ast.Global) for name in node.names)
    accelerated = {}
    for name, lines in accelerator_imports.items():
        only = bound.get(name, [])
        if (len(lines) == 1 and name not in unclear and len(only) == 1 and only[0][1]
                and only[0][0][0] in ("function", "class") and only[0][0][1] < lines[0]):
            accelerated[name] = (only[0][0][0], only[0][0][1], lines[0])
        unclear.add(name)  # jedi's: the def and the import, in either order (`accelerated` says which)
    names: dict = {}
    multiple = set()
    for name, bindings in bound.items():
        reachable = [entry for entry, sure in bindings if sure]
        if len(bindings) > 1:
            multiple.add(name)
        if not reachable:
            unclear.add(name)
        elif name not in unclear:
            names[name] = reachable[-1]
    if "__getattr__" in names:
        star = True  # any name may come from it
    head = "".join(text.splitlines(keepends=True)[:50])  # where jedi looks for them
    extends_path = "declare_namespace(__name__)" in head or "extend_path(__path__" in head
    return Exports(names, frozenset(unclear), star, frozenset(multiple), extends_path, accelerated,
                   tuple(star_modules))


def _accelerator_import(statement: ast.AST) -> dict[str, int] | None:
    """{name: line} for `try: from _module import name, ...` / `except ImportError: pass` (a standard
    module's C version replacing the pure-Python one bound before it), else None."""
    if not isinstance(statement, ast.Try) or statement.orelse or statement.finalbody or len(statement.handlers) != 1:
        return None
    handler = statement.handlers[0]
    if not (isinstance(handler.type, ast.Name) and handler.type.id == "ImportError" and handler.name is None
            and len(handler.body) == 1 and isinstance(handler.body[0], ast.Pass)):
        return None
    found = {}
    for inner in statement.body:
        if not (isinstance(inner, ast.ImportFrom) and not inner.level and (inner.module or "").startswith("_")):
            return None
        for alias in inner.names:
            if alias.name == "*" or alias.asname:
                return None
            found[alias.name] = alias.lineno
    return found or None


def _type_checking_test(statement: ast.AST) -> bool | None:
    """True for `if TYPE_CHECKING:` (its body is what jedi reaches), False for `if not TYPE_CHECKING:`
    (its `else:`), None for any other statement (and any `elif`: jedi tests that branch on its own)."""
    if not isinstance(statement, ast.If) or (len(statement.orelse) == 1 and isinstance(statement.orelse[0], ast.If)):
        return None
    test, checking = statement.test, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, checking = test.operand, False
    return checking if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" else None


def _plain_targets(target: ast.AST) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain_targets(t.value if isinstance(t, ast.Starred) else t) for t in target.elts)
    return isinstance(target, (ast.Name, ast.Attribute, ast.Subscript))


def _target_names(target: ast.AST):
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element.value if isinstance(element, ast.Starred) else element)


def _item_assigned_names(target: ast.AST) -> set[str]:
    """`x[k] = v` binds `x` again for jedi (an item assignment is one of its definitions)."""
    found = set()
    for node in ast.walk(target):
        if isinstance(node, ast.Subscript):
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                found.add(base.id)
    return found


def _walrus_names(node: ast.AST) -> set[str]:
    return {n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)}


def _bound_names(statement: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                found.update(_item_assigned_names(target))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Global):
            found.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
    return found


class WorkspaceImports:
    """Answers `Resolver._import_targets` for absolute imports that land in workspace modules."""

    def __init__(self, project):
        self.project = project
        self._exports: dict[str, tuple[object, Exports | None]] = {}
        self._search_path: list[str] | None = None
        self.read: list[str] = []  # the module files the last `targets` call read (what its answer depends on)
        # With file events trusted and no reads recorded (`check`): each answer, with what it read, by the
        # import as written and, where it matters, the importer's folder (all an answer depends on), while no text or file
        # changes; the same import in many modules of a folder (every test's `from pkg.kernels import ...`)
        # was answered again in each. (the project's change count, {key: (answer, read)})
        self._answered: tuple[int, dict] = (-1, {})

    # ---- where jedi looks ------------------------------------------------------------------------

    def search_path(self) -> list[str] | None:
        """jedi's path for absolute imports of a workspace file: the workspace root, then the
        interpreter's `sys.path` (kept on disk per interpreter, checked against its folders'
        stamps: asking means starting the interpreter). The importer's parent folders jedi appends
        after those are left out: a module found only there is left to jedi. None when the
        interpreter cannot say (then jedi, which needs it too, is left every answer)."""
        if self._search_path is None:
            sys_path = _interpreter_sys_path(self.project)
            self._search_path = [self.project.root, *(p for p in sys_path if p and p != self.project.root)] \
                if sys_path is not None else []
        return self._search_path or None

    def _locate(self, dotted: str, installed: bool = False, namespace: bool = False) -> str | None:
        """The workspace file jedi imports for `dotted` (None: not one, or not surely); with
        `installed`, any source file found on jedi's search path (an installed module); with
        `namespace`, the folder (ending in a separator) of a namespace package inside a package."""
        parts = dotted.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        standard = parts[0] in sys.stdlib_module_names
        if standard and not (installed and _stdlib_stub(dotted)):
            return None  # jedi answers standard modules from typeshed's stubs first
        if installed and not standard and parts[0] in _bundled_stub_names():
            return None  # jedi answers from its own stubs first
        found, search = None, self.search_path()
        portion = False  # a namespace package's folder met on the way
        for folder in search or ():
            if os.path.isdir(os.path.join(folder, parts[0] + "-stubs")):
                return None
            found = _find_in(folder, parts[0])
            if found == "?" and not standard and _namespace_portion(folder, parts[0]):
                # importlib's path finder (jedi's, in the interpreter) goes on: a regular package or a
                # module further on the path wins over it (jax's tree exported beside the installed jax:
                # its `jax/` holds no `__init__.py`, and every `jax.*` import went to jedi)
                portion, found = True, None
                continue
            if found is not None:
                if standard and folder == self.project.root:
                    return None  # a workspace module shadowing a standard one: jedi's stub decides
                if standard and len(parts) == 1 and found == "?" and _extension_only(folder, parts[0]):
                    found = _stdlib_stub(dotted)  # a C module (`math` in lib-dynload): jedi keeps the stub
                break
        else:
            if portion:
                return None  # only namespace folders: jedi's namespace package
            if standard and len(parts) == 1 and search:
                found = _stdlib_stub(dotted)  # built into the interpreter (`itertools`): the stub
        for part in parts[1:]:
            if found is None or found == "?":
                return None
            if found.endswith(os.sep):  # a namespace package inside a package: its one folder
                folder = found
            elif found.endswith("__init__.py"):
                exports = self.exports(found)
                if exports is None or exports.extends_path:
                    return None  # jedi looks for the package's other folders
                folder = os.path.dirname(found)
            else:
                return None
            found = _find_in(folder, part, inside_package=True)
        if not found or found == "?" or (found.endswith(os.sep) and not namespace) \
                or not (installed or self.project.is_workspace_file(found)):
            return None
        self.read.append(found)
        return found

    def standard_module_file(self, top: str) -> str | None:
        """The standard library's source of the top-level module `top`, where an absolute import of it finds
        that one first on jedi's search path (typeshed has its stub; no workspace module of its name at the
        root, nor one in a folder before the standard library's, the folder holding `os.py`); else None."""
        read = list(self.read)  # the last `targets` call's, as it left them
        found = self._locate(top, installed=True)
        self.read = read
        if found is None or self.project.is_workspace_file(found) \
                or not os.path.isfile(os.path.join(os.path.dirname(found), "os.py")):
            return None
        return found

    def assigned_only(self, module: str, name: str) -> tuple[str, int] | None:
        """(file, first line) of the installed module `module`, where every binding of `name` in it is an
        assignment statement (`name = ...`, `name: T`, `name += ...`) at its top level or in its blocks (`if`, `try`,
        `for`: bound conditionally, which the tables leave to jedi): jedi answers `from module import name` with
        those statements, whichever of them its flow analysis keeps. None where anything else may answer: a stub
        beside it, a submodule of that name, a star import, `__getattr__`, a `global` statement, or any other
        binding (an import, a def or class, a loop or `with` target, a walrus, `except ... as`, a match capture)."""
        read = list(self.read)
        path = self._locate(module, installed=True)
        self.read = read
        if path is None or not path.endswith(".py") or os.path.exists(path + "i") \
                or self.project.is_workspace_file(path):
            return None
        if path.endswith("__init__.py") and _find_in(os.path.dirname(path), name, inside_package=True) is not None:
            return None
        try:
            text = read_source(path)
            tree = self.project.parsed_tree(path, text)
        except (OSError, UnicodeDecodeError, ValueError, SyntaxError, RecursionError, MemoryError):
            return None
        if "global" in text or "__getattr__" in text:
            return None
        line = _first_assignment(tree, name)
        return (path, line) if line is not None else None

    def absent(self, importer: str, binding: Binding) -> bool:
        """Whether an absolute import names a top-level module found nowhere jedi looks (`absl` when
        it is not installed): jedi answers nothing for it, and was asked again in every process."""
        statement, alias = binding.import_from, binding.node
        if isinstance(statement, ast.ImportFrom) and (statement.level or not statement.module):
            return False
        top = (alias.name if isinstance(statement, ast.Import) else statement.module).split(".")[0]
        if top in sys.stdlib_module_names or top in sys.builtin_module_names or not top.isidentifier():
            return False
        search = self.search_path()
        if search is None or top in _bundled_stub_names():
            return False
        folders = [*search, *_folders_between(self.project.root, os.path.dirname(importer))]
        for folder in folders:
            listing = _listing(folder)
            if listing is None:
                continue
            if listing is _UNREADABLE or listing.editable_finder or top in listing.stems or top + "-stubs" in listing.names:
                return False  # found, or jedi may find it there
        return True

    # ---- module tables ---------------------------------------------------------------------------

    def exports(self, path: str) -> Exports | None:
        reads.note(self.project.read_key(path))
        reads.note(self.project.read_key(path, "exports"))  # forgotten at an edit of its top-level statements
        text = self.project.overlay.get(path)
        key = text if text is not None else disk_cache.stamp(path)
        cached = self._exports.get(path)
        if cached is not None and (cached[0] is key or cached[0] == key):
            return cached[1]
        if text is None:
            self.project.read_from_disk(path)
            try:
                text = read_source(path)
            except (OSError, UnicodeDecodeError, ValueError):
                return None
        found = module_exports(text, functools.partial(self.project.parsed_tree, path))
        self._exports[path] = (key, found)
        return found

    # ---- answers ---------------------------------------------------------------------------------

    def targets(self, importer: str, binding: Binding, installed: bool = False) -> tuple | None:
        """What jedi's goto (following imports) gives for the name `binding` binds in the module at
        `importer`, or None. Without `installed`, only imports into the workspace are answered (no
        search path asked unless the name can be a workspace package); with it, imports into any
        module on the interpreter's search path too (the caller keeps those answers on disk)."""
        statement, alias = binding.import_from, binding.node
        if not self.project.index.trust_events or reads.tracking():
            return self._targets(importer, statement, alias, installed)
        changes = self.project._change_count
        if self._answered[0] != changes:
            self._answered = (changes, {})
        level = getattr(statement, "level", 0)
        # Only a relative import, or the workspace-only question (`_may_be_workspace_package`), depends on
        # where the importer is: an absolute import into installed modules is answered once for every folder.
        folder = None if installed and not level else os.path.dirname(os.path.abspath(importer))
        key = (folder, isinstance(statement, ast.Import), level, getattr(statement, "module", None), alias.name,
               alias.asname is not None, installed)
        found = self._answered[1].get(key)
        if found is None:
            found = self._answered[1][key] = (self._targets(importer, statement, alias, installed), self.read)
        self.read = list(found[1])
        return found[0]

    def _targets(self, importer: str, statement, alias, installed: bool) -> tuple | None:
        self.read = []
        if isinstance(statement, ast.Import):
            dotted = alias.name if alias.asname else alias.name.split(".")[0]
        elif statement.level:
            dotted = self._relative(importer, statement.level, statement.module, installed)
            if dotted is None:
                return None
            return self._name(dotted, alias.name, FOLLOW_LIMIT, installed)
        elif not statement.module:
            return None
        else:
            dotted = statement.module
        if not installed and not self._may_be_workspace_package(importer, dotted.split(".")[0]):
            return None  # a library: answered with `installed`, after the answers on disk
        if isinstance(statement, ast.Import):
            return self._module(dotted, installed=installed)
        return self._name(dotted, alias.name, FOLLOW_LIMIT, installed)

    def _relative(self, importer: str, level: int, module: str | None, installed: bool) -> str | None:
        """The absolute name jedi gives a relative import's module: the importer's package as jedi
        names it (the probe beside the importer, named by the shortest way down from an entry of its
        search path), less `level - 1` names. None where jedi would guess by folders instead (a level
        above that name), where the name would find another file than the folders name, or for a
        library's module without `installed`."""
        folder = os.path.dirname(os.path.abspath(importer))
        names = self._names_as_jedi(os.path.join(folder, PROBE_NAME))
        if names is None or level > len(names) - 1:
            return None
        parts = module.split(".") if module else []
        dotted = ".".join([*names[:len(names) - level], *parts])
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        named = os.path.join(folder, *parts)
        expected = {named + ".py", os.path.join(named, "__init__.py")} if parts else {os.path.join(named, "__init__.py")}
        located = self._locate(dotted, installed=True)
        if located is None or os.path.abspath(located) not in expected:
            return None
        if not installed and not self.project.is_workspace_file(located):
            return None  # a library's own module: answered with `installed`, after the answers on disk
        return dotted

    def _names_as_jedi(self, path: str) -> list[str] | None:
        """jedi's `transform_path_to_dotted` of a file on the search path: of every entry the path
        starts with (as a string), the shortest rest, split at separators."""
        stem = os.path.splitext(path)[0]
        if os.path.basename(stem).startswith("."):
            return None
        found = []
        for entry in self.search_path() or ():
            if stem.startswith(entry):
                rest = stem[len(entry):].lstrip(os.sep)
                if rest:
                    split = rest.split(os.sep)
                    if not all(split):
                        break  # jedi gives up on every entry here
                    found.append([re.sub(r"-stubs$", "", part) for part in split])
        return min(found, key=len) if found else None

    def _may_be_workspace_package(self, importer: str, top: str) -> bool:
        """Whether a top-level name can be found in the workspace at all (cheap: no search path)."""
        root = self.project.root
        return (top == os.path.basename(root) or os.path.exists(os.path.join(root, top))
                or os.path.exists(os.path.join(root, top + ".py"))
                or self.project.find_module(top, self.project.import_roots(importer)) is not None)

    def _module(self, dotted: str, path: str | None = None, installed: bool = False) -> tuple | None:
        path = path or self._locate(dotted, installed)
        if path is None:
            return None
        return (ImportTarget(os.path.abspath(path), dotted, 1, "module", dotted.rsplit(".", 1)[-1], dotted),)

    def _name(self, module: str, name: str, budget: int, installed: bool = False) -> tuple | None:
        """`from module import name`, as jedi's goto follows it."""
        path = self._locate(module, installed, namespace=True)
        if path is None or budget <= 0 or name.startswith("__") or path.endswith(".pyi"):
            return None  # (a stub's names: jedi's)
        if path.endswith(os.sep):  # a namespace package (`jaxlib.mlir.dialects`): only submodules
            return self._module(f"{module}.{name}", installed=installed)
        if os.path.exists(path[:-3] + ".pyi"):
            return None  # jedi reads the stub's names first
        stub = _stdlib_stub(module) if module.split(".")[0] in sys.stdlib_module_names else None
        if stub is not None:  # jedi finds the name in typeshed's stub, then the module's own binding
            stub_exports = self.exports(stub)
            if stub_exports is None or (name not in stub_exports.names and name not in stub_exports.unclear
                                        and not stub_exports.star):
                return None
        exports = self.exports(path)
        if stub is not None and exports is not None and name in (exports.accelerated or {}):
            return self._accelerated(path, module, name, exports.accelerated[name])
        if stub is not None and stub_exports.star and name not in stub_exports.names \
                and name not in stub_exports.unclear:
            return self._through_stub_star(stub_exports, stub, name, budget, installed)
        if exports is None or name in exports.unclear:
            return None
        if name in exports.multiple and (stub is not None or module.split(".")[0] in _FLOW_ANALYSIS_SKIPPED):
            return None  # jedi's answer from the stub's source, or every binding: left to it
        entry = exports.names.get(name)
        if entry is None:
            if exports.star:
                return None
            if path.endswith("__init__.py"):  # a submodule of the package
                return self._module(f"{module}.{name}", installed=installed)
            return None
        kind = entry[0]
        if kind in ("function", "class", "statement"):
            return (ImportTarget(os.path.abspath(path), module, entry[1], kind, name, f"{module}.{name}"),)
        if kind == "module":
            return self._module(entry[1], installed=installed)
        _, level, source, imported, _line = entry
        if level:  # relative to the module reached here by its dotted name, as jedi (and Python) do
            base = (module if path.endswith("__init__.py") else module.rpartition(".")[0]).split(".")
            if not base[0] or level > len(base):
                return None
            source = ".".join(base[:len(base) - level + 1] + ([source] if source else []))
        if not source:
            return None
        if source == module and imported == name:
            # `from pkg import sub as sub` in pkg: the name finds its own statement, and jedi's
            # recursion guard then imports the submodule
            return self._module(f"{module}.{name}", installed=installed) if path.endswith("__init__.py") else None
        return self._name(source, imported, budget - 1, installed)

    def _accelerated(self, path: str, module: str, name: str, found: tuple) -> tuple:
        """A standard module's name bound by a pure-Python def/class and then by its C version's
        import (`functools.partial`, `reduce`): jedi answers both bindings, with the def's type, in an
        order that changes between runs. Ours: the def first, then the import. Either order gives the
        analysis the same value (`Resolver._value_from_definition` reads the first answer's module,
        type, name and dotted name, the same in both)."""
        kind, def_line, import_line = found
        return tuple(ImportTarget(os.path.abspath(path), module, line, kind, name, f"{module}.{name}")
                     for line in (def_line, import_line))

    def _through_stub_star(self, stub_exports: Exports, stub: str, name: str, budget: int, installed: bool):
        """A name a standard module's stub gets from its one star import (`collections.abc`'s
        `from _collections_abc import *`): jedi follows the stubs, where a star import brings a
        public name bound by a def, class or assignment, or imported `as` itself (`Sequence as
        Sequence`), then goes from the last stub to its module's source (`typing.Sequence`)."""
        if len(stub_exports.star_modules) != 1 or name.startswith("_"):
            return None
        level, source = stub_exports.star_modules[0]
        if level or source.split(".")[0] not in sys.stdlib_module_names:
            return None
        inner = _stdlib_stub(source)
        inner_exports = self.exports(inner) if inner else None
        if inner_exports is None or inner_exports.star or name not in inner_exports.names:
            return None
        entry = inner_exports.names[name]
        if entry[0] == "from":
            if entry[1] or not _reexported(inner, entry[4], name):
                return None
            return self._name(entry[2], entry[3], budget - 1, installed)
        if entry[0] == "module":
            return None
        return self._name(source, name, budget - 1, installed)


def _reexported(stub: str, line: int, name: str) -> bool:
    """Whether a stub's `from m import x as name` statement at `line` binds `name` with `as` (how
    a stub exports an imported name)."""
    tree = _stub_tree(stub)
    return tree is not None and any(isinstance(node, ast.ImportFrom) and node.lineno == line
                                    and any(alias.asname == name for alias in node.names) for node in tree.body)


@functools.lru_cache(maxsize=16)
def _stub_tree(stub: str) -> ast.Module | None:
    try:
        return ast.parse(read_source(stub))
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError):
        return None


@dataclass(frozen=True)
class _Listing:
    """A folder's entries, as the import searches above need them; kept while its stamp stays."""

    stamp: list
    names: frozenset
    stems: frozenset  # what precedes each entry's first dot: `jax` for `jax`, `jax.py`, `jax.cpython-312.so`
    editable_finder: bool  # setuptools' `__editable__` import hooks: modules found where jedi may look too


_listings: dict[str, _Listing | None] = {}
_UNREADABLE = _Listing([], frozenset(), frozenset(), True)


def _listing(folder: str) -> _Listing | None:
    """None: no such folder; `_UNREADABLE`: something jedi might still import from (a zip file)."""
    stamp = disk_cache.stamp(folder)
    cached = _listings.get(folder)
    if cached is not None and cached.stamp == stamp:
        return cached
    if stamp is None:
        return None
    try:
        names = frozenset(os.listdir(folder))
    except OSError:
        return _UNREADABLE
    listing = _Listing(stamp, names, frozenset(n.split(".", 1)[0] for n in names),
                       any(n.startswith("__editable__") for n in names))
    _listings[folder] = listing
    return listing


def _find_in(folder: str, name: str, inside_package: bool = False) -> str | None:
    """`name` in one folder as importlib's path finder sees it: a package's `__init__.py`, a
    module's `.py`, "?" for anything else jedi would find or go on from (an extension module, a
    namespace package, bytecode only, an unreadable folder), None when nothing is there. Inside a
    package (one folder searched), a folder with no `__init__.py` and no module of that name is a
    namespace package of that folder alone: its path with a trailing separator."""
    listing = _listing(folder)
    if listing is None or (listing is not _UNREADABLE and name not in listing.stems):
        return None
    if listing is _UNREADABLE:
        return "?"
    base = os.path.join(folder, name)
    if name in listing.names and os.path.isfile(os.path.join(base, "__init__.py")):
        return os.path.join(base, "__init__.py")
    if name + ".py" in listing.names and not any(n.startswith(name + ".") and n.endswith(_EXTENSION_SUFFIXES)
                                                 for n in listing.names):
        return base + ".py"
    if name + ".pyi" in listing.names and _extension_only(folder, name):
        return base + ".pyi"  # an extension module's stub beside it: what jedi answers for the module
    if inside_package and name in listing.names and os.path.isdir(base) \
            and not any(n.startswith(name + ".") for n in listing.names):
        return base + os.sep
    return "?"


def _namespace_portion(folder: str, name: str) -> bool:
    """Whether `name` in that folder is only a folder without `__init__` (a portion of a namespace
    package: the path finder remembers it and looks on), and no module of that name beside it."""
    listing = _listing(folder)
    if listing is None or listing is _UNREADABLE or name not in listing.names:
        return False
    if any(n != name and n.split(".", 1)[0] == name for n in listing.names):
        return False
    inner = _listing(os.path.join(folder, name))
    return inner is not None and inner is not _UNREADABLE and not any(n.startswith("__init__.") for n in inner.names)


def _extension_only(folder: str, name: str) -> bool:
    """Whether `name` in that folder is an extension module (`.so`) and nothing else importable."""
    listing = _listing(folder)
    if listing is None or listing is _UNREADABLE or name in listing.names or name + ".py" in listing.names:
        return False
    found = [n for n in listing.names if n.startswith(name + ".") and n != name + ".pyi"]
    return bool(found) and all(n.endswith(_EXTENSION_SUFFIXES) and n.count(".") in (1, 2) for n in found)


def _first_assignment(tree: ast.Module, name: str) -> int | None:
    """`WorkspaceImports.assigned_only`'s walk: the first line of the module's assignments of `name`, None where
    it is bound (or deleted) any other way, or not at all."""
    lines, statements = [], list(tree.body)
    while statements:
        statement = statements.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == name:
                return None
            continue  # its own scope (a `global` in it was looked for in the text)
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" or (a.asname or a.name.split(".")[0]) == name for a in statement.names):
                return None
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else []
        allowed = {id(t) for t in targets if isinstance(t, ast.Name)}
        for field, value in ast.iter_fields(statement):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.stmt):
                    statements.append(item)
                elif isinstance(item, (ast.ExceptHandler, ast.match_case)):
                    if getattr(item, "name", None) == name:
                        return None
                    statements.extend(item.body)
                    for part in (getattr(item, "type", None), getattr(item, "pattern", None), getattr(item, "guard", None)):
                        if part is not None and _binds(part, name, allowed):
                            return None
                elif isinstance(item, ast.AST) and _binds(item, name, allowed):
                    return None
        lines.extend(t.lineno for t in targets if id(t) in allowed and t.id == name)
    return min(lines) if lines else None


def _binds(node: ast.AST, name: str, allowed: set[int]) -> bool:
    """Whether `node` binds or deletes `name` other than as one of the `allowed` assignment targets."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id == name and not isinstance(inner.ctx, ast.Load) \
                and id(inner) not in allowed:
            return True
        if isinstance(inner, (ast.MatchAs, ast.MatchStar)) and inner.name == name \
                or isinstance(inner, ast.MatchMapping) and inner.rest == name:
            return True
    return False


def _folders_between(root: str, folder: str) -> list[str]:
    """The importer's folder and its parents below the workspace root (jedi searches them last)."""
    found = []
    while folder.startswith(root + os.sep):
        found.append(folder)
        folder = os.path.dirname(folder)
    return found


@functools.lru_cache(maxsize=1)
def _bundled_stub_names() -> frozenset[str]:
    """Top-level names jedi's own typeshed copy has stubs for: they answer imports of modules that
    are not installed (its `stdlib` folder, and `stubs/<distribution>/<module>`)."""
    spec = importlib.util.find_spec("jedi")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    typeshed = os.path.join(spec.submodule_search_locations[0], "third_party", "typeshed")
    folders = [os.path.join(typeshed, "stdlib")]
    with contextlib.suppress(OSError):
        stubs = os.path.join(typeshed, "stubs")
        folders += [os.path.join(stubs, name) for name in os.listdir(stubs)]
    names = set()
    for folder in folders:
        with contextlib.suppress(OSError):
            names.update(name.removesuffix(".pyi") for name in os.listdir(folder))
    return frozenset(names)


@functools.lru_cache(maxsize=None)
def _stdlib_stub(dotted: str) -> str | None:
    """jedi's bundled typeshed stub of a standard module (None: it has none; jedi's answer is left to it)."""
    spec = importlib.util.find_spec("jedi")
    if spec is None or not spec.submodule_search_locations:
        return None
    base = os.path.join(spec.submodule_search_locations[0], "third_party", "typeshed", "stdlib", *dotted.split("."))
    for candidate in (base + ".pyi", os.path.join(base, "__init__.pyi")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _interpreter_sys_path(project) -> list[str] | None:
    key = project.interpreter_key()
    stored = disk_cache.read("sys-path", *key) if key else None
    try:
        if stored and all(disk_cache.stamp(folder) == stamp for folder, stamp in stored):
            return [folder for folder, _ in stored]
    except (TypeError, ValueError):
        pass
    try:
        sys_path = project.interpreter_sys_path()
    except Exception as exc:  # an unusable interpreter is reported elsewhere; here it means "jedi decides"
        log.debug("no search path for workspace imports: %s", exc)
        return None
    if key:
        disk_cache.write("sys-path", [[folder, disk_cache.stamp(folder)] for folder in sys_path], *key)
    return sys_path
