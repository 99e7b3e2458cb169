"""Name resolution: what an imported or otherwise unbound name is, jedi first, the import statement second.

Imports are resolved by jedi on a probe (a tiny module of the file's import statements beside it);
what jedi answers for an import statement in a folder is kept (`LibraryAnswers`, also on disk). Moved
out of `project.py`, which owns one `Resolver` per project.
"""

from __future__ import annotations

import ast
import logging
import os
import sys
from collections import OrderedDict
from dataclasses import astuple

from . import disk_cache, reads
from .import_index import absolute
from .model import Binding, ModuleModel
from .names import canonical, is_jax_module
from .values import UNKNOWN, Api, ModuleValue, Value
from .workspace_imports import PROBE_NAME, ImportTarget, WorkspaceImports

# `Project` (project.py) in annotations is a name only: project.py imports this module, never the
# other way round (tests/test_architecture.py: no circle of modules but the one known).

log = logging.getLogger(__name__)

PROBES_KEPT = 2
# The classes of the standard `enum` module that every Python 3 this runs with has (not `StrEnum`, 3.11's).
STANDARD_ENUM_CLASSES = frozenset({"Enum", "IntEnum", "Flag", "IntFlag"})
# jedi's parser keeps every module it ever parsed in memory (parso's parser_cache; most of a
# server's memory after a few hundred jax modules). Import answers are kept here instead, so only
# the most recently used trees are kept; an evicted one comes back from parso's disk cache if needed.
PARSER_TREES_KEPT = 16
# In `check` (a process that ends with its files, no server's memory to keep down): trees of the
# installed modules that one folder's imports loaded are asked again by the next folder's probes, and
# each evicted one was read back from parso's disk cache (tpu-inference: 77 loads of 38 trees).
PARSER_TREES_KEPT_IN_CHECK = 256


def _trim_parser_cache(keep: int = PARSER_TREES_KEPT, in_use=frozenset) -> None:
    """Drop the least recently used trees, but never one a live jedi inference state loaded
    (`in_use()`, asked only when some tree goes): jedi looks its module's tree up there again (a
    `KeyError` that made the import's answer the fallback's, and not the same one in the next process,
    which asked jedi afresh); its tree stays in memory with that state anyway."""
    parso_cache = sys.modules.get("parso.cache")  # nothing to trim before jedi was first used
    if parso_cache is not None:
        # parso's own collection goes over every tree it keeps each time it keeps one more, once there
        # are 600, and drops those unused for ten minutes, live ones too: this trim is the only one
        # (a tenth of a first check's CPU on jax's Pallas tests went to parso's scans).
        parso_cache._CACHED_SIZE_TRIGGER = sys.maxsize
    caches = getattr(parso_cache, "parser_cache", None)
    if not isinstance(caches, dict) or sum(len(c) for c in caches.values()) <= 2 * keep:
        return
    items = sorted(((item.last_used, grammar, path) for grammar, by_path in caches.items()
                    for path, item in by_path.items()), key=lambda t: t[0], reverse=True)
    kept = in_use()
    for _, grammar, path in items[keep:]:
        if path not in kept:
            caches[grammar].pop(path, None)


def _loaded_paths(script) -> set:
    """The files of the modules a jedi script's inference state loaded, as parso keys them (raises
    when jedi's internals moved)."""
    state = script._inference_state
    values = [v for value_set in state.module_cache._name_cache.values() for v in value_set]
    values += [v for v in state.stub_module_cache.values() if v is not None]
    return {path for path in (v.py__file__() for v in values) if path}


_stamp = disk_cache.stamp


class ImportCycle(RecursionError):
    """An import whose resolution asks for itself again with nothing evaluated on the way (`from pkg
    import envs` in `pkg/__init__.py` when jedi gives no answer: the fallback finds the same statement):
    the same steps would repeat until Python's recursion limit (3,808 times, 217 k `stat` calls, for
    one check of two tpu-inference files). Raised at the second step, it ends where that
    RecursionError ended (the expression being evaluated is unknown), without the thousand frames."""


class LibraryAnswers:
    """What jedi said an import statement in a folder binds, when that is in an installed library,
    or in the workspace (the imports `workspace_imports` leaves to jedi) with the files it read.

    Kept for the session, and on disk between sessions (`disk_cache`, keyed by the interpreter and
    its stamp): a new server or `check` asks jedi nothing for imports it answered before, which is
    most of the time to the first diagnostics. Each answer carries the stamps of the files it points
    into and is dropped when one of them changed (a library upgraded). An answer into the workspace
    also carries the stamps of every module jedi had loaded for it and of the folders it searched,
    checked at every use: an edited workspace file makes jedi answer again.
    """

    def __init__(self, project: "Project"):
        self.project = project
        self._answers: dict[tuple[str, str], tuple[ImportTarget, ...]] = {}
        self._dependencies: dict[tuple[str, str], list] = {}  # key -> [[path, stamp], ...] (workspace answers)
        self._stored: dict[str, list] | None = None  # "folder\0statement" -> [targets, stamps, folder(, dependencies)]
        self._new: dict[str, list] = {}

    def _key(self) -> tuple[str, str] | None:
        return self.project.interpreter_key()

    def get(self, key: tuple[str, str]) -> tuple[ImportTarget, ...] | None:
        answer = self._answers.get(key)
        if answer is not None:
            dependencies = self._dependencies.get(key, ())
            if _unchanged(dependencies):
                for path, _ in dependencies:  # an answer kept with it is read from them too
                    self.project.read_from_disk(path)
                return answer
            del self._answers[key]  # a file it was read from changed: jedi answers again
            return None
        if self._stored is None:
            cache_key = self._key()
            stored = disk_cache.read("jedi-imports", *cache_key) if cache_key else None
            self._stored = stored if isinstance(stored, dict) else {}
        entry = self._stored.get("\0".join(key))
        if entry is None:
            return None
        try:
            targets, stamps, folder, *rest = entry
            answer = tuple(ImportTarget(*target) for target in targets)
            dependencies = rest[0] if rest else []
            if _stamp(key[0]) != folder or any(_stamp(t.module_path) != stamp for t, stamp in zip(answer, stamps)):
                return None  # a module appeared beside the importer, or a library file changed: ask jedi
            if not _unchanged(dependencies):
                return None
        except (TypeError, ValueError):
            return None
        self._answers[key] = answer
        if dependencies:
            self._dependencies[key] = dependencies
            for path, _ in dependencies:
                self.project.read_from_disk(path)
        return answer

    def add(self, key: tuple[str, str], answer: tuple[ImportTarget, ...], dependencies: list[str] | None = None) -> None:
        self._answers[key] = answer
        entry = [[list(astuple(t)) for t in answer], [_stamp(t.module_path) for t in answer], _stamp(key[0])]
        if dependencies:
            self._dependencies[key] = entry_dependencies = [[path, _stamp(path)] for path in dependencies]
            entry.append(entry_dependencies)
            for path in dependencies:
                self.project.read_from_disk(path)
        self._new["\0".join(key)] = entry

    def hand_over(self) -> dict[str, list]:
        """The new answers not yet written (as `save` writes them), for another process to write."""
        new, self._new = self._new, {}
        return new

    def take(self, entries: dict[str, list]) -> None:
        """Answers another process handed over (`hand_over`), written with this one's by `save`."""
        self._new.update(entries)

    def save(self) -> None:
        """Add this session's new answers to the cache file (merged with what others wrote meanwhile)."""
        if not self._new:
            return
        cache_key = self._key()
        if cache_key is None:
            return
        stored = disk_cache.read("jedi-imports", *cache_key)
        merged = {**(stored if isinstance(stored, dict) else {}), **self._new}
        self._new = {}
        disk_cache.write("jedi-imports", merged, *cache_key)


def _unchanged(dependencies) -> bool:
    return all(_stamp(path) == stamp for path, stamp in dependencies)


def _jedi_dependencies(script, project: "Project", importer: str) -> list[str] | None:
    """Every file a probe's jedi had loaded (a superset of what one answer was read from), their
    folders and the folders imports are searched in (a module appearing there may shadow one);
    None when jedi's state cannot be read (then the answer is not kept)."""
    try:
        files = {os.path.abspath(str(path)) for path in _loaded_paths(script)}
        search = (project.resolver.workspace_imports.search_path() if project.resolver.workspace_imports else None) or []
    except Exception as exc:  # jedi's internals moved, or the path cannot be asked: not kept
        log.debug("cannot list what jedi read for %s: %s", importer, exc)
        return None
    folders = {os.path.dirname(path) for path in files} | set(search)
    folder = os.path.dirname(importer)
    while folder.startswith(project.root):
        folders.add(folder)
        folder = os.path.dirname(folder)
    return sorted(files | folders)


class Resolver:
    """Turns imported and otherwise unbound names into values, jedi first, the import statement second.

    Imports are resolved by jedi on a probe: a tiny module holding only the file's import statements,
    placed beside the file (so relative imports and the search path are the same). Parsing the whole
    file with jedi's parser on every edit was most of the analysis time. Absolute imports into
    workspace modules are answered without jedi first (`workspace_imports`), then those into
    installed modules (after the answers on disk). What jedi answers for an import statement in a
    folder is kept (`LibraryAnswers`, also on disk): while it points outside the workspace (an
    installed library does not change under us), or, into the workspace, while no file it had
    loaded changed.
    """

    def __init__(self, project: "Project"):
        self.project = project
        self.library_answers = LibraryAnswers(project)
        # Absolute imports into workspace modules, answered without jedi (None: jedi answers).
        self.workspace_imports: WorkspaceImports | None = WorkspaceImports(project)
        # The few newest probes stay alive (one analysis goes back and forth between a handful of
        # modules); each pins a jedi inference state, so older ones are let go.
        self._probe_scripts: OrderedDict[str, tuple[ModuleModel, object]] = OrderedDict()
        # The import statements being resolved: alias node id -> the evaluator's depth when asked.
        self._resolving: dict[int, tuple[int, int]] = {}
        # With file events trusted and no reads recorded (`check`): the (folder, statement) jedi found
        # nothing for, while no text or file changes (the project's change count, the keys). Not kept
        # as answers (on disk), they were asked again in each module of the folder: tpu-inference's
        # `from vllm... import ...` (vllm not installed) 11 times in one folder.
        self._unanswered: tuple[int, set] = (-1, set())

    # ---- jedi ---------------------------------------------------------------------------------

    def _script(self, model: ModuleModel):
        script = getattr(model, "_jedi_script", None)
        if script is None:
            import jedi

            script = jedi.Script(model.text, path=model.path, project=self.project.jedi_project(),
                                 environment=self.project.environment.jedi_env)
            model._jedi_script = script
        return script

    def _goto(self, model: ModuleModel, line: int, column: int):
        if not self.project.use_jedi:
            return []
        try:
            return self._script(model).goto(line, column, follow_imports=True)
        except Exception as exc:  # jedi has internal failures on odd code; the fallback still answers
            log.debug("jedi goto failed at %s:%s:%s: %s", model.path, line, column, exc)
            return []

    def _import_targets(self, model: ModuleModel, binding: Binding) -> tuple[ImportTarget, ...] | None:
        """What jedi says the name bound by an import statement is (None: jedi is off or failed)."""
        if not self.project.use_jedi:
            return None
        statement = _probe_statement(binding)
        if statement is None:
            return None
        answer = self._workspace_answer(model, binding)
        if answer is not None:
            return answer
        key = (os.path.dirname(model.path), statement[0])
        answer = self.library_answers.get(key)
        if answer is not None:
            return answer
        answer = self._workspace_answer(model, binding, installed=True)
        if answer is not None:  # into installed modules, without jedi: kept like jedi's answers,
            read = self.workspace_imports.read  # with the workspace files on the way, if any
            self.library_answers.add(key, answer, read if any(map(self.project.is_workspace_file, read)) else None)
            return answer
        if self._workspace_answer(model, binding, absent=True):
            return ()
        answer = self._standard_enum_class(binding) or self._assigned_in_jax(binding)
        if answer is not None:
            return answer
        unanswered = self._unanswered_in_check()
        if unanswered is not None and key in unanswered:
            return ()
        probe = _model_probe(model)
        if probe.get("text") is None:
            probe["statements"] = _import_statements(model)
            probe["text"] = "".join(line + "\n" for line in probe["statements"])
            probe["answers"] = {}
        if statement[0] in probe["answers"]:
            return probe["answers"][statement[0]]
        line = probe["statements"].index(statement[0]) + 1
        try:
            answer = tuple(ImportTarget.of(d) for d in self._probe_script(model, probe).goto(line, statement[1], follow_imports=True))
        except Exception as exc:  # jedi has internal failures on odd code; the fallback still answers
            log.debug("jedi goto failed for %r in %s: %s", statement[0], model.path, exc)
            answer = ()
        self._trim_parser_cache()
        probe["answers"][statement[0]] = answer
        if not answer and unanswered is not None:
            unanswered.add(key)
        if answer and all(t.module_path and os.path.basename(t.module_path) != PROBE_NAME for t in answer):
            if not any(self.project.is_workspace_file(t.module_path) for t in answer):
                self.library_answers.add(key, answer)
            else:
                dependencies = _jedi_dependencies(self._probe_script(model, probe), self.project, model.path)
                if dependencies is not None:
                    self.library_answers.add(key, answer, dependencies)
        return answer

    def _standard_enum_class(self, binding: Binding) -> tuple[ImportTarget, ...] | None:
        """`from enum import Enum` (`IntEnum`, `Flag`, `IntFlag`: in every Python 3 this runs with) where the
        `enum` module found first is the standard library's: jedi's answer (its class, `enum.Enum`) without
        asking jedi. `workspace_imports` leaves it to jedi (enum.py binds these names twice), and it was the one
        import jedi answered in tpu-inference's first analysis: jedi's grammar, its process and the wait for it
        (`docs/benchmarks.md`, first analysis)."""
        statement = binding.import_from
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "enum" and not statement.level
                and binding.node.name in STANDARD_ENUM_CLASSES) or self.workspace_imports is None:
            return None
        found = self.workspace_imports.standard_module_file("enum")
        if found is None:
            return None
        name = binding.node.name
        return (ImportTarget(found, "enum", None, "class", name, f"enum.{name}"),)

    def _assigned_in_jax(self, binding: Binding) -> tuple[ImportTarget, ...] | None:
        """`from jax._src.lib import cuda_versions`, a name an installed jax module binds only by assignments
        (there in a loop of `try:`s): jedi's answer, the statements of that module (one gives the value all give),
        without asking jedi (`WorkspaceImports.assigned_only`; jla's first analysis asked jedi this one import)."""
        statement = binding.import_from
        if not (isinstance(statement, ast.ImportFrom) and not statement.level and statement.module
                and is_jax_module(statement.module)) or self.workspace_imports is None:
            return None
        found = self.workspace_imports.assigned_only(statement.module, binding.node.name)
        if found is None:
            return None
        name = binding.node.name
        return (ImportTarget(found[0], statement.module, found[1], "statement", name, f"{statement.module}.{name}"),)

    def _trim_parser_cache(self) -> None:
        _trim_parser_cache(PARSER_TREES_KEPT_IN_CHECK if self.project.checking() else PARSER_TREES_KEPT,
                           in_use=self._trees_in_use)

    def _unanswered_in_check(self) -> set | None:
        """The (folder, statement) keys jedi answered nothing for in this check (None: not a check)."""
        if not self.project.checking():
            return None
        if self._unanswered[0] != self.project._change_count:
            self._unanswered = (self.project._change_count, set())
        return self._unanswered[1]

    def _workspace_answer(self, model: ModuleModel, binding: Binding, absent: bool = False, installed: bool = False):
        """`workspace_imports`' answer (with `installed`, into installed modules too; with `absent`,
        whether the module is installed nowhere); None/False leaves it to jedi, as does any failure."""
        if self.workspace_imports is None:
            return None
        try:
            if absent:
                return self.workspace_imports.absent(model.path, binding)
            return self.workspace_imports.targets(model.path, binding, installed)
        except Exception:  # a bug here must not cost the analysis: jedi answers as before
            log.exception("workspace import answer failed in %s", model.path)
            return None

    def drop_jedi_states(self) -> None:
        """Let go of every jedi script (probes, star-import scripts): in a forked `check` worker they
        are states of the parent's jedi interpreter, which the worker does not talk to."""
        self._probe_scripts.clear()
        for model in self.project._models.values():
            model.__dict__.pop("_jedi_script", None)

    def _trees_in_use(self) -> frozenset:
        """The files whose parso trees the live jedi scripts (probes, star-import scripts) loaded."""
        live = [script for _, script in self._probe_scripts.values()]
        live += [m._jedi_script for m in self.project._models.values() if getattr(m, "_jedi_script", None) is not None]
        try:
            return frozenset().union(*(_loaded_paths(script) for script in live))
        except Exception as exc:  # jedi's internals moved: trim as before
            log.debug("cannot list what jedi loaded: %s", exc)
            return frozenset()

    def _probe_script(self, model: ModuleModel, probe: dict):
        found = self._probe_scripts.get(model.path)
        if found is not None and found[0] is model:
            self._probe_scripts.move_to_end(model.path)
            return found[1]
        import jedi

        script = jedi.Script(probe["text"], path=os.path.join(os.path.dirname(model.path), PROBE_NAME),
                             project=self.project.jedi_project(), environment=self.project.environment.jedi_env)
        self._probe_scripts[model.path] = (model, script)  # a new text's probe replaces the old one
        self._probe_scripts.move_to_end(model.path)
        while len(self._probe_scripts) > PROBES_KEPT:
            self._probe_scripts.popitem(last=False)
        return script

    def _value_from_definition(self, model: ModuleModel, definitions, origin_line: int) -> Value | None:
        """A value for what jedi found, or None when jedi did not really answer."""
        for definition in definitions:
            if isinstance(definition, ImportTarget):
                module_path, module_name = definition.module_path, definition.module_name
                if module_path and os.path.basename(module_path) == PROBE_NAME:
                    continue  # jedi stopped at the import statement itself: it could not follow it
            else:
                module_path = str(definition.module_path) if definition.module_path else None
                module_name = definition.module_name or ""
            if module_path and os.path.abspath(module_path) == model.path and definition.line == origin_line:
                continue  # jedi stopped at our own import statement: it could not follow it
            if is_jax_module(module_name) or module_name in ("functools", "numpy") or module_name.startswith("numpy."):
                if definition.type == "module":
                    return Api(canonical(definition.full_name or module_name))
                if definition.type in ("function", "class") and definition.full_name:
                    return Api(canonical(definition.full_name, private_module=module_name))
                return Api(canonical(f"{module_name}.{definition.name}", private_module=module_name))
            if module_path and self.project.is_workspace_file(module_path):
                other = self.project.model(module_path)
                if definition.type == "module":
                    return ModuleValue(other)
                binding = _binding_at(other, definition.name, definition.line)
                if binding is not None:
                    return self.project.evaluator.binding_value(other, binding, None)
                return UNKNOWN
            if definition.full_name:
                return Api(definition.full_name)  # some other library: known, and not JAX
            return UNKNOWN
        return None

    # ---- the resolver's questions ---------------------------------------------------------------

    def import_value(self, model: ModuleModel, binding: Binding) -> Value:
        cache_key = ("import", id(binding.node))
        if cache_key in model.eval_cache:
            return model.eval_cache[cache_key]
        reads.note(("own", id(model.scope_of(binding.import_from))))
        alias, depth = id(binding.node), self.project.evaluator.depth()
        asked_at = self._resolving.get(alias)
        if asked_at == depth:
            raise ImportCycle(f"the import of {getattr(binding.node, 'name', '')!r} at {model.path}:{binding.lineno} names itself")
        self._resolving[alias] = depth
        try:
            value = None
            targets = self._import_targets(model, binding)
            if targets is not None:
                value = self._value_from_definition(model, targets, binding.lineno)
            if value is None:
                value = self._import_fallback(model, binding)
        finally:
            if asked_at is None:
                del self._resolving[alias]
            else:
                self._resolving[alias] = asked_at
        model.eval_cache.keep(cache_key, value)
        return value

    def unbound_name(self, model: ModuleModel, node: ast.Name) -> Value:
        """A name with no binding in the file: a star import or a builtin. Only jedi can say."""
        reads.note(("own", id(model.tree)))
        if not any(isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names) for s in model.tree.body):
            return UNKNOWN
        column = model.source.char_column(node.lineno - 1, node.col_offset)
        value = self._value_from_definition(model, self._goto(model, node.lineno, column), -1)
        return value if value is not None else UNKNOWN

    def submodule(self, model: ModuleModel, attr: str) -> Value | None:
        if model.module_name is None:
            return None
        path = self.project.find_module(f"{model.module_name}.{attr}", self.project.import_roots(model.path))
        return ModuleValue(self.project.model(path)) if path else None

    def _import_fallback(self, model: ModuleModel, binding: Binding) -> Value:
        statement, alias = binding.import_from, binding.node
        if isinstance(statement, ast.Import):
            module = alias.name if alias.asname else alias.name.split(".")[0]
            return self._module_value(model, module)
        base = self.import_from_base(model, statement)
        if base is None:
            return UNKNOWN
        qualified = f"{base}.{alias.name}" if base else alias.name
        if is_jax_module(base) or base in ("functools", "numpy"):
            return Api(canonical(qualified))
        path = self.project.find_module(base, self.project.import_roots(model.path)) if base else None
        if path:
            other = self.project.model(path)
            inner = other.module_binding(alias.name)
            if inner is not None:
                return self.project.evaluator.binding_value(other, inner, None)
        sub = self.project.find_module(qualified, self.project.import_roots(model.path))
        if sub:
            return ModuleValue(self.project.model(sub))
        return UNKNOWN

    def import_from_base(self, model: ModuleModel, statement: ast.ImportFrom) -> str | None:
        """The dotted module a `from ... import` statement imports from, a relative one by the importing
        file's package (None: it climbs above the top package)."""
        base = statement.module or ""
        return self._relative_base(model, statement.level, base) if statement.level else base

    def import_from_path(self, model: ModuleModel, statement: ast.ImportFrom) -> str | None:
        """The workspace file a `from ... import` statement imports from, found by path as the fallback
        finds it (no jedi); None for jax, functools and numpy, or where no file is that module."""
        base = self.import_from_base(model, statement)
        if not base or is_jax_module(base) or base in ("functools", "numpy"):
            return None
        return self.project.find_module(base, self.project.import_roots(model.path))

    def _module_value(self, model: ModuleModel, module: str) -> Value:
        if is_jax_module(module) or module in ("functools", "numpy"):
            return Api(canonical(module))
        path = self.project.find_module(module, self.project.import_roots(model.path))
        return ModuleValue(self.project.model(path)) if path else UNKNOWN

    def _relative_base(self, model: ModuleModel, level: int, module: str) -> str | None:
        package = self.project.module_name(os.path.join(os.path.dirname(model.path), "__init__.py"))
        return absolute("." * level + module, package)


def _binding_at(model: ModuleModel, name: str, line: int | None) -> Binding | None:
    reads.note(("bind", id(model.tree), name))
    bindings = model.scopes[model.tree].bindings.get(name, [])
    for binding in bindings:
        if binding.lineno == line:
            return binding
    return bindings[-1] if bindings else None


def _probe_statement(binding: Binding) -> tuple[str, int] | None:
    """The import as a one-line statement, and the column of the name it binds (where jedi is asked)."""
    statement, alias = binding.import_from, binding.node
    if getattr(alias, "lineno", None) is None:
        return None
    if isinstance(statement, ast.Import):
        head = "import "
    else:
        head = f"from {'.' * statement.level}{statement.module or ''} import "
    if alias.asname:
        return f"{head}{alias.name} as {alias.asname}", len(head) + len(alias.name) + 4
    return f"{head}{alias.name}", len(head)


def _import_statements(model: ModuleModel) -> list[str]:
    """Every import of the module as a probe line, each once, in a stable order."""
    lines: dict[str, None] = {}
    for scope in model.scopes.values():
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.kind == "import":
                    statement = _probe_statement(binding)
                    if statement is not None:
                        lines.setdefault(statement[0])
    return list(lines)


def _model_probe(model: ModuleModel) -> dict:
    """The jedi probe of this module text (built lazily, dropped with the model)."""
    probe = getattr(model, "_import_probe", None)
    if probe is None:
        probe = model._import_probe = {}
    return probe
