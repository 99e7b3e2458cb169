"""JAX in the loop in the editor (`pallas.traceEntryPoints: "onSave"`): after a save, the project's
own entry points (tests, `__main__` blocks, functions with a `# pallas-lsp: trace(...)` comment) run
in the background, in the contained trace process, and what JAX said of each kernel launch they
reached is shown with the static findings.

The run is repository code: it starts only where the user set `onSave` (the VS Code extension sends
`off` in an untrusted workspace, whatever is set), one run at a time per folder, debounced after the
save, cancellable from its progress, and never on the analysis thread: diagnostics, hover and
completion keep their own pace while it runs. A result holds for the texts it ran: a file edited
since is shown with its static findings and types again, until the next save's run.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import uuid
from dataclasses import dataclass, field

from lsprotocol import types

from ..analysis import Finding
from .convert import uri_to_path
from .session import Session
from .trace_command import trace_pool, traced_refs_of

log = logging.getLogger(__name__)

SAVE_DEBOUNCE_SECONDS = 0.3  # a save-all of several files is one run
RUN_TIMEOUT_SECONDS = 600.0  # a whole run; each entry has its own limit (trace/entry_points.py)


@dataclass
class FolderRun:
    """The newest finished run of a folder's entry points, and the texts it ran (path -> digest)."""

    run: object  # trace.entry_points.EntryRun
    digests: dict[str, str]
    jax: list[Finding] = field(default_factory=list)
    # path -> (digest of the text, {0-based line: why a rule's error there is not shown}), as `with_jax` left it
    left_out: dict[str, tuple[str, dict[int, list[str]]]] = field(default_factory=dict)


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _disk_digest(path: str) -> str | None:
    from ..source_text import read_source

    try:
        return digest(read_source(path))
    except (OSError, ValueError):
        return None


def current_run(ls: Session, path: str, text: str | None = None) -> FolderRun | None:
    """The run whose results hold for `path` as it is now (`text`: the editor's), if one ran it."""
    folder = ls.folder_for(path)
    done = ls.entry_runs.get(folder.root)
    if done is None:
        return None
    key = os.path.realpath(path)
    ran = done.digests.get(key)
    if ran is None:
        return done  # not a file the run read: nothing of it is stale here
    now = digest(text) if text is not None else _disk_digest(key)
    return done if now == ran else None


def with_jax(ls: Session, path: str, text: str, findings: list[Finding]) -> list[Finding]:
    """The file's static findings with JAX's verdicts of the launches an entry point reached: PAL100
    where JAX rejected one, a rule's finding confirmed by JAX, one JAX contradicts left out."""
    done = current_run(ls, path, text)
    if done is None:
        return findings
    from ..trace.jax_findings import merge

    key = os.path.realpath(path)
    own = [f for f in done.jax if os.path.realpath(f.path) == key]
    left_out: list = []
    merged, _ = merge(findings, done.run, jax=own, left_out=left_out)
    done.left_out[key] = (digest(text), {})
    for finding, why in left_out:
        done.left_out[key][1].setdefault(finding.span.line, []).append(f"{finding.code} ({finding.name}) is not shown: {why}.")
    return [f for f in merged if os.path.realpath(f.path) == key or f in findings]


def contradicted(ls: Session, path: str, text: str, line: int) -> list[str]:
    """Why a rule's error on `line` (0-based) is not shown: JAX lowered its launch without error."""
    done = current_run(ls, path, text)
    if done is None:
        return []
    ran, lines = done.left_out.get(os.path.realpath(path), (None, {}))
    return lines.get(line, []) if ran == digest(text) else []


def traced_refs(ls: Session, path: str) -> dict[tuple[int, str], list[str]]:
    """JAX's types of the kernel parameters in `path`: a trace's, else the entry points' run's (while
    the file is as that run read it)."""
    found = traced_refs_of(ls, path)
    if found:
        return found
    document = ls.open_document_at(path)
    done = current_run(ls, path, document.source if document is not None else None)
    if done is None:
        return {}
    return done.run.traced_refs().get(os.path.realpath(path), {})


def traced_kernels(ls: Session, uri: str) -> list[dict]:
    """The kernel records (JAX's shared memory, barriers, TMEM) for the lenses and hovers of `uri`: its
    trace's, else those of the launches the entry points' run reached (while the file is as it read it)."""
    found = ls.traced_kernels.get(uri)
    if found:
        return found
    path = uri_to_path(uri)
    document = ls.open_document(uri)
    done = current_run(ls, path, document.source if document is not None else None)
    if done is None:
        return []
    return done.run.kernels()


def after_save(ls: Session, uri: str) -> None:
    """A file was saved: (re)start its folder's run, if the user asked for runs on save."""
    path = uri_to_path(uri)
    folder = ls.folder_for(path)
    if folder.settings.trace_entry_points != "onSave":
        return
    done = ls.entry_runs.get(folder.root)
    if done is not None and os.path.realpath(path) in done.digests and _unchanged(done):
        return  # saved as it was run (a save without an edit): its results hold
    pending = ls.entry_tasks.pop(folder.root, None)
    if pending is not None:
        pending.cancel()
    ls.entry_tasks[folder.root] = asyncio.ensure_future(_run_after_save(ls, folder))


def _unchanged(done: FolderRun) -> bool:
    return all(_disk_digest(path) == ran for path, ran in done.digests.items())


def _python(folder) -> str | None:
    from ..trace.worker import TraceError, choose_interpreter, interpreter_executable

    try:
        return interpreter_executable(choose_interpreter(folder.settings.python))
    except TraceError as exc:
        log.info("entry points not run for %s: %s", folder.root, exc)
        return None


def _bare_platform(folder) -> str:
    return "tpu" if folder.settings.platform == "tpu" else "cuda"


async def fix_verdicts(ls: Session, path: str, text: str, finding: Finding, fixes) -> list:
    """JAX's verdict on each of a finding's fixes (trace/fix_verdicts.py), where the user runs entry
    points on save and one reached a launch in the files the fix edits: the entry points run again on
    the fixed text, on the runs' thread (never the analysis thread). None for a fix nothing reached."""
    folder = ls.folder_for(path)
    done = current_run(ls, path, text) if folder.settings.trace_entry_points == "onSave" else None
    python = _python(folder) if done is not None else None
    if python is None or not any(fix.kind == "rewrite" for fix in fixes):
        return [None for _ in fixes]
    from ..source_text import read_source
    from ..trace.fix_verdicts import judge_fix

    def text_of(other: str) -> str:
        document = ls.open_document_at(other)
        return document.source if document is not None else read_source(other)

    def judge():
        return [judge_fix(trace_pool(), python, done.run, finding, fix, text_of,
                          bare_platform=_bare_platform(folder)) for fix in fixes]

    try:
        return await asyncio.get_running_loop().run_in_executor(_runs, judge)
    except Exception:  # noqa: BLE001 - the fixes are offered as the rules verified them
        log.exception("verifying fixes with JAX failed")
        return [None for _ in fixes]


async def _run_after_save(ls: Session, folder) -> None:
    try:
        await asyncio.sleep(SAVE_DEBOUNCE_SECONDS)
    except asyncio.CancelledError:
        return
    python = _python(folder)
    if python is None:
        return
    cancelled = threading.Event()
    workers = []

    def cancel() -> None:
        cancelled.set()
        for worker in workers:  # the entry running now ends at once, not at its time limit
            worker.cancel()

    def remember(worker) -> None:
        workers.append(worker)
        if cancelled.is_set():
            worker.cancel()

    token = await _progress(ls, cancel)

    def run():
        from ..trace.entry_points import run_entry_points
        from ..trace.jax_findings import jax_findings

        done = run_entry_points(trace_pool(), python, folder.root, [folder.root], timeout=RUN_TIMEOUT_SECONDS,
                                bare_platform=_bare_platform(folder),
                                cancelled=cancelled.is_set, on_worker=remember)
        read = {os.path.realpath(r.entry.path) for r in done.results}
        for _, record in done.launches():
            for where in (record.get("body"), record.get("launch")):
                if where and where.get("path"):
                    read.add(os.path.realpath(where["path"]))
        digests = {p: d for p in read if (d := _disk_digest(p)) is not None}
        return FolderRun(done, digests, jax_findings(done))

    try:
        finished = await asyncio.get_running_loop().run_in_executor(_runs, run)
    except asyncio.CancelledError:  # a newer save: this run's results would be stale
        cancel()
        raise
    except Exception:  # noqa: BLE001 - the static path goes on; the log says why
        log.exception("running the entry points of %s failed", folder.root)
        return
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message="cancelled" if cancelled.is_set() else "done"))
    if cancelled.is_set():
        return
    ls.entry_runs[folder.root] = finished
    log.info("entry points of %s: %s", folder.root, finished.run.summary())
    ls.reschedule_all()  # diagnostics, hovers and lenses of the open files with JAX's verdicts
    _refresh(ls)


async def _progress(ls: Session, cancel) -> str | None:
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    token = str(uuid.uuid4())
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as exc:  # noqa: BLE001 - progress is a courtesy
        log.info("no progress for the entry points' run: %s", exc)
        return None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
        title="Running entry points with JAX", message="tests and __main__ blocks: JAX lowers each launch",
        cancellable=True))
    ls.work_done_progress.tokens[token].add_done_callback(lambda f: f.cancelled() and cancel())
    return token


def _refresh(ls: Session) -> None:
    workspace = ls.client_capabilities.workspace
    for supported, refresh in ((workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support,
                                ls.workspace_inlay_hint_refresh),
                               (workspace and workspace.code_lens and workspace.code_lens.refresh_support,
                                ls.workspace_code_lens_refresh)):
        if supported:
            try:
                refresh(None)
            except Exception:  # noqa: BLE001 - the client asks again on its own later
                log.debug("refresh failed", exc_info=True)


def _executor():
    import concurrent.futures

    return concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-entry-points")


_runs = _executor()
