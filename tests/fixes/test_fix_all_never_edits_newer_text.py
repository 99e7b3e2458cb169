"""Fix-all is computed from the text it read; the user may type before it is sent. An edit stamped
with a newer version than its text is spliced into the wrong place by the editor, so every file's
edit is for the text it was computed from, stamped with that text's version, or not sent at all.

The real server over stdio. The user's keystroke arrives while fix-all is being computed: the test
asks for fix-all, then waits for the answer to a command the server answers on its event loop (so
fix-all has read its text and handed the work to the analysis thread), and only then types."""

import asyncio
import sys

import pytest
import pytest_lsp
from conftest import code_actions_json, jax_python, publish_for
from golden_cases import GOLDEN
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from test_code_actions_lsp import apply

FIX_ALL = "source.fixAll.pallas"
SINGLE = GOLDEN / "operand_call_returned"
CROSS = GOLDEN / "input_cross_module"
TYPED = "# typed while fix-all ran\n"


def _open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def _fix_all_while_typing(client: LanguageClient, uri: str, type_into) -> list[dict]:
    """Ask for fix-all of `uri`, call `type_into()` once the server is computing it, return the actions."""
    asked = asyncio.ensure_future(code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=[FIX_ALL]))))
    # Answered on the event loop after the fix-all request's handler has started (requests are
    # handled in order): fix-all has read the document and waits for the analysis thread.
    await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="pallas.openRuleDocs", arguments=["https://example.invalid/PAL001"])), 60)
    type_into()
    return await asyncio.wait_for(asked, 120)


def _edits_by_uri(action: dict) -> dict[str, tuple[int | None, list[types.TextEdit]]]:
    changes = {}
    for change in action["edit"]["documentChanges"]:
        edits = [types.TextEdit(range=types.Range(
            start=types.Position(**edit["range"]["start"]), end=types.Position(**edit["range"]["end"])),
            new_text=edit["newText"]) for edit in change["edits"]]
        changes[change["textDocument"]["uri"]] = (change["textDocument"]["version"], edits)
    return changes


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def single(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=SINGLE.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_is_for_the_text_of_the_version_it_is_stamped_with(single: LanguageClient):
    uri = (SINGLE / "before.py").as_uri()
    before, after = (SINGLE / "before.py").read_text(), (SINGLE / "after.py").read_text()
    _open(single, uri, before)
    await publish_for(single, uri, 1, 60)
    texts = {1: before}

    def type_a_line():
        texts[2] = TYPED + before
        _change(single, uri, 2, texts[2])

    actions = await _fix_all_while_typing(single, uri, type_a_line)
    assert len(actions) == 1  # computed again for the text the user has now
    for action in actions:  # for the text of the version it names
        ((version, edits),) = _edits_by_uri(action).values()
        assert version in texts
        assert apply(texts[version], edits) == (after if version == 1 else TYPED + after)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def cross(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=(CROSS / "before").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_edit_of_another_open_file_is_for_the_text_it_has(cross: LanguageClient):
    """The fix edits the body's module and the launch's; the user types in the launch's meanwhile."""
    body_uri, launch_uri = (CROSS / "before" / "bodies.py").as_uri(), (CROSS / "before" / "launch.py").as_uri()
    body, launch = (CROSS / "before" / "bodies.py").read_text(), (CROSS / "before" / "launch.py").read_text()
    fixed_body, fixed_launch = (CROSS / "after" / "bodies.py").read_text(), (CROSS / "after" / "launch.py").read_text()
    _open(cross, launch_uri, launch)
    await publish_for(cross, launch_uri, 1, 60)
    _open(cross, body_uri, body)
    await publish_for(cross, body_uri, 1, 60)
    launch_texts = {1: launch}

    def type_in_the_launch():
        launch_texts[2] = TYPED + launch
        _change(cross, launch_uri, 2, launch_texts[2])

    actions = await _fix_all_while_typing(cross, body_uri, type_in_the_launch)
    assert len(actions) == 1
    for action in actions:
        changes = _edits_by_uri(action)
        assert set(changes) == {body_uri, launch_uri}  # both halves of the fix, or none
        body_version, body_edits = changes[body_uri]
        assert body_version == 1 and apply(body, body_edits) == fixed_body
        launch_version, launch_edits = changes[launch_uri]
        assert launch_version in launch_texts
        assert apply(launch_texts[launch_version], launch_edits) == (
            fixed_launch if launch_version == 1 else TYPED + fixed_launch)
