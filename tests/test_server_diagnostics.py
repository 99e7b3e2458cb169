"""The language server over stdio (pytest-lsp): live diagnostics for unsaved buffers."""

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import REPO, jax_python, publish_for

BAD = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
       "def body():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n")
GOOD = BAD.replace("BARRIER", "REGULAR")
URI = (REPO / "tests" / "fixtures" / "lsp_kernel.py").as_uri()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, uri: str, version: int | None, timeout: float = 30.0):
    """Wait until the server publishes diagnostics for this uri and version."""
    return await publish_for(client, uri, version, timeout)


def open_doc(client, text, version=1):
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=version, text=text)))


def change(client, text, version):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.asyncio(loop_scope="function")
async def test_diagnostic_appears_then_disappears_after_the_fix_and_close_clears(client: LanguageClient):
    open_doc(client, BAD)
    params = await published(client, URI, 1)
    (diagnostic,) = params.diagnostics
    assert (diagnostic.code, diagnostic.source, diagnostic.severity) == ("PAL001", "pallas-lsp", types.DiagnosticSeverity.Error)
    assert (diagnostic.range.start.line, diagnostic.range.start.character,
            diagnostic.range.end.line, diagnostic.range.end.character) == (4, 8, 4, 50)
    assert diagnostic.message.startswith('JAX: "get_global only supports semaphores, got Ref<gmem>{barrier_semaphore[]}"')
    assert diagnostic.code_description.href.endswith("docs/rules/PAL001-get-global-not-semaphore.md")

    change(client, GOOD, 2)
    assert list((await published(client, URI, 2)).diagnostics) == []

    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    assert list((await published(client, URI, None)).diagnostics) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_rapid_edits_publish_only_the_newest_version(client: LanguageClient):
    open_doc(client, GOOD)
    for version in range(2, 12):
        change(client, BAD if version % 2 else GOOD, version)
    versions = []

    async def until_newest():
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == URI:
                versions.append(params.version)
                if params.version == 11:
                    return params

    params = await asyncio.wait_for(until_newest(), 30)
    assert [d.code for d in params.diagnostics] == ["PAL001"]
    assert versions == sorted(versions) and len(versions) == len(set(versions))
    assert versions[-1] == 11


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_on_get_global_shows_what_was_inferred(client: LanguageClient):
    open_doc(client, BAD)
    await published(client, URI, 1)
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=4, character=12)))
    assert result.contents.value == (
        "**pl.get_global** of `plgpu.SemaphoreType.BARRIER`\n\n"
        "Inferred: `Ref<gmem>{barrier_semaphore[]}`: not a Mosaic GPU REGULAR semaphore: JAX rejects it (PAL001)\n\n"
        "This call is reported: PAL001 get-global-not-semaphore (error).")
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=0, character=0)))
    assert nothing is None
    beyond = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=400, character=3)))
    assert beyond is None
