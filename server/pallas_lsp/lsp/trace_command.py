"""The `pallas.trace` command and its `pallas-trace` diagnostics, messages and traced types.

Tracing executes the user's code, so it runs only on an explicit request (this command, or the
lens that invokes it), never on open or save. The work happens in pallas_lsp.trace (a warm
worker process per interpreter); these handlers only translate between it and LSP.
Results are kept in `ls.trace_diagnostics` (uri -> diagnostics), apart from the static ones;
publishing and pulling diagnostics append them, and an edit of a document drops them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import threading

from lsprotocol import types

from ..source_text import read_source, split_lines
from .convert import expression_range, line_range, path_uri, uri_to_path
from .notebooks import OpenNotebook
from .session import Session

log = logging.getLogger(__name__)
TRACE_COMMAND = "pallas.trace"
TRACE_SOURCE = "pallas-trace"
TOOL_STAGES = ("args", "worker")  # failures before JAX had its say: not the code's problem


_trace_pool = None


_trace_executor = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pallas-trace")


_trace_origins: dict[str, set[str]] = {}  # traced uri -> uris its diagnostics were put on


_client_progress_token = contextvars.ContextVar("pallas_trace_work_done_token", default=None)


def keep_work_done_tokens(server) -> None:
    """pygls hands command handlers only the arguments; a client that sent its own `workDoneToken`
    (VS Code does) should see the trace's progress there, so the token is kept in the request's context."""
    features = getattr(server.protocol.fm, "builtin_features", None)
    builtin = features.get(types.WORKSPACE_EXECUTE_COMMAND) if isinstance(features, dict) else None
    if builtin is None:
        return

    def execute_command(params: types.ExecuteCommandParams):
        _client_progress_token.set(getattr(params, "work_done_token", None))
        return (yield from builtin(params))

    features[types.WORKSPACE_EXECUTE_COMMAND] = execute_command


def trace_pool():
    global _trace_pool
    if _trace_pool is None:
        import atexit

        from ..trace.worker import WorkerPool

        _trace_pool = WorkerPool()
        atexit.register(_trace_pool.shutdown)
    return _trace_pool


def _trace_timeout(ls: Session, folder) -> float:
    for settings in (getattr(folder, "settings", None), getattr(ls, "settings", None)):
        value = getattr(settings, "trace_timeout", None)
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    return 120.0


def _trace_lines(ls: Session, path: str) -> list[str]:
    document = ls.open_document_at(path)
    if document is not None:
        return split_lines(document.source)
    try:
        return split_lines(read_source(path))
    except OSError:
        return []


def trace_result_diagnostics(ls: Session, result: dict, traced_path: str, definition: int | None,
                             notebook: OpenNotebook | None = None) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics, by uri, only where JAX rejected the code: on every line it blamed (or on the
    traced definition when it blamed none). A trace that JAX accepted, and a failure of the tool
    (no arguments, no worker, a timeout) are not problems of the code: they get none. A trace of
    a `notebook`'s cells: locations with a `cell` (trace/notebooks.py) go on that cell's URI, and
    `definition` is a line of its module."""
    error = result.get("error")
    if not error or error.get("stage") in TOOL_STAGES:
        return {}
    by_path: dict[str, list[types.Diagnostic]] = {}

    def add(path: str, line: int, location: dict | None = None, cell: int | None = None) -> None:
        if cell is not None:  # 0-based among the notebook's cells: keyed by its URI (`uri_for` keeps it)
            path, lines = notebook.cell_uris[cell], split_lines(notebook.notebook.cells[cell].source)
        else:
            lines = _trace_lines(ls, path)
        by_path.setdefault(path, []).append(types.Diagnostic(
            range=expression_range(lines, location) or line_range(lines, line), message=message,
            severity=types.DiagnosticSeverity.Error, code=error.get("type"), source=TRACE_SOURCE))

    platform = result.get("lowering_platform") or result.get("platform")
    message = (f"{error.get('type')}: {error.get('message')} "
               f"(JAX {result.get('jax')}, {error.get('stage')} for {platform})")
    locations = [loc for loc in error.get("locations") or [] if loc.get("path") and loc.get("line")]
    for loc in locations:
        cell = loc.get("cell") - 1 if notebook is not None and isinstance(loc.get("cell"), int) else None
        add(os.path.realpath(loc["path"]), int(loc["line"]) - 1, loc, cell)
    if not locations and definition is not None:
        where = notebook.notebook.to_cell(definition, 0) if notebook is not None else None
        add(traced_path, where[1] if where else definition, cell=where[0] if where else None)
    return {path if path in (notebook.cell_uris if notebook else ()) else ls.uri_for(path): diagnostics
            for path, diagnostics in by_path.items()}


def _example_args(result: dict, function: str) -> str:
    """Arguments to suggest: the traced file's own shapes, one per parameter (trace/targets.py)."""
    from ..trace.targets import example_args

    try:
        return example_args(read_source(result.get("path") or ""), function)
    except (OSError, ValueError):
        return "f32[128,128]"


def trace_result_message(result: dict, function: str, definition: int | None) -> types.ShowMessageParams:
    """The trace's outcome for an editor that has no report view of its own (Neovim, Emacs)."""
    from ..trace.report import kernel_summary

    error = result.get("error") or {}
    platform = result.get("lowering_platform") or result.get("platform")
    # What was chosen for the user: the launch of a body they asked about, the host for interpret mode.
    chosen = [note for note in (result.get("traced_because"),
                                f"platform {result.get('platform_reason')}" if result.get("platform") == "host"
                                and result.get("platform_reason") else None) if note]
    why = f" ({'; '.join(chosen)})" if chosen else ""
    if result.get("ok"):
        what = "lowered and compiled" if result.get("compiled") else "lowered"
        kernels = "; ".join(f"kernel {k.get('name')}: {kernel_summary(k)}" for k in result.get("kernels") or [])
        return types.ShowMessageParams(type=types.MessageType.Info, message=(
            f"pallas-trace: {function}: JAX {result.get('jax')} {what} it for {platform}" + (f": {kernels}" if kernels else "")
            + why))
    if error.get("type") == "ArgsNotFound":
        example = result.get("suggested_args") or _example_args(result, function)
        where = f" above line {definition + 1}" if definition is not None else ""
        return types.ShowMessageParams(type=types.MessageType.Warning, message=(
            f"pallas-trace: {function}: the arguments to trace it with are not known. Write "
            f"'# pallas-lsp: trace({example})'{where} with the shapes and dtypes it is called with, then trace again."))
    if error.get("stage") in TOOL_STAGES:
        return types.ShowMessageParams(type=types.MessageType.Warning, message=(
            f"pallas-trace: {function} was not traced: {error.get('message')}"))
    return types.ShowMessageParams(type=types.MessageType.Error, message=(
        f"pallas-trace: {function}: JAX {result.get('jax')} rejected it ({error.get('stage')} for {platform}): "
        f"{error.get('type')}: {error.get('message')}{why}"))


def _republish(ls: Session, uris) -> None:
    cells = {uri for uri in uris if ls.workspace.get_notebook_document(cell_uri=uri) is not None}
    for cell in cells:  # pushed, or pulled again (`_debounced_notebook_publish`)
        ls.schedule(cell)
    uris = set(uris) - cells
    if not uris:
        return  # nothing changed: a refresh would make pull clients ask again on every keystroke
    if ls.pull:
        ls.refresh_pulled()
        return
    for uri in uris:
        if ls.open_document(uri) is not None:
            ls.schedule(uri)  # static + trace diagnostics, merged in _debounced_publish
        else:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=list(ls.trace_diagnostics.get(uri, []))))


def drop_trace_diagnostics(ls: Session, uri: str) -> None:
    """An edit makes a trace stale: drop what it put on this document and what a trace of it put elsewhere,
    and the traced types of the kernels it traced or that are defined in it."""
    affected = {uri} | _trace_origins.pop(uri, set())
    ls.traced_kernels.pop(uri, None)
    dropped = {u for u in affected if ls.trace_diagnostics.pop(u, None) is not None}
    path = os.path.realpath(uri_to_path(uri))
    for origin in [o for o, refs in ls.traced_refs.items() if o == uri or path in refs]:
        del ls.traced_refs[origin]
    _republish(ls, dropped - {uri})  # `uri` itself is re-published by the edit's own analysis


def remember_traced_refs(ls: Session, uri: str, result: dict) -> None:
    """Keep what the trace found each kernel body's refs to be (the worker's `kernel_refs`), for hovers
    and inlay hints until the traced file or the body's file changes; ask the client for new hints."""
    found: dict[str, dict[tuple[int, str], list[str]]] = {}
    for ref in result.get("kernel_refs") or []:
        seen = found.setdefault(ref["path"], {}).setdefault((ref["line"], ref["name"]), [])
        if ref["aval"] not in seen:
            seen.append(ref["aval"])
    if found:
        ls.traced_refs[uri] = found
    else:
        ls.traced_refs.pop(uri, None)
    workspace = ls.client_capabilities.workspace
    if found and workspace is not None and workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
        try:
            ls.workspace_inlay_hint_refresh(None)
        except Exception:
            log.debug("workspace/inlayHint/refresh failed", exc_info=True)


def traced_refs_of(ls: Session, path: str) -> dict[tuple[int, str], list[str]]:
    """The traced types of the kernel bodies defined in `path`, from every trace still current."""
    path = os.path.realpath(path)
    merged: dict[tuple[int, str], list[str]] = {}
    for refs in ls.traced_refs.values():
        for key, avals in refs.get(path, {}).items():
            merged.setdefault(key, []).extend(a for a in avals if a not in merged.get(key, []))
    return merged


def _refresh_code_lenses(ls: Session) -> None:
    """Ask a client that can be asked (`workspace/codeLens/refresh`) to fetch its code lenses again."""
    workspace = ls.client_capabilities.workspace
    if workspace is not None and workspace.code_lens is not None and workspace.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


TRACE_ASKING_TITLE = "Trace kernel (arguments?)"
TRACE_USAGE = "pallas.trace takes [file URI, function name or {line, character}, options?]"
TRACE_OPTIONS = {"args": str, "platform": str, "compile": bool}
LSP_UINTEGER_MAX = 2**31 - 1


def _trace_arguments(arguments) -> tuple[str, str | int, dict]:
    """The command's arguments, checked: (path, function name or 0-based line, options). Anything
    else is the client's mistake and gets InvalidParams with one line saying which, never a traceback."""
    from pygls.exceptions import JsonRpcInvalidParams
    from urllib.parse import urlparse

    from ..trace import PLATFORMS

    def invalid(why: str) -> JsonRpcInvalidParams:
        return JsonRpcInvalidParams(f"{TRACE_USAGE}: {why}")

    if len(arguments) not in (2, 3):
        raise invalid(f"got {len(arguments)} argument{'s' if len(arguments) != 1 else ''}")
    uri, where, *rest = arguments
    if not isinstance(uri, str):
        raise invalid(f"the URI is {_json_type(uri)}, not a string")
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        raise invalid(f"not a local file URI: {_clip(uri)}")
    path = uri_to_path(uri)
    if "\0" in path or not parsed.path:
        raise invalid(f"not a file path: {_clip(uri)}")
    if isinstance(where, str):
        if not all(part.isidentifier() for part in where.split(".")):
            raise invalid(f"not a Python function name: {_clip(where)}")
    elif isinstance(where, dict):
        for key in ("line", "character"):
            value = where.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= LSP_UINTEGER_MAX:
                raise invalid(f"the position's {key} is not an integer from 0 to {LSP_UINTEGER_MAX}: {_clip(value)}")
        if "line" not in where:
            raise invalid("the position has no line")
        where = where["line"]
    else:
        raise invalid(f"the function is {_json_type(where)}, neither a name nor a position")
    options = rest[0] if rest else {}
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise invalid(f"the options are {_json_type(options)}, not an object")
    for key, value in options.items():
        wanted = TRACE_OPTIONS.get(key)
        if wanted is None:
            raise invalid(f"unknown option {_clip(key)} (known: {', '.join(TRACE_OPTIONS)})")
        if value is not None and not isinstance(value, wanted):
            raise invalid(f"option {key} is {_json_type(value)}, not {_json_type(wanted())}")
    if options.get("platform") is not None and options["platform"] not in PLATFORMS:
        raise invalid(f"unknown platform {_clip(options['platform'])} (use one of {', '.join(PLATFORMS)})")
    return path, where, options


def _json_type(value) -> str:
    """What a JSON value is, as a message says it: "null", "a number", "an object"..."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _clip(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


async def _trace_plan(ls: Session, uri: str, disk, where, options: dict, choice: str | None = None):
    """The request read through the kernel model (intent.py): a body's launches, the platform it runs on.
    `disk`: the text traced, or the `OpenNotebook` whose cells are."""
    from types import SimpleNamespace

    from ..trace.intent import plan_trace, unanalysed_plan

    def plan(project, path, text):
        found = plan_trace(project, path, text, where, options.get("platform"), "the platform option", choice)
        if found.infer_args is not None and not options.get("args"):
            # The arguments a call gives, as hovers read them: asked here, on the analysis thread (jedi
            # is not thread-safe), not by the trace on its own thread.
            try:
                inferred = found.infer_args()
            except Exception:  # noqa: BLE001 - the trace then asks for them, as without inference
                log.debug("argument inference failed", exc_info=True)
                inferred = None
            found.infer_args = lambda: inferred
        return found

    document = disk if isinstance(disk, OpenNotebook) else SimpleNamespace(uri=uri, source=disk)
    found = await ls.on_analysis_thread(document, "trace target", plan)
    if found is None:  # logged; a name is still traced as named
        return unanalysed_plan(uri_to_path(uri), where, options.get("platform"), "the kernel model could not be built")
    return found


def _in_cells(note: str, disk) -> str:
    """A note naming module lines, with the cells' lines when the trace is a notebook's (`disk`)."""
    return disk.notebook.cell_lines_in(note) if isinstance(disk, OpenNotebook) else note


async def _ask_launch(ls: Session, plan, uri: str, disk: str, where, options: dict):
    """Several launches run the body: the user picks one (window/showMessageRequest)."""
    try:
        answer = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Info, message=f"pallas-lsp: {_in_cells(plan.choice_message(), disk)}. Which one should be traced?",
            actions=[types.MessageActionItem(title=t.name) for t in plan.choices]))
    except Exception as exc:  # a client that cannot ask: the answer lists the launches
        log.info("could not ask which launch to trace: %s", exc)
        answer = None
    if answer is None or not isinstance(getattr(answer, "title", None), str):
        return plan
    return await _trace_plan(ls, uri, disk, where, options, choice=answer.title)


def _notebook_to_trace(ls: Session, arguments) -> tuple[OpenNotebook | None, str | None, tuple]:
    """A trace asked in a notebook's cell (its URI), or of an open notebook (its file URI): the
    notebook as the editor has it, the cell's URI, and the arguments with the notebook's file URI."""
    uri = arguments[0] if arguments else None
    if not isinstance(uri, str):
        return None, None, arguments
    document = ls.workspace.get_notebook_document(cell_uri=uri) or ls.workspace.get_notebook_document(notebook_uri=uri)
    if document is None:
        return None, None, arguments
    notebook = OpenNotebook(document, ls.open_document)
    cell_uri = uri if notebook.cell_index(uri) is not None else None
    return notebook, cell_uri, (path_uri(notebook.path), *arguments[1:])


async def trace_command(ls: Session, *arguments):
    """Arguments: a document URI; a function name or an LSP position inside its definition; optionally
    `{"args": "f32[128]", "platform": "cuda"|"tpu"|"host", "compile": bool}`. Returns the trace result (JSON)."""
    from ..analysis.notebooks import is_notebook
    from ..trace import failure, trace_target
    from ..trace.worker import TraceError, choose_interpreter, interpreter_executable

    outer = ls.protocol._request_futures.get(ls.protocol.msg_id)  # the executeCommand request itself (before any await)
    notebook, cell_uri, arguments = _notebook_to_trace(ls, arguments)
    path, where, options = _trace_arguments(arguments)
    uri = arguments[0]
    label = where if isinstance(where, str) else f"line {where + 1}"
    folder = ls.folder_for(path)
    platform = options.get("platform") or "cuda"  # until the plan says how the kernel runs
    if notebook is not None:  # the editor's cells, through the kernel's, are written to a module and traced
        uri, where = notebook.uri, notebook.module_line(cell_uri, where)
        if where is None:
            return failure(path, label, platform, "UsageError",
                           "a position in a notebook is given with the URI of its code cell", "args")
        disk = notebook
    elif is_notebook(path):  # its cells are known only from the editor here
        return failure(path, label, platform, "UsageError", "open the notebook to trace its kernels here "
                       "(or run pallas-lsp trace NOTEBOOK.ipynb::NAME)", "args")
    else:
        try:
            disk = read_source(path)  # as Python will import it (the trace does), line endings kept
        except OSError as exc:
            return failure(path, label, platform, "UsageError", f"cannot read {path}: {exc}", "args")
    document = ls.open_document(uri) if notebook is None else None
    if document is not None and document.source != disk:
        result = failure(path, label, platform, "UsageError",
                         "save the file first: the trace imports the saved file, which differs from the editor's", "args")
        if ls.settings.show_trace_results:
            ls.window_show_message(trace_result_message(result, label, None))
        return result
    plan = await _trace_plan(ls, uri, disk, where, options)
    if plan.choices:
        plan = await _ask_launch(ls, plan, uri, disk, where, options)
    function = plan.function
    if function is None:
        why = plan.intent.problem or (f"{_in_cells(plan.choice_message(), disk)}; none was chosen (trace one of them by name)"
                                      if plan.intent.targets else f"no module-level function at {label}")
        result = failure(path, label if plan.intent.targets else "", platform, "UsageError", why, "args",
                         launches=[t.name for t in plan.intent.targets])
        if ls.settings.show_trace_results:
            ls.window_show_message(trace_result_message(result, label, None))
        return result
    platform = plan.platform.name
    try:
        python = interpreter_executable(choose_interpreter(folder.settings.python))
    except TraceError as exc:
        return failure(path, function, platform, "TraceError", str(exc), "worker")

    workers = []
    cancelled = threading.Event()

    def cancel(*_):
        cancelled.set()
        for worker in workers:
            worker.cancel()

    def remember(worker):
        workers.append(worker)
        if cancelled.is_set():
            worker.cancel()

    if outer is not None:
        outer.add_done_callback(lambda f: f.cancelled() and cancel())
    token = _client_progress_token.get()
    window = ls.client_capabilities.window
    if token is None and window is not None and window.work_done_progress:
        import uuid

        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:  # progress is a courtesy
            log.info("no progress for the trace: %s", exc)
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=f"Tracing {function}", message=f"JAX lowering for {platform}", cancellable=True))
        ls.work_done_progress.tokens[token].add_done_callback(lambda f: f.cancelled() and cancel())
    def run():
        from functools import partial

        from ..trace.notebooks import trace_notebook_target

        settings = dict(args=options.get("args"), platform=platform, compile=options.get("compile"),
                        timeout=_trace_timeout(ls, folder), on_worker=remember)
        if notebook is None:
            return trace_target(trace_pool(), python, folder.root, path, function, source=disk,
                                infer_args=plan.infer_args, **settings)
        traced = trace_notebook_target(partial(trace_target, trace_pool(), python, folder.root), path,
                                       notebook.notebook, function, plan.target.line, **settings)
        if traced is None:
            return failure(path, function, platform, "UsageError", f"no cell of the notebook defines {function}", "args")
        return traced

    try:
        result = await asyncio.get_running_loop().run_in_executor(_trace_executor, run)
    except asyncio.CancelledError:
        cancel()
        raise
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="cancelled" if cancelled.is_set() else "done"))
    if cancelled.is_set():
        return result
    plan.annotate(result)
    definition = plan.target.line
    if definition is not None:
        result["definition_line"] = definition  # 0-based: where a `# pallas-lsp: trace(...)` comment goes
    in_module = result
    if notebook is not None:  # the result names cells' lines; hovers and lenses read the notebook's module
        from ..trace.notebooks import annotate_in_cells, at_module_lines

        annotate_in_cells(result, notebook.notebook)
        result = notebook.with_cell_uris(result)
        in_module = at_module_lines(result, notebook.notebook)
    diagnostics = trace_result_diagnostics(ls, result, os.path.realpath(path), definition, notebook)
    remember_traced_refs(ls, uri, in_module)
    previous = _trace_origins.pop(uri, set())
    for stale in previous:
        ls.trace_diagnostics.pop(stale, None)
    ls.trace_diagnostics.update(diagnostics)
    _trace_origins[uri] = set(diagnostics)
    _republish(ls, previous | set(diagnostics))
    if result.get("kernels"):  # the budget lenses and hovers show what JAX sized, marked as traced
        ls.traced_kernels[uri] = in_module["kernels"]
        _refresh_code_lenses(ls)
    if ls.settings.show_trace_results:  # off where the client shows the result itself (VS Code's report)
        ls.window_show_message(trace_result_message(result, function, definition))
    return result
