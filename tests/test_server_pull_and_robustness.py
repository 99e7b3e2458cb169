"""The server with a pull-diagnostics client, and with a broken `python` setting."""

import asyncio
import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import REPO, jax_python, publish_for

BAD = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
       "def body():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n")
URI = (REPO / "tests" / "fixtures" / "lsp_pull.py").as_uri()
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"])


@pytest_lsp.fixture(config=SERVER)
async def pull_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False)),
            workspace=types.WorkspaceClientCapabilities(
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True))),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python()}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_pull_diagnostics_answer_for_the_current_text(pull_client: LanguageClient):
    pull_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=BAD)))
    report = await asyncio.wait_for(pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))), 30)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in report.items] == [("PAL001", 4, 8)]
    pull_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=BAD.replace("BARRIER", "REGULAR"))]))
    report = await asyncio.wait_for(pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))), 30)
    assert list(report.items) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_keystroke_gets_one_pull_and_no_refresh(pull_client: LanguageClient):
    """VS Code pulls after every change itself; a refresh on top made it pull, cancel and pull again."""
    pull_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=BAD)))
    refreshes = pull_client.diagnostic_refresh_count
    pull_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=BAD + "\n")]))
    # The server handles messages in order and would send a refresh while handling didChange, so
    # it would reach us before the answer to this pull.
    report = await asyncio.wait_for(pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))), 30)
    assert [d.code for d in report.items] == ["PAL001"]
    assert pull_client.diagnostic_refresh_count == refreshes


@pytest_lsp.fixture(config=SERVER)
async def broken_env_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": "/nonexistent/bin/python", "debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_broken_python_setting_is_shown_and_the_server_keeps_serving(broken_env_client: LanguageClient):
    messages = [m.message for m in broken_env_client.messages]
    assert messages == ["pallas-lsp: Python environment not found: /nonexistent/bin/python. "
                        "Names are resolved from import statements only until it is fixed."]
    broken_env_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=BAD)))

    params = await publish_for(broken_env_client, URI, 1, 30)
    assert [d.code for d in params.diagnostics] == ["PAL001"]  # from the import statements alone


# An editor's default interpreter is often a bare command (`python3`): it is looked up on PATH, as
# a shell would, not taken as a file in the server's working folder.
BARE_NAME_SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "pallas_lsp", "serve"],
    server_env={**os.environ, "PATH": f"{os.path.dirname(jax_python())}{os.pathsep}{os.environ['PATH']}"})


@pytest_lsp.fixture(config=BARE_NAME_SERVER)
async def bare_name_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": "python3", "debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_bare_interpreter_name_is_found_on_path(bare_name_client: LanguageClient):
    bare_name_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=BAD)))
    params = await publish_for(bare_name_client, URI, 1, 30)
    assert [d.code for d in params.diagnostics] == ["PAL001"]
    assert [m.message for m in bare_name_client.messages] == []  # no "Python environment not found: python3"
    # jedi's environment loads beside the first analysis, so its log line may come after the diagnostics
    expected = f"analysing against {os.path.dirname(jax_python())}"

    async def logged() -> None:
        while not any(expected in m.message for m in bare_name_client.log_messages):
            await asyncio.sleep(0.02)
    await asyncio.wait_for(logged(), 60)


@pytest_lsp.fixture(config=SERVER)
async def pull_without_refresh_client(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False))),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    lsp_client.init_result = result
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_client_that_cannot_be_asked_to_pull_again_gets_push(pull_without_refresh_client: LanguageClient):
    """Like Neovim 0.11: pull declared, workspace/diagnostic/refresh not. Settings changes and trace
    results must still reach it, so the server pushes and does not advertise pull."""
    client = pull_without_refresh_client
    assert client.init_result.capabilities.diagnostic_provider is None
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=BAD)))

    params = await publish_for(client, URI, 1, 30)
    assert [d.code for d in params.diagnostics] == ["PAL001"]


def test_a_cancel_for_an_answered_request_is_not_logged_at_normal_levels(caplog):
    import logging

    import pallas_lsp.lsp.server  # noqa: F401 - installs the filter

    caplog.set_level(logging.INFO)
    logging.getLogger("pallas_lsp").setLevel(logging.INFO)
    logging.getLogger("pygls.protocol.json_rpc").warning('Cancel notification for unknown message id "%s"', 7)
    logging.getLogger("pygls.protocol.json_rpc").warning("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]
