"""Bad input gets a clear answer and the server keeps serving: huge files, binary text, unknown methods
and commands, positions outside the document, documents that are not open, jedi failing inside."""

import asyncio
import sys

import jedi
import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import jax_python, publish_for
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

HEADER = ("import jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
          "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
BAD_LINE = "    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


async def publish(client: LanguageClient, uri: str, version: int, timeout: float = 60.0):
    return await publish_for(client, uri, version, timeout)


def open_text(client: LanguageClient, name: str, text: str) -> str:
    uri = (client.root / name).as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


async def still_serving(client: LanguageClient, uri: str) -> None:
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))), 30)
    assert hover is None


@pytest.mark.asyncio(loop_scope="function")
async def test_a_20k_line_file_gets_its_diagnostic(client: LanguageClient):
    kernels = "".join(f"def body_{i}(x_ref, o_ref):\n    o_ref[...] = x_ref[...] * {i}\n\n" for i in range(6_700))
    text = HEADER + kernels + "def last():\n" + BAD_LINE
    assert text.count("\n") > 20_000
    uri = open_text(client, "big.py", text)
    params = await publish(client, uri, 1)
    line = text.count("\n") - 1
    assert [(d.code, d.range.start.line, d.range.start.character) for d in params.diagnostics] == [("PAL001", line, 8)]


@pytest.mark.asyncio(loop_scope="function")
async def test_binary_and_control_characters_get_a_syntax_diagnostic_not_a_crash(client: LanguageClient):
    text = HEADER + "\x00\x01\x02\xff\ufffd\x7f binary \x1b[31m\n" + "def f():\n" + BAD_LINE
    uri = open_text(client, "binary.py", text)
    params = await publish(client, uri, 1)
    assert [d.code for d in params.diagnostics] == ["PAL000", "PAL001"]
    await still_serving(client, uri)


@pytest.mark.asyncio(loop_scope="function")
async def test_unknown_methods_and_commands_get_errors_and_the_server_keeps_serving(client: LanguageClient):
    uri = open_text(client, "k.py", HEADER)
    await publish(client, uri, 1)
    with pytest.raises(JsonRpcException) as unknown_method:
        await asyncio.wait_for(client.protocol.send_request_async("pallas/noSuchMethod", {}), 30)
    assert unknown_method.value.code == types.ErrorCodes.MethodNotFound
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="pallas.noSuchCommand", arguments=[])), 30)
    client.protocol.notify("pallas/noSuchNotification", {})
    await still_serving(client, uri)


@pytest.mark.asyncio(loop_scope="function")
async def test_positions_outside_the_document_and_unopened_documents_answer_nothing(client: LanguageClient):
    uri = open_text(client, "k.py", HEADER + "def f():\n" + BAD_LINE)
    await publish(client, uri, 1)
    document = types.TextDocumentIdentifier(uri=uri)
    for line, character in [(0, 10_000), (10_000, 0), (5, 999)]:
        hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
            text_document=document, position=types.Position(line=line, character=character))), 30)
        assert hover is None or "get_global" in hover.contents.value
    hints = await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=document, range=types.Range(start=types.Position(line=500, character=0),
                                                   end=types.Position(line=900, character=0)))), 30)
    assert list(hints or []) == []
    missing = (client.root / "never_opened_and_not_on_disk.py").as_uri()
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=missing), position=types.Position(line=0, character=0))), 30)
    assert hover is None
    # A change for a document that was never opened is ignored, not fatal.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=missing, version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 1\n")]))
    await still_serving(client, uri)


def test_jedi_failing_inside_still_leaves_what_the_imports_say(tmp_path, monkeypatch, caplog):
    caplog.set_level("DEBUG", logger="pallas_lsp")
    path = tmp_path / "kernel.py"
    path.write_text(HEADER + "def f():\n" + BAD_LINE)

    def broken_goto(self, *args, **kwargs):
        raise RuntimeError("jedi internal failure")

    monkeypatch.setattr(jedi.Script, "goto", broken_goto)
    project = Project(root=str(tmp_path), python=jax_python())
    project.resolver.workspace_imports = None  # every import goes to jedi (these imports need it not)
    findings = analyze(project, str(path))
    assert [(f.code, f.span.line, f.span.column) for f in findings] == [("PAL001", 5, 8)]
    assert "jedi internal failure" in caplog.text
