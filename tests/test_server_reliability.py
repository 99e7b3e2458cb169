"""The server answers right and always answers: `initialize` with an interpreter that never exits,
a repository's own `python` choice (never run without the editor's say-so), incremental edits
after form feeds / U+2028 / NEL (pygls would splice them onto the wrong line), 500-term
expressions, and the noqa quick fix on the finding's own line."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import publish_for
from test_server_bad_input import client  # noqa: F401 - the fixture: a server on a temporary folder

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp
    # odd separators in a comment: \x0c \x0b \x85 \u2028 \u2029
    s = "and in a string: \x0c \x0b \x85 \u2028 \u2029"


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")
NEVER_EXITS = "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN\"\nexec sleep 1000\n"
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"],
                            server_env={**os.environ, "PALLAS_LSP_PROBE_TIMEOUT": "3"})


def open_text(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def never_exiting(folder) -> str:
    program = folder / "tool.sh"
    program.write_text(NEVER_EXITS)
    program.chmod(0o755)
    return str(program)


@pytest_lsp.fixture(config=SERVER)
async def hanging_python_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root
    result = await asyncio.wait_for(lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"python": never_exiting(root), "debounceMs": 0})), 120)
    assert result.capabilities is not None  # initialize answered
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_initialize_answers_when_the_interpreter_never_exits(hanging_python_client: LanguageClient):
    client = hanging_python_client
    uri = (client.root / "k.py").as_uri()
    open_text(client, uri, KERNEL)
    params = await publish_for(client, uri, 1, 60)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("PAL001", 8)]
    for _ in range(600):  # the environment is probed on its own thread: its verdict arrives on its own
        if client.messages:
            break
        await asyncio.sleep(0.1)
    assert [m.message for m in client.messages] == [
        f"pallas-lsp: cannot use Python environment {client.root / 'tool.sh'}: {client.root / 'tool.sh'} did not "
        "answer within 3 s (is it a Python interpreter?); stopped it. Names are resolved from import statements "
        "only until it is fixed."]


@pytest_lsp.fixture(config=SERVER)
async def repo_python_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    never_exiting(root)
    (root / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = "tool.sh"\n')
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), initialization_options={"debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_repository_chosen_program_is_not_run_when_the_editor_names_no_python(repo_python_client):
    client = repo_python_client
    uri = (client.root / "k.py").as_uri()
    open_text(client, uri, KERNEL)
    await publish_for(client, uri, 1, 60)
    assert not (client.root / "RAN").exists()
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Warning, (
        f"pallas-lsp: {client.root / 'pyproject.toml'}: [tool.pallas-lsp] python = 'tool.sh' is not used: it is not "
        "in a virtual environment inside the project. A repository may only choose a Python of its own virtual "
        "environment; pass it with --python (or the editor's `python` setting) to use it anyway"))]


@pytest.mark.asyncio(loop_scope="function")
async def test_incremental_edits_after_odd_separators_land_on_the_right_line(client: LanguageClient):
    uri = (client.root / "k.py").as_uri()
    open_text(client, uri, KERNEL)
    (diagnostic,) = (await publish_for(client, uri, 1, 60)).diagnostics
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (8, 10)
    line = KERNEL.split("\n")[8]
    column = line.index("128")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=8, character=column),
                              end=types.Position(line=8, character=column + 3)), text="256")]))
    (diagnostic,) = (await publish_for(client, uri, 2, 60)).diagnostics
    assert (diagnostic.code, diagnostic.range.start.line) == ("PAL001", 8)
    assert "float32[256]" in diagnostic.message
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=8, character=16))), 60)
    assert hover is not None and "get_global" in hover.contents.value


@pytest.mark.asyncio(loop_scope="function")
async def test_the_noqa_quick_fix_lands_on_the_finding_line(client: LanguageClient):
    uri = (client.root / "k.py").as_uri()
    open_text(client, uri, KERNEL)
    (diagnostic,) = (await publish_for(client, uri, 1, 60)).diagnostics
    actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))), 60)
    (noqa,) = [a for a in actions if "Disable PAL001" in a.title]
    (change,) = noqa.edit.document_changes
    (edit,) = change.edits
    line = KERNEL.split("\n")[8]
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (8, len(line), "  # noqa: PAL001")


@pytest.mark.asyncio(loop_scope="function")
async def test_a_500_term_expression_keeps_the_files_diagnostics(client: LanguageClient):
    uri = (client.root / "deep.py").as_uri()
    text = KERNEL + "\n\nx = " + " + ".join(["a"] * 500) + "\ns = " + " + ".join(['"x"'] * 500) + "\n"
    open_text(client, uri, text)
    params = await publish_for(client, uri, 1, 60)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("PAL001", 8)]


@pytest_lsp.fixture(config=SERVER)
async def typo_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"select": ["NOPE"], "debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_select_typo_is_shown_and_does_not_turn_checking_off(typo_client: LanguageClient):
    client = typo_client
    (message,) = [m.message for m in client.messages if "NOPE" in m.message]
    assert message.startswith("pallas-lsp: setting pallas.select: unknown rule code NOPE (known: PAL000, PAL001")
    assert message.endswith("; the setting is ignored until it is fixed")
    uri = (client.root / "k.py").as_uri()
    open_text(client, uri, KERNEL)
    params = await publish_for(client, uri, 1, 60)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("PAL001", 8)]
