"""The analysed project: its files (on disk or unsaved), its Python environment, and name resolution.

One `Project` serves many analyses: parsed modules are cached by text, what jedi says an import
statement binds is kept across edits, so re-analysing after an edit re-parses only the edited file
and asks jedi nothing when its imports did not change.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import logging
import os
import sys
import threading
from collections import OrderedDict
from dataclasses import astuple, dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING


from . import disk_cache, reads
from ..interpreters import interpreter_executable
from ..python_path import resolve_python
from .environment import EnvironmentError_, PythonEnvironment, choose_interpreter, load_environment
from .evaluate import Evaluator
from .exclusions import Exclusions
from .import_index import ImportIndex, absolute
from .model import Binding, ModuleModel
from .model_patch import patch as patch_model
from .names import canonical, is_jax_module
from .notebooks import Notebook, is_notebook, read_notebook_file
from ..source_text import Refusal, read_decoded
from .values import UNKNOWN, Api, ModuleValue, Value
from .workspace_imports import PROBE_NAME, ImportTarget, WorkspaceImports

if TYPE_CHECKING:
    import jedi

log = logging.getLogger(__name__)

MAX_WORKSPACE_FILES = 100_000
# The server keeps parsed modules between analyses while their texts add up to at most this many
# characters (their trees and tables take ~40 bytes per character), least recently used dropped
# first, the one just analysed always kept (`drop_models_over_budget`); a dropped one is parsed
# again when next needed.
MODEL_TEXT_BUDGET = 1_000_000
# The models an edited file's analyses read are kept while their texts add up to at most this many
# budgets (`drop_models_over_budget`): dropping one forgets every answer read from it, and a
# keystroke in a kernel file of a big package reads two million characters of other modules (the
# call sites of its kernels, and theirs): each keystroke parsed and evaluated them all again.
PINNED_BUDGETS = 4


def iter_python_files(root: str, exclusions: Exclusions | None = None, on_skip=None, notebooks: bool = False):
    """`*.py` files (with `notebooks`, `*.ipynb` files too, as `check` reads them) under a folder,
    leaving out what `exclusions` (by default the folder's `[tool.pallas-lsp]` settings, .gitignore
    files and environments) excludes, in a stable order.

    What is not a regular file behind the name (a FIFO, a dangling symlink such as an editor's
    `.#k.py` lock, a symlink loop, an entry we may not stat) is skipped: `on_skip(path, reason)` is
    told. Folder symlinks are not followed, so a loop of them cannot make the walk endless.
    """
    suffixes = (".py", ".ipynb") if notebooks else (".py",)
    for path, entry in (exclusions or Exclusions.for_folder(root)).walk_entries(root, suffixes):
        try:
            # The listing's file type answers for a regular file (no stat); a symlink is followed.
            regular = (not entry.is_symlink() and entry.is_file()) or S_ISREG(os.stat(path).st_mode)
            reason = None if regular else "not a regular file"
        except OSError as exc:
            reason = ("a dangling symlink" if os.path.islink(path) and exc.errno == errno.ENOENT
                      else exc.strerror or str(exc))
        if reason is None:
            yield path
        elif on_skip is not None:
            on_skip(path, reason)




def _read_by_stamp(cache: dict, path: str, read):
    """`read(path)`, kept in `cache` while the file's modification time and size stay the same."""
    stat = os.stat(path)
    key = (stat.st_mtime_ns, stat.st_size)
    cached = cache.get(path)
    if cached is None or cached[0] != key:
        cached = (key, read(path))
        cache[path] = cached
    return cached[1]


class Project:
    def __init__(self, root: str | None = None, python: str | None = None, use_jedi: bool = True,
                 platform: str | None = None, exclusions: Exclusions | None = None):
        self.root = os.path.abspath(root or os.getcwd())
        # What a pl.pallas_call without backend hints is lowered for: "gpu" (Triton) or "tpu" (TensorCore).
        self.platform = platform or "gpu"
        self.python = choose_interpreter(python)
        self.use_jedi = use_jedi
        self._environment: PythonEnvironment | None = None
        self._environment_lock = threading.Lock()
        self._jedi_project: jedi.Project | None = None
        self.overlay: dict[str, str] = {}
        self._models: OrderedDict[str, ModuleModel] = OrderedDict()  # least recently used first
        self.model_text_budget = MODEL_TEXT_BUDGET
        # When each file's text (or, under "*", every model) last changed, as a running count: a file's
        # incremental analysis reuses findings only while nothing else changed (`unchanged_since`).
        self._change_count = 0
        self._changed_at: dict[str, int] = {}
        self.incremental: dict = {}  # path -> its `incremental.DocumentState`, for the server's edits
        self._patched: dict[str, ModuleModel] = {}  # path -> its model, when its last edit was patched into it
        self._pins: dict[str, set[str]] = {}  # path -> the models its analyses read (`pinning`)
        self._pinning: set[str] | None = None
        self._stand_ins: dict[str, ModuleModel] = {}
        self._workspace_files: list[str] | None = None
        self._workspace_set: set[str] = set()
        self._workspace_sorted: tuple[tuple[str, ...], list[str]] | None = None
        self._disk_texts: dict[str, tuple[tuple[int, int], str]] = {}
        # Notebooks: the editor's (its cells, `set_notebook`), and those read from disk by stamp.
        self.notebooks: dict[str, Notebook] = {}
        self._disk_notebooks: dict[str, tuple[tuple[int, int], Notebook]] = {}
        # Files read from disk (texts, import tables, what jedi read for an answer) and their stamps
        # then: without file events, each analysis compares them (`new_analysis`), since the answers
        # read from a file are kept until it changes (`reads`).
        self._disk_stamps: dict[str, list | None] = {}
        self.index = ImportIndex(self)
        self._exclusions: Exclusions | None = exclusions  # None: the root's settings, when first needed
        self._workspace_verdicts: dict[str, bool] = {}
        # The server and `check` write the cache files once their answers are out (`save_caches(now=True)`),
        # not after every analysis: a first analysis in a big workspace would wait for a 3 MB write.
        self.defer_cache_writes = False
        self.evaluator = Evaluator(self)
        self.resolver = Resolver(self)

    # ---- environment --------------------------------------------------------------------------

    @property
    def environment(self) -> PythonEnvironment:
        """Raises `EnvironmentError_` with a user-facing message when the interpreter is unusable."""
        if self._environment is None:
            with self._environment_lock:  # also loaded off the analysis thread (`load_environment_soon`)
                if self._environment is None:
                    self._environment = load_environment(self.python)
        return self._environment

    def load_environment_soon(self, done) -> None:
        """Start the interpreter's jedi environment on another thread (a server's first analysis often
        needs none of it: import answers come from the cache file); `done(environment, error)` after."""
        def load():
            try:
                environment = self.environment
            except EnvironmentError_ as exc:
                done(None, exc)
            else:
                done(environment, None)

        threading.Thread(target=load, name="pallas-environment", daemon=True).start()

    def interpreter_key(self) -> tuple[str, str] | None:
        """The analysed interpreter and its stamp, found without starting it (starting it is what the
        disk caches keyed by it save)."""
        executable = interpreter_executable(resolve_python(self.python))
        stamp = _stamp(os.path.realpath(executable)) if executable else None
        return (executable, str(stamp)) if stamp else None

    def jedi_project(self) -> jedi.Project:
        import jedi  # imported when first needed: a start whose import answers are all cached needs none

        if self._jedi_project is None:
            self._jedi_project = jedi.Project(self.root, environment_path=self.environment.executable)
        return self._jedi_project

    # ---- files --------------------------------------------------------------------------------

    def set_text(self, path: str, text: str | None) -> None:
        """Use unsaved editor text for a file (None returns to the file on disk)."""
        path = os.path.abspath(path)
        if self.overlay.get(path) != text:
            self._changed(path)
            if text is None or not self._patch(path, text):
                self._patched.pop(path, None)
                self._forget_evaluations_through(path)
        if text is None:
            self.overlay.pop(path, None)
            self.incremental.pop(path, None)
            self._pins.pop(path, None)
        else:
            self.overlay[path] = text
        self.index.text_set(path)

    def _changed(self, path: str) -> None:
        self._change_count += 1
        self._changed_at[path] = self._change_count

    def changes_besides(self, path: str, previous: tuple | None = None) -> tuple:
        """What the project is now, but for `path`'s own text: `unchanged_since(path, it)` stays true
        while no other file's text, no file event and no setting changes; without trusted file
        events, also while the disk stamps of the other modules read so far (and of those in
        `previous`, an earlier answer still true) stay the same."""
        path = os.path.abspath(path)
        latest = max((count for other, count in self._changed_at.items() if other != path), default=0)
        if self.index.trust_events:
            return (latest, ())
        stamps = {other: _stamp(other) for other in self._models if other != path and other not in self.overlay}
        for other, stamp in previous[1] if previous else ():
            stamps.setdefault(other, stamp)
        return (latest, tuple(stamps.items()))

    def unchanged_since(self, path: str, changes: tuple) -> bool:
        """Nothing but `path`'s own text changed since `changes_besides(path)` answered `changes`
        (modules dropped from memory since do not count; their files changing on disk do)."""
        path = os.path.abspath(path)
        latest, stamps = changes
        if latest != max((count for other, count in self._changed_at.items() if other != path), default=0):
            return False
        return all(_stamp(other) == stamp for other, stamp in stamps if other not in self.overlay)

    def file_changed(self, path: str) -> None:
        """A file event (created, changed, deleted on disk; a save): forget what was read from it."""
        path = os.path.abspath(path)
        self._changed(path)
        if path not in self.overlay:  # its text is the file's: what others evaluated through it is old
            # (a file created or deleted changes what imports find, which no answer records)
            self._forget_evaluations()
        self.index.forget(path)
        self._disk_texts.pop(path, None)
        self._disk_notebooks.pop(path, None)
        self._workspace_sorted = None
        self._workspace_verdicts.pop(path, None)
        if self._workspace_files is not None and path.endswith(".py") and path.startswith(self.root + os.sep):
            if os.path.isfile(path) and not self.exclusions.excluded(path):
                if path not in self._workspace_set:
                    self._workspace_set.add(path)
                    self._workspace_files.append(path)
            elif path in self._workspace_set:
                self._workspace_set.discard(path)
                self._workspace_files.remove(path)

    @contextlib.contextmanager
    def trial(self, texts: dict[str, str]):
        """Analyse with `texts` in place of these files' texts, then put back their overlays and
        cached models: checking a fix must not cost the next real analysis its caches."""
        texts = {os.path.abspath(path): text for path, text in texts.items()}
        saved = {path: (self.overlay.get(path), self._models.get(path)) for path in texts}
        # A model kept for its unchanged text (the finding's file, when the fix edits another one) holds
        # what it evaluated through the other files' old texts (a star-imported constant): forgotten
        # before the trial, and after it what it evaluated through the trial's texts.
        replaced = any(model is not None and model.text != texts[path] for path, (_, model) in saved.items())
        try:
            for path, text in texts.items():
                self._changed(path)
                self.overlay[path] = text
            if replaced:
                self._forget_evaluations()
            yield
        finally:
            for path, (overlay, model) in saved.items():
                self._changed(path)
                self.set_text(path, overlay)
                if model is None:
                    self._models.pop(path, None)
                else:
                    self._models[path] = model
            restored = {id(model) for _, model in saved.values()}
            for other in self._models.values():  # they may have evaluated through the trial's models
                if replaced or id(other) not in restored:
                    other.forget_evaluations()

    def set_notebook(self, path: str, notebook: Notebook | None) -> None:
        """Use an editor's notebook (None returns to the file on disk): its cells' module is the text."""
        path = os.path.abspath(path)
        if notebook is None:
            self.notebooks.pop(path, None)
        else:
            self.notebooks[path] = notebook
        self.set_text(path, None if notebook is None else notebook.module)

    def notebook(self, path: str) -> Notebook:
        """The notebook at `path`: the editor's, else the file's (InvalidNotebook when it is none)."""
        path = os.path.abspath(path)
        if path in self.notebooks:
            return self.notebooks[path]
        self.read_from_disk(path)
        return _read_by_stamp(self._disk_notebooks, path, read_notebook_file)

    def notebook_of(self, path: str) -> Notebook | None:
        """The notebook whose cells `path`'s text is made of: the editor's, else the file's; None
        when the text is no notebook's (a `.ipynb` an editor sent as Python: jupyterlab-lsp's
        virtual documents are). Raises InvalidNotebook for a `.ipynb` file that is no notebook."""
        path = os.path.abspath(path)
        if path in self.notebooks:
            return self.notebooks[path]
        if path in self.overlay or not is_notebook(path):
            return None
        return self.notebook(path)

    def text(self, path: str) -> str:
        """The file's text (an answer made from it is forgotten at any edit of it: `reads`)."""
        path = os.path.abspath(path)
        reads.note(self.read_key(path))
        reads.note(self.read_key(path, "text"))
        return self._text(path)

    def _text(self, path: str) -> str:
        if path in self.overlay:
            return self.overlay[path]
        if is_notebook(path):  # its code cells, as one module
            return self.notebook(path).module
        self.read_from_disk(path)
        return _read_by_stamp(self._disk_texts, path, read_decoded).text

    def read_from_disk(self, path: str) -> None:
        """What is being analysed read `path` from disk (see `_disk_stamps`)."""
        reads.note(self.read_key(path))
        if path not in self._disk_stamps:
            self._disk_stamps[path] = _stamp(path)

    def new_analysis(self) -> None:
        """An analysis starts: the import index compares files' stamps again (once each), the reads of
        its answers are collected apart (`reads.new_root`), and without file events the answers read
        from a file that changed on disk since are forgotten."""
        self.index.new_analysis()
        reads.new_root()
        # Answers about modules as a whole are found again in every analysis, in its order: a
        # kernel index marks the entry points of modules it runs in interpret mode, which rules
        # read; kept from another analysis (of another file), the marks would be those of its order.
        # `check` keeps them from file to file, as it always has (the same output, less work).
        if reads.tracking():
            reads.forget(reads.BROAD)
        if not self.index.trust_events:
            for path, stamp in list(self._disk_stamps.items()):
                now = _stamp(path)
                if now != stamp:
                    self._disk_stamps[path] = now
                    self._forget_evaluations_reading(path)

    def refusal(self, path: str, text: str) -> Refusal | None:
        """Why Python refuses the file's bytes, when `text` is what was read from them (an editor's
        text of it is the editor's to save)."""
        cached = self._disk_texts.get(os.path.abspath(path))
        return cached[1].refusal if cached is not None and cached[1].text is text else None

    def forget_models(self) -> None:
        """Drop parsed modules and what was inferred from them (after a setting they depend on changed)."""
        self._changed("*")
        self._models.clear()
        self.incremental.clear()

    @contextlib.contextmanager
    def standing_in(self, model: ModuleModel):
        """Every module sees `model` as its file's model meanwhile (incremental analysis: the blanked
        text of a module other modules import); what they evaluated through another model of the
        file is dropped before, what they evaluated through this one after."""
        self._forget_evaluations_reading(model.path)  # made through the file's whole model
        self._stand_ins[model.path] = model
        try:
            yield
        finally:
            del self._stand_ins[model.path]
            self._forget_evaluations_reading(model.path)

    def model(self, path: str, text: str | None = None) -> ModuleModel:
        path = os.path.abspath(path)
        reads.note(self.read_key(path))
        if self._pinning is not None:
            self._pinning.add(path)
        stand_in = self._stand_ins.get(path)
        if stand_in is not None:
            return stand_in
        if text is None:
            text = self._text(path)
        cached = self._models.get(path)
        refusal = self.refusal(path, text)
        if cached is not None and cached.text == text and cached.source.refusal == refusal:
            self._models.move_to_end(path)
            return cached
        model = ModuleModel(path, text, self.module_name(path), refusal=refusal)
        self.own(model)
        if cached is not None:
            # What other modules evaluated through the old text (an importer's kernel entries, a
            # helper's value) points at the old model's nodes: the new one would not match them.
            self._forget_evaluations_reading(path)
        self._models[path] = model
        self._models.move_to_end(path)
        return model

    def _patch(self, path: str, text: str) -> bool:
        """Bring the file's model to its new `text` in place, forgetting only what the edit can
        change (`model_patch`); False when it cannot (the model is then of the old text)."""
        model = self._models.get(path)
        if model is None or path in self._stand_ins or len(text) > self.model_text_budget:
            return False
        behind = model.text != self.overlay.get(path, model.text)  # edits since were not patched into it
        keys = patch_model(model, text)
        if keys is None:
            return False
        if behind:  # what was read from it and from the texts since, all of it
            self._forget_evaluations_reading(path)
        for key in keys:
            reads.forget(self.read_key(path, key) if key in ("text", "exports") else key)
        self._patched[path] = model
        return True

    def read_key(self, path: str, kind: str = "model") -> tuple:
        """What an answer notes when it read the file at `path` (`reads`): its model, its text
        (`"text"`), its top-level names (`"exports"`), in this project (not another's, of the
        same file)."""
        return (id(self), kind, path)

    def own(self, model: ModuleModel) -> ModuleModel:
        """`model` is this project's model of its file (or stands in for it): answers read from it
        note `read_key`, and are forgotten with the file's."""
        model.owner = self
        model.read_key = self.read_key(model.path)
        return model

    def kept_model(self, path: str, text: str) -> ModuleModel | None:
        """The file's model kept, when it is of `text` (parsed whole or patched)."""
        model = self._models.get(os.path.abspath(path))
        return model if model is not None and model.text == text else None

    def patched_model(self, path: str, text: str) -> bool:
        """Whether the file's model kept was brought to `text` by the last edit (`_patch`)."""
        model = self._models.get(os.path.abspath(path))
        return model is not None and self._patched.get(os.path.abspath(path)) is model and model.text == text

    def _forget_evaluations_through(self, path: str) -> None:
        """`path`'s text changed: what was evaluated through its model or read from its text (an
        importer's value of one of its constants) is forgotten, as when its model is parsed again
        (`model`)."""
        self._forget_evaluations_reading(path)

    def _forget_evaluations_reading(self, path: str) -> None:
        """Every answer read from the file at `path` (its models' and others': `reads`); the others stay true."""
        if not reads.tracking():  # nothing says what was read from it
            self._forget_evaluations()
            return
        ModuleModel.forget_evaluations_of(path, self)
        reads.forget(self.read_key(path))
        reads.forget(path)  # read through a model of no project
        # And every answer about modules as a whole: one module's kernel index marks the entry
        # points of others it runs in interpret mode, which their own answers do not record.
        reads.forget(reads.BROAD)

    def _forget_evaluations(self) -> None:
        for other in self._models.values():
            other.forget_evaluations()

    @contextlib.contextmanager
    def pinning(self, path: str):
        """Meanwhile the models asked for are read by `path`'s analysis: kept with it (`drop_models_over_budget`)."""
        path = os.path.abspath(path)
        pins = self._pins.setdefault(path, set())
        outer, self._pinning = self._pinning, pins
        try:
            yield
        finally:
            self._pinning = outer

    def drop_models_over_budget(self, keep: str) -> None:
        """Between analyses: keep `keep`'s model (the file just analysed) whatever its size, the
        models its analyses read while their texts add up to `PINNED_BUDGETS` budgets, and the
        most recently used others while all add up to `model_text_budget` characters; the disk texts only of
        files whose models are kept. What the others evaluated through a dropped model is
        forgotten with it (a model parsed again later is another object, which results holding the
        dropped one would not match: a PAL002 lost until the importer changed)."""
        keep = os.path.abspath(keep)
        pinned = {p for p in self._pins.get(keep, ()) if p in self._models and p != keep}
        total = sum(len(self._models[p].text) for p in pinned)  # the others fit in what they leave
        if total > PINNED_BUDGETS * self.model_text_budget:
            pinned, total = set(), 0
        dropped = []
        for path, model in reversed(self._models.items()):
            if path != keep and path not in pinned:
                total += len(model.text)
                if total > self.model_text_budget:
                    dropped.append(path)
        for path in dropped:
            del self._models[path]
        for path in [p for p in self._disk_texts if p not in self._models]:
            del self._disk_texts[path]
        for path in [p for p in self._disk_notebooks if p not in self._models]:
            del self._disk_notebooks[path]
        for path in dropped:
            self._forget_evaluations_reading(path)

    def forget_model(self, path: str) -> None:
        """Drop one file's parsed module (parsed again when needed), and what others evaluated through it."""
        if self._models.pop(os.path.abspath(path), None) is not None:
            self._forget_evaluations_reading(os.path.abspath(path))

    def module_name(self, path: str) -> str | None:
        """Dotted module name from the nearest folder without an `__init__.py` (how imports see it)."""
        file = Path(path)
        parts = [] if file.name == "__init__.py" else [file.stem]
        folder = file.parent
        while (folder / "__init__.py").exists() and folder.parent != folder:
            parts.insert(0, folder.name)
            folder = folder.parent
        return ".".join(parts) if parts else None

    def import_roots(self, path: str) -> list[str]:
        """Folders the imports of the file at `path` are resolved from: its package root, its folder,
        the workspace root."""
        roots: list[str] = []
        folder = Path(path).parent
        top = folder
        while (top / "__init__.py").exists() and top.parent != top:
            top = top.parent
        for candidate in (str(top), str(folder), self.root):
            if candidate not in roots:
                roots.append(candidate)
        return roots

    def find_module(self, dotted: str, roots: list[str]) -> str | None:
        rel = dotted.replace(".", os.sep)
        for root in roots:
            for candidate in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
                if os.path.isfile(candidate) or candidate in self.overlay:
                    return candidate
        return None

    @property
    def exclusions(self) -> Exclusions:
        """What is not the project's own code (see `exclusions.py`): never read as a workspace module."""
        if self._exclusions is None:
            self._exclusions = Exclusions.for_folder(self.root)
        return self._exclusions

    def save_caches(self, now: bool = False) -> None:
        """Write what is kept between runs (import index, jedi's library answers) when it grew
        (with `defer_cache_writes`, only when called with `now`)."""
        if self.defer_cache_writes and not now:
            return
        self.index.save()
        self.resolver.library_answers.save()

    def is_workspace_file(self, path: str) -> bool:
        path = os.path.abspath(path)
        if path in self.overlay:
            return True
        verdict = self._workspace_verdicts.get(path)
        if verdict is None:
            verdict = path.startswith(self.root + os.sep) and not self.exclusions.excluded(path)
            self._workspace_verdicts[path] = verdict
        return verdict

    def importers(self, model: ModuleModel) -> list[ModuleModel]:
        """Workspace modules whose import statements name `model`'s module (the import index): where a
        kernel body defined in `model` may be launched."""
        return [self.model(path) for path in self.index.importers(model.path, model.module_name)]

    def importers_mentioning(self, model: ModuleModel, name: str) -> list[ModuleModel]:
        """The `importers` whose text holds `name`, the index asked once between two changes (a text
        set, a file event): for questions asked many times in one analysis (the call sites of each
        function), where the index's look at every workspace file's stamp would cost more than the
        analysis, and modelling every importer of a module of a big package (hundreds, each then
        analysed for its own imports) doubled a first server start's memory. Which importers name
        `name` is kept too, until the index's answers or one of those texts change (`reads`)."""
        key = ("importers-mentioning", name)
        memo = model.eval_cache
        paths = memo.get(key)
        if paths is None:
            every = memo.get("importer-paths")
            if every is None:
                reads.begin()
                try:
                    every = self.index.importers(model.path, model.module_name)
                finally:
                    memo.keep("importer-paths", every, reads.end())
            reads.begin()
            try:
                paths = [path for path in every if name in self.text(path)]
            finally:
                memo.keep(key, paths, reads.end())
        return [self.model(path) for path in paths]

    def can_matter(self, path: str, text: str | None = None) -> bool:
        """False when the file (or its `text`) cannot have findings (see `ImportIndex.can_matter`)."""
        return self.index.can_matter(os.path.abspath(path), text)

    def workspace_files(self) -> list[str]:
        """The workspace's `.py` files (walked once, then kept up to date by `file_changed`) and the
        unsaved ones, in path order."""
        if self._workspace_files is None:
            files = []
            for path in iter_python_files(self.root, self.exclusions):
                files.append(os.path.abspath(path))
                if len(files) >= MAX_WORKSPACE_FILES:
                    log.warning("%s: more than %d Python files; the rest are not searched for importers",
                                self.root, MAX_WORKSPACE_FILES)
                    break
            self._workspace_files = files
            self._workspace_set = set(files)
        extra = tuple(sorted(p for p in self.overlay if p not in self._workspace_set))
        if self._workspace_sorted is None or self._workspace_sorted[0] != extra:
            self._workspace_sorted = (extra, sorted([*self._workspace_files, *extra]))
        return self._workspace_sorted[1]


PROBES_KEPT = 2
# jedi's parser keeps every module it ever parsed in memory (parso's parser_cache; most of a
# server's memory after a few hundred jax modules). Import answers are kept here instead, so only
# the most recently used trees are kept; an evicted one comes back from parso's disk cache if needed.
PARSER_TREES_KEPT = 16


def _trim_parser_cache(keep: int = PARSER_TREES_KEPT, in_use: frozenset = frozenset()) -> None:
    """Drop the least recently used trees, but never one a live jedi inference state loaded
    (`in_use`): jedi looks its module's tree up there again (a `KeyError` that made the import's
    answer the fallback's, and not the same one in the next process, which asked jedi afresh); its
    tree stays in memory with that state anyway."""
    parso_cache = sys.modules.get("parso.cache")  # nothing to trim before jedi was first used
    caches = getattr(parso_cache, "parser_cache", None)
    if not isinstance(caches, dict) or sum(len(c) for c in caches.values()) <= 2 * keep:
        return
    items = sorted(((item.last_used, grammar, path) for grammar, by_path in caches.items()
                    for path, item in by_path.items()), key=lambda t: t[0], reverse=True)
    for _, grammar, path in items[keep:]:
        if path not in in_use:
            caches[grammar].pop(path, None)


def _loaded_paths(script) -> set:
    """The files of the modules a jedi script's inference state loaded, as parso keys them (raises
    when jedi's internals moved)."""
    state = script._inference_state
    values = [v for value_set in state.module_cache._name_cache.values() for v in value_set]
    values += [v for v in state.stub_module_cache.values() if v is not None]
    return {path for path in (v.py__file__() for v in values) if path}


_stamp = disk_cache.stamp


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

    def __init__(self, project: Project):
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


def _jedi_dependencies(script, project: Project, importer: str) -> list[str] | None:
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

    def __init__(self, project: Project):
        self.project = project
        self.library_answers = LibraryAnswers(project)
        # Absolute imports into workspace modules, answered without jedi (None: jedi answers).
        self.workspace_imports: WorkspaceImports | None = WorkspaceImports(project)
        # The few newest probes stay alive (one analysis goes back and forth between a handful of
        # modules); each pins a jedi inference state, so older ones are let go.
        self._probe_scripts: OrderedDict[str, tuple[ModuleModel, object]] = OrderedDict()

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
        _trim_parser_cache(in_use=self._trees_in_use())
        probe["answers"][statement[0]] = answer
        if answer and all(t.module_path and os.path.basename(t.module_path) != PROBE_NAME for t in answer):
            if not any(self.project.is_workspace_file(t.module_path) for t in answer):
                self.library_answers.add(key, answer)
            else:
                dependencies = _jedi_dependencies(self._probe_script(model, probe), self.project, model.path)
                if dependencies is not None:
                    self.library_answers.add(key, answer, dependencies)
        return answer

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
        value = None
        targets = self._import_targets(model, binding)
        if targets is not None:
            value = self._value_from_definition(model, targets, binding.lineno)
        if value is None:
            value = self._import_fallback(model, binding)
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
