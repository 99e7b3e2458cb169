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
import threading
from collections import OrderedDict
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING


from . import disk_cache, plain_callees, reads
from ..interpreters import interpreter_executable
from ..python_path import resolve_python
from .environment import EnvironmentError_, PythonEnvironment, choose_interpreter, interpreter_sys_path, load_environment
from .evaluate import Evaluator
from .exclusions import Exclusions
from .import_index import ImportIndex
from .model import ModuleModel
from .model_patch import has_word, patch as patch_model, words_changed
from .parsed_trees import ParsedTrees
from .notebooks import Notebook, is_notebook, read_notebook_file
from ..source_text import Refusal, read_decoded
from .resolver import Resolver

if TYPE_CHECKING:
    import jedi

log = logging.getLogger(__name__)

_stamp = disk_cache.stamp

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




def _installed(sys_path: list[str], package: str) -> bool:
    """Whether a regular package of that name is on the search path."""
    return any(os.path.isfile(os.path.join(folder or ".", package, "__init__.py")) for folder in sys_path)


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
        # Set: jedi's environment may load now (`load_environment_soon`); asking for it sets it.
        self.environment_wanted = threading.Event()
        self._jedi_project: jedi.Project | None = None
        self.overlay: dict[str, str] = {}
        self._models: OrderedDict[str, ModuleModel] = OrderedDict()  # least recently used first
        self._trees = ParsedTrees()  # parsed before their modules are modelled (`parsed_tree`)
        self.model_text_budget = MODEL_TEXT_BUDGET
        # A keystroke's text is patched into the file's model; fix-all's rounds are parsed whole (`fix_all`).
        self.patch_edits = True
        # When each file's text (or, under "*", every model) last changed, as a running count: a file's
        # incremental analysis reuses findings only while nothing else changed (`unchanged_since`).
        self._change_count = 0
        self._changed_at: dict[str, int] = {}
        self.incremental: dict = {}  # path -> its `incremental.DocumentState`, for the server's edits
        self.deferral = None  # a first pass's `first_pass.Deferral`: importers are not searched meanwhile
        self._patched: dict[str, ModuleModel] = {}  # path -> its model, when its last edit was patched into it
        self._words_asked: dict[str, set[str]] = {}  # path -> the words `mentions` was asked about its text
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
        # Trusting file events (`check`, a server told of file changes): each folder's package (its
        # dotted parts, the top folder of the package) found once, not at each module name or import
        # root asked (a check of 640 files stat'ed 32,000 `__init__.py`: a tenth of its CPU). Forgotten
        # at any file event (an `__init__.py` created or deleted).
        self._packages: dict[Path, tuple[tuple[str, ...], Path]] = {}
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
            self.environment_wanted.set()
            with self._environment_lock:  # also loaded off the analysis thread (`load_environment_soon`)
                if self._environment is None:
                    self._environment = load_environment(self.python)
        return self._environment

    def load_environment_soon(self, done) -> None:
        """On another thread: the interpreter's `sys.path` at once (every analysis needs it), then its jedi
        environment: where jax and jaxlib are installed, only once `environment_wanted` is set (the server sets
        it when a document's first diagnostics are out; an analysis asking jedi sets it): a first analysis whose
        imports the installed modules' tables or the cache file answer no longer shares the interpreter lock
        with jedi's import (0.07-0.1 s of CPU on a 2-CPU machine). Without them, imports of theirs are jedi's
        to answer (tpu-inference's first pass asked it five: its own `jax` folders), so jedi's process starts
        beside the first analysis, not when it is asked. `done(environment, error)` after."""
        def load():
            try:
                sys_path = interpreter_sys_path(self.python)  # an unusable interpreter is said now
                if all(_installed(sys_path, package) for package in ("jax", "jaxlib")):
                    self.environment_wanted.wait()
                environment = self.environment
            except EnvironmentError_ as exc:
                done(None, exc)
            else:
                done(environment, None)

        threading.Thread(target=load, name="pallas-environment", daemon=True).start()

    def interpreter_sys_path(self) -> list[str]:
        """The interpreter's search path as jedi's environment reports it, without waiting for that
        environment (`environment.interpreter_sys_path`); raises `EnvironmentError_` as it would."""
        return interpreter_sys_path(self.python)

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
        with reads.settled():  # answers that come out the same keep what read them, once the text is set
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
        self._packages.clear()
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

    def mentions(self, path: str, word: str) -> bool:
        """Whether the file's text holds the name `word` (whole: a call of `kernel` is written with the name,
        a text holding only `kernels` or `kernel_sharding` calls none): an answer made from it is forgotten
        only at an edit that changes it (`_patch`), not at every edit of the file as one from `text`."""
        path = os.path.abspath(path)
        reads.note(self.read_key(path))
        reads.note(self.read_key(path, ("mentions", word)))
        self._words_asked.setdefault(path, set()).add(word)
        return has_word(self._text(path), word)

    def _text(self, path: str) -> str:
        if path in self.overlay:
            return self.overlay[path]
        if is_notebook(path):  # its code cells, as one module
            return self.notebook(path).module
        self.read_from_disk(path)
        if self.checking():
            kept = self._disk_texts.get(path)
            if kept is not None:  # read once in a check: asked again by each importer's question (3,619 on tokamax)
                return kept[1].text
        return _read_by_stamp(self._disk_texts, path, read_decoded).text

    def checking(self) -> bool:
        """A `check`: files do not change meanwhile (file events trusted) and no reads are recorded."""
        return self.index.trust_events and not reads.tracking()

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
        self._trees.clear()
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
        model = ModuleModel(path, text, self.module_name(path), refusal=refusal, tree=self._trees.take(path, text))
        self.own(model)
        if cached is not None:
            # What other modules evaluated through the old text (an importer's kernel entries, a
            # helper's value) points at the old model's nodes: the new one would not match them.
            self._forget_evaluations_reading(path)
        self._models[path] = model
        self._models.move_to_end(path)
        return model

    def parsed_tree(self, path: str, text: str):
        """`big_literals.parse(text)` of the file at `path` (raising what it raises), parsed once: the
        tree of its model when the model is of this text parsed whole, else one kept for its model
        (`parsed_trees`). Only read: a model's tree is patched at edits."""
        path = os.path.abspath(path)
        model = self._models.get(path)
        if model is not None and model.source.whole and model.text == text:
            return model.tree
        return self._trees.tree(path, text)

    def _patch(self, path: str, text: str) -> bool:
        """Bring the file's model to its new `text` in place, forgetting only what the edit can
        change (`model_patch`); False when it cannot (the model is then of the old text)."""
        model = self._models.get(path)
        if model is None or path in self._stand_ins or len(text) > self.model_text_budget or not self.patch_edits:
            return False
        behind = model.text != self.overlay.get(path, model.text)  # edits since were not patched into it
        old_text, asked = model.text, self._words_asked.get(path, set()) | set(model._mentions)
        keys = patch_model(model, text)
        if keys is None:
            return False
        keys += [("mentions", word) for word in words_changed(old_text, text, asked)]
        if behind:  # what was read from it and from the texts since, all of it
            self._forget_evaluations_reading(path)
        plain_callees.forget_reading(model, keys)
        for key in keys:
            reads.forget(self.read_key(path, key) if key in ("text", "exports") or key[0] == "mentions" else key)
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

    def holds(self, model: ModuleModel) -> bool:
        """Whether `model` is the model kept for its file (not one dropped or parsed again since)."""
        return model.path is not None and self._models.get(model.path) is model

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
        parts = list(self._package(file.parent)[0])
        if file.name != "__init__.py":
            parts.append(file.stem)
        return ".".join(parts) if parts else None

    def import_roots(self, path: str) -> list[str]:
        """Folders the imports of the file at `path` are resolved from: its package root, its folder,
        the workspace root."""
        roots: list[str] = []
        folder = Path(path).parent
        top = self._package(folder)[1]
        for candidate in (str(top), str(folder), self.root):
            if candidate not in roots:
                roots.append(candidate)
        return roots

    def _package(self, folder: Path) -> tuple[tuple[str, ...], Path]:
        """(the dotted parts of the package `folder` is, outermost first: () when it holds no
        `__init__.py`; the first folder above it without one), on disk; kept while file events are
        trusted (see `_packages`)."""
        trusted = self.index.trust_events
        found = self._packages.get(folder) if trusted else None
        if found is None:
            parts: list[str] = []
            top = folder
            while (top / "__init__.py").exists() and top.parent != top:
                parts.insert(0, top.name)
                top = top.parent
            found = (tuple(parts), top)
            if trusted:
                self._packages[folder] = found
        return found

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
        kernel body defined in `model` may be launched. During a first pass, none (`first_pass.py`)."""
        paths = self.index.importers(model.path, model.module_name)
        if self.deferral is not None and paths:
            self.deferral.left_out(paths, self.evaluator.in_own_module_only)
            return []
        return [self.model(path) for path in paths]

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
                paths = [path for path in every if self.mentions(path, name)]
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
