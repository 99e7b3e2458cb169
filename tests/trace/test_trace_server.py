"""The `pallas.trace` command, the "Trace kernel" code lens and `pallas-trace` diagnostics, over stdio."""

import asyncio
import os
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import FIXTURES, jax_python, publish_for

pytestmark = pytest.mark.jax

TRACE = FIXTURES / "trace"
KERNELS = (TRACE / "kernels.py").as_uri()
BAD = (TRACE / "bad_kernels.py").as_uri()
MISBEHAVING = (TRACE / "misbehaving.py").as_uri()
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"],
                            server_env={**os.environ, "PALLAS_LSP_TRACE_MEMORY_MB": "512"})


def capabilities(pull=False):
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False)) if pull else None,
        workspace=types.WorkspaceClientCapabilities(
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)) if pull else None)


async def start(client: LanguageClient, pull=False, **options):
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(pull), root_uri=TRACE.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20, **options}))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def pull_client(lsp_client: LanguageClient):
    await start(lsp_client, pull=True)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def impatient_client(lsp_client: LanguageClient):
    await start(lsp_client, traceTimeout=15)  # a cold worker (jax import) must fit, even on a loaded machine
    yield
    await lsp_client.shutdown_session()


def open_file(client, uri, text=None, version=1):
    path = uri[len("file://"):]
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=open(path).read() if text is None else text)))


def trace(client, uri, where, options=None):
    arguments = [uri, where] + ([options] if options else [])
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command="pallas.trace", arguments=arguments))


async def diagnostics_where(client, uri, predicate, timeout=60.0):
    """Wait until the newest published diagnostics for `uri` satisfy `predicate`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate(client.diagnostics.get(uri, [])):
            return client.diagnostics[uri]
        await asyncio.sleep(0.05)
    raise AssertionError(f"diagnostics for {uri} never matched: {client.diagnostics.get(uri)}")


def sources(diagnostics):
    return sorted((d.source, d.code, d.range.start.line) for d in diagnostics)


def span(d):
    return (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)


@pytest.mark.asyncio(loop_scope="function")
async def test_code_lens_above_every_traceable_entry_function(client: LanguageClient):
    open_file(client, KERNELS)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=KERNELS)))
    assert [(lens.range.start.line, lens.command.title, lens.command.command, list(lens.command.arguments or []))
            for lens in lenses] == [
        (18, "Trace kernel", "pallas.trace", [KERNELS, "add_one"]),
        (31, "Trace kernel", "pallas.trace", [KERNELS, "scaled"]),
        (35, "Trace kernel", "pallas.trace", [KERNELS, "twice"]),
        # The shared-memory estimate above each launch (PAL012): a label. 65,536 + 1,024 scratch, one barrier.
        (32, "SMEM 66,568 / 232,448 B", "", []),
        (36, "SMEM 66,568 / 232,448 B", "", [])]
    open_file(client, MISBEHAVING)  # no kernels there: no lens (the command still traces them by name)
    assert list(await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=MISBEHAVING)))) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_trace_failure_is_a_result_and_a_pallas_trace_diagnostic_on_the_get_global_line(client: LanguageClient):
    open_file(client, BAD)
    static = await diagnostics_where(client, BAD, lambda ds: len(ds) == 2)
    assert sources(static) == [("pallas-lsp", "PAL001", 18), ("pallas-lsp", "PAL002", 25)]

    result = await trace(client, BAD, "smem_global")
    assert (result["ok"], result["error"]["type"], result["error"]["message"]) == (
        False, "NotImplementedError", "get_global only supports semaphores, got Ref<smem>{float32[128]}")
    assert [(loc["line"], loc["path"]) for loc in result["error"]["locations"]] == [(19, str(TRACE / "bad_kernels.py"))]

    merged = await diagnostics_where(client, BAD, lambda ds: len(ds) == 3)
    assert sources(merged) == [("pallas-lsp", "PAL001", 18), ("pallas-lsp", "PAL002", 25),
                               ("pallas-trace", "NotImplementedError", 18)]
    (traced,) = [d for d in merged if d.source == "pallas-trace"]
    assert span(traced) == (18, 13, 18, 59)  # `pl.get_global(...)`, JAX's frame columns
    assert traced.severity == types.DiagnosticSeverity.Error
    assert traced.message == ("NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]} "
                              "(JAX 0.12.0.1, lower for cuda)")
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Error, (
        "pallas-trace: smem_global: JAX 0.12.0.1 rejected it (lower for cuda): NotImplementedError: "
        "get_global only supports semaphores, got Ref<smem>{float32[128]}"))]

    # An edit makes the trace stale: its diagnostics go, the static ones stay.
    text = open(TRACE / "bad_kernels.py").read()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=BAD, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + "\n")]))
    after = await diagnostics_where(client, BAD, lambda ds: all(d.source == "pallas-lsp" for d in ds) and len(ds) == 2)
    assert sources(after) == [("pallas-lsp", "PAL001", 18), ("pallas-lsp", "PAL002", 25)]


@pytest.mark.asyncio(loop_scope="function")
async def test_trace_by_position_reports_resources_with_progress(client: LanguageClient):
    open_file(client, KERNELS)
    result = await trace(client, KERNELS, {"line": 28, "character": 8})  # inside add_one's body
    assert result["ok"] and result["function"] == "add_one" and result["args_source"] == "comment on line 18"
    assert [(k["name"], k["smem_bytes"], k["barriers"], k["gmem_semaphores"]) for k in result["kernels"]] == [
        ("add_one", 66560, 1, 1)]
    # The result goes to one place: a message (this client has no report view), no diagnostic.
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Info, (
        "pallas-trace: add_one: JAX 0.12.0.1 lowered it for cuda: kernel add_one: shared memory 66,560 bytes, "
        "1 barrier, 0 TMEM columns, 1 global semaphore"))]
    assert result["definition_line"] == 18
    (reports,) = client.progress_reports.values()
    assert [type(r).__name__ for r in reports] == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]
    assert (reports[0].title, reports[0].cancellable, reports[1].message) == ("Tracing add_one", True, "done")


@pytest.mark.asyncio(loop_scope="function")
async def test_after_a_trace_hover_and_inlay_hints_show_jaxs_own_types_until_the_file_changes(client: LanguageClient):
    open_file(client, KERNELS)

    def hover(line, character):
        return client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=KERNELS), position=types.Position(line, character)))

    async def hints():
        found = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=KERNELS),
            range=types.Range(types.Position(24, 0), types.Position(25, 0))))
        return [hint.label for hint in found]

    static = (await hover(24, 13)).contents.value  # `x_ref` of add_one: its operand is not known statically
    assert static.startswith("```python\nx_ref: Ref<gmem>{?[?]}\n```")
    assert await hints() == [": gmem", ": f32[128] gmem", ": f32[128,128] smem", ": bf16[256] smem", ": barrier[] smem"]

    result = await trace(client, KERNELS, "add_one")
    assert result["ok"]
    assert [(r["line"], r["name"], r["aval"]) for r in result["kernel_refs"]] == [
        (19, "x_ref", "Ref<gmem>{float32[128]}"), (19, "o_ref", "Ref<gmem>{float32[128]}"),
        (19, "tile", "Ref<smem>{float32[128,128]}"), (19, "small", "Ref<smem>{bfloat16[256]}"),
        (19, "barrier", "Ref<smem>{barrier[]}")]
    assert (await hover(24, 13)).contents.value == (
        "```python\nx_ref: Ref<gmem>{float32[128]}\n```\n\ntraced by JAX (until the file changes)\n\n"
        "- kernel input from `operand 0` of `plgpu.kernel` (line 19)")
    assert await hints() == [": f32[128] gmem (traced)", ": f32[128] gmem (traced)", ": f32[128,128] smem (traced)",
                             ": bf16[256] smem (traced)", ": barrier[] smem (traced)"]

    text = open(TRACE / "kernels.py").read()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=KERNELS, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + "\n")]))
    assert (await hover(24, 13)).contents.value == static
    assert await hints() == [": gmem", ": f32[128] gmem", ": f32[128,128] smem", ": bf16[256] smem", ": barrier[] smem"]


@pytest.mark.asyncio(loop_scope="function")
async def test_pull_diagnostics_include_the_trace(pull_client: LanguageClient):
    client = pull_client
    open_file(client, BAD)
    result = await trace(client, BAD, "interpreted", {"platform": "host"})
    assert result["error"]["type"] == "TypeError"
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=BAD)))
    assert sources(report.items) == [("pallas-lsp", "PAL001", 18), ("pallas-lsp", "PAL002", 25),
                                     ("pallas-trace", "TypeError", 25)]
    assert client.diagnostic_refresh_count >= 1


@pytest.mark.asyncio(loop_scope="function")
async def test_unsaved_changes_are_not_traced(client: LanguageClient):
    open_file(client, KERNELS, text=open(TRACE / "kernels.py").read() + "# edited\n")
    result = await trace(client, KERNELS, "add_one")
    assert (result["ok"], result["error"]["type"], result["error"]["message"]) == (
        False, "UsageError", "save the file first: the trace imports the saved file, which differs from the editor's")


async def budget_lenses(client, uri):
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    return [(lens.range.start.line, lens.command.title) for lens in lenses if lens.command.command == ""]


@pytest_lsp.fixture(config=SERVER)
async def lens_refreshing_client(lsp_client: LanguageClient):
    """A client that can be asked to fetch its code lenses again (VS Code can), counting the asks."""
    lsp_client.lens_refreshes = 0

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params):
        lsp_client.lens_refreshes += 1

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True))),
        root_uri=TRACE.as_uri(), initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_after_a_trace_the_budget_lens_and_hover_show_the_traced_figure_until_an_edit(
        lens_refreshing_client: LanguageClient):
    """What JAX's `_launch` sized in the trace (scratch, barriers) replaces the estimate, marked as traced;
    the client is asked to fetch its lenses again."""
    client = lens_refreshing_client
    text = open(KERNELS[len("file://"):]).read()
    open_file(client, KERNELS, text)
    assert await budget_lenses(client, KERNELS) == [(32, "SMEM 66,568 / 232,448 B"), (36, "SMEM 66,568 / 232,448 B")]
    result = await trace(client, KERNELS, "twice")
    assert result["ok"] and [k["launch_smem_bytes"] for k in result["kernels"]] == [66568]
    assert client.lens_refreshes == 1
    assert await budget_lenses(client, KERNELS) == [(32, "SMEM 66,568 / 232,448 B (traced)"),
                                                    (36, "SMEM 66,568 / 232,448 B (traced)")]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=KERNELS), position=types.Position(line=36, character=12)))
    assert hover.contents.value.splitlines()[:3] == [
        "**SMEM 66,568 / 232,448 B (traced)** (Mosaic GPU shared memory, as JAX computed it in the last trace)", "",
        "- estimate: SMEM 66,568 / 232,448 B"]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=KERNELS, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + "\n")]))
    assert await budget_lenses(client, KERNELS) == [(32, "SMEM 66,568 / 232,448 B"), (36, "SMEM 66,568 / 232,448 B")]


@pytest.mark.asyncio(loop_scope="function")
async def test_misbehaving_code_leaves_the_server_serving(impatient_client: LanguageClient):
    client = impatient_client
    open_file(client, MISBEHAVING)
    host = {"platform": "host"}
    outcomes = {}
    for function in ("prints", "exits", "hard_exits", "crashes", "hangs", "forks", "escapes", "kills_its_supervisor",
                     "allocates", "reads_stdin"):
        result = await asyncio.wait_for(trace(client, MISBEHAVING, function, host), 120)
        outcomes[function] = (result["ok"], (result["error"] or {}).get("type"))
    assert outcomes == {
        "prints": (True, None), "exits": (False, "SystemExit"), "hard_exits": (False, "WorkerCrashed"),
        "crashes": (False, "WorkerCrashed"), "hangs": (False, "TraceTimeout"), "forks": (True, None),
        "escapes": (True, None), "kills_its_supervisor": (True, None), "allocates": (False, "MemoryError"),
        "reads_stdin": (True, None)}
    # Still serving: a code lens and a real kernel trace.
    open_file(client, KERNELS)
    assert len(await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=KERNELS)))) == 5
    assert (await trace(client, KERNELS, "add_one"))["ok"]


@pytest.mark.asyncio(loop_scope="function")
async def test_cancelling_the_request_kills_the_work(client: LanguageClient):
    open_file(client, MISBEHAVING)
    before = set(client.protocol._request_futures)
    pending = asyncio.ensure_future(trace(client, MISBEHAVING, "hangs", {"platform": "host"}))
    await asyncio.sleep(0)
    (request_id,) = set(client.protocol._request_futures) - before
    deadline = time.monotonic() + 60
    while not any(isinstance(r, types.WorkDoneProgressBegin) for rs in client.progress_reports.values() for r in rs):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    await asyncio.sleep(3)  # the worker is starting or hanging
    start = time.monotonic()
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    with pytest.raises(Exception, match="cancel"):
        await asyncio.wait_for(pending, 30)
    while not any(isinstance(r, types.WorkDoneProgressEnd) for rs in client.progress_reports.values() for r in rs):
        assert time.monotonic() - start < 30
        await asyncio.sleep(0.05)
    (end,) = [r for rs in client.progress_reports.values() for r in rs if isinstance(r, types.WorkDoneProgressEnd)]
    assert end.message == "cancelled"
    # The next trace gets a fresh worker and works.
    result = await trace(client, MISBEHAVING, "prints", {"platform": "host"})
    assert result["ok"] and result["worker"]["cold"]


@pytest.mark.asyncio(loop_scope="function")
async def test_cancelling_the_progress_kills_the_work(client: LanguageClient):
    open_file(client, MISBEHAVING)
    pending = asyncio.ensure_future(trace(client, MISBEHAVING, "hangs", {"platform": "host"}))
    deadline = time.monotonic() + 60
    while not client.progress_reports or not any(client.progress_reports.values()):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    await asyncio.sleep(3)
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(pending, 30)
    assert (result["ok"], result["error"]["type"]) == (False, "TraceCancelled")


@pytest.mark.asyncio(loop_scope="function")
async def test_progress_goes_to_the_clients_own_work_done_token(client: LanguageClient):
    open_file(client, KERNELS)
    client.progress_reports["client-token"] = []  # a client-initiated token needs no create request
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="pallas.trace", arguments=[KERNELS, "scaled"], work_done_token="client-token"))
    assert result["ok"]
    assert list(client.progress_reports) == ["client-token"]
    assert [type(r).__name__ for r in client.progress_reports["client-token"]] == [
        "WorkDoneProgressBegin", "WorkDoneProgressEnd"]


@pytest_lsp.fixture(config=SERVER)
async def reporting_client(lsp_client: LanguageClient):
    """Like the VS Code extension: it shows each trace's result in its own report."""
    await start(lsp_client, showTraceResults=False)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_unknown_arguments_are_asked_for_not_reported_as_a_problem_of_the_code(client: LanguageClient, tmp_path):
    example = tmp_path / "k.py"
    example.write_text(open(FIXTURES.parent.parent / "examples" / "kernels" / "good_semaphore_ordering.py").read().replace(
        "# pallas-lsp: trace(f32[2,128])\n", ""))
    definition = next(i for i, line in enumerate(example.read_text().splitlines()) if line.startswith("ordered_double = "))
    uri = example.as_uri()
    open_file(client, uri)
    assert list((await publish_for(client, uri, 1, 60)).diagnostics) == []
    result = await trace(client, uri, "ordered_double")
    assert (result["error"]["type"], result["error"]["stage"]) == ("ArgsNotFound", "args")
    assert "--args" not in result["error"]["message"]  # a CLI flag means nothing in an editor
    assert (result["suggested_args"], result["definition_line"]) == ("f32[2,128]", definition)
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Warning, (
        "pallas-trace: ordered_double: the arguments to trace it with are not known. Write "
        f"'# pallas-lsp: trace(f32[2,128])' above line {definition + 1} with the shapes and dtypes it is called with, "
        "then trace again."))]
    assert list(client.diagnostics[uri]) == []  # correct code: no diagnostic (none published since)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_client_with_its_own_report_gets_no_message(reporting_client: LanguageClient):
    open_file(reporting_client, KERNELS)
    assert (await trace(reporting_client, KERNELS, "add_one"))["ok"]
    assert reporting_client.messages == []


@pytest.mark.asyncio(loop_scope="function")
async def test_every_example_has_a_trace_code_lens(client: LanguageClient):
    examples = sorted((FIXTURES.parent.parent / "examples" / "kernels").glob("*.py"))
    lenses = {}
    for path in examples:
        open_file(client, path.as_uri())
        found = await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
        lenses[path.name] = [(lens.command.title, lens.command.arguments[1]) for lens in found
                             if lens.command.title == "Trace kernel"]  # not the shared-memory lens
    assert lenses == {name: [("Trace kernel", launch)] for name, launch in {
        "good_scratch_buffer.py": "scale", "good_semaphore_array_indexed.py": "double",
        "good_semaphore_ordering.py": "ordered_double", "good_tpu_copy_wait.py": "copy",
        "pal001_global_buffer.py": "scale", "pal002_interpret_semaphore.py": "ordered_double",
        "pal003_tpu_pallas_call.py": "copy", "pal004_two_global_semaphores_no_grid.py": "double",
        "pal005_semaphore_array_no_index.py": "copy", "pal006_global_semaphore_as_barrier.py": "copy",
        "pal007_run_scoped_grid_semaphore.py": "exchange_all", "pal008_kernel_returns_semaphore.py": "copy",
        "pal009_non_decrementing_wait.py": "copy", "pal010_dma_semaphore_value.py": "copy",
        "pal011_barrier_semaphore_id.py": "copy", "pal012_shared_memory_over_budget.py": "copy",
        "pal013_wait_on_dma_semaphore.py": "copy", "pal014_signal_semaphore_value.py": "add_one",
        "pal015_copy_wait_regular_semaphore.py": "copy", "pal016_gpu_interpreter_semaphore.py": "run",
        "pal017_local_copy_src_sem.py": "copy", "pal018_tpu_buffer_in_gpu_kernel.py": "double_it",
        "pal019_global_memory_scratch.py": "square_plus_one", "pal020_scratch_beside_grid_spec.py": "run",
        "pal023_barrier_semaphore_no_collective_id.py": "run", "pal024_smem_accumulator_as_array.py": "run",
        "pal025_interpret_true_tma_copy.py": "run", "pal026_tpu_interpreter_gpu_kernel.py": "run",
        "pal027_eval_shape_scratch.py": "run", "pal028_alloc_semaphore_in_kernel.py": "run",
        "pal029_semaphore_list_scratch.py": "run"}.items()}
