"""Quick fixes over LSP (pytest-lsp, the real server over stdio): ask for code actions on a
diagnostic, apply the returned edit to the document, and the diagnostic is gone."""

import sys

import pytest
import pytest_lsp
from conftest import REPO, code_actions_json, jax_python, publish_for, publish_with_findings
from golden_cases import GOLDEN
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

BEFORE = (GOLDEN / "operand_call_returned" / "before.py").read_text()
AFTER = (GOLDEN / "operand_call_returned" / "after.py").read_text()
URI = (REPO / "tests" / "fixtures" / "lsp_fix_kernel.py").as_uri()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, version: int, timeout: float = 60.0):
    return await publish_for(client, URI, version, timeout)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a TextDocumentEdit (the text is ASCII: UTF-16 columns are offsets)."""
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character if position.line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def open_document(client: LanguageClient, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="python", version=1, text=text)))


@pytest.mark.asyncio(loop_scope="function")
async def test_quick_fix_edit_removes_the_diagnostic(client: LanguageClient):
    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    assert diagnostic.code == "PAL001"
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))
    assert [(a["title"], a["kind"], a.get("isPreferred")) for a in await code_actions_json(client, params)] == [
        ("pallas-lsp (PAL001): Pass lut as a kernel operand", "quickfix", True),
        ("pallas-lsp (PAL001): Disable PAL001 for this line", "quickfix", None),
        ("Show documentation for PAL001", "quickfix", None),
        ("Fix all pallas-lsp problems", "quickfix", None)]
    actions = await client.text_document_code_action_async(params)
    (change,) = actions[0].edit.document_changes
    assert (change.text_document.uri, change.text_document.version) == (URI, 1)
    fixed = apply(BEFORE, change.edits)
    assert fixed == AFTER
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    assert list((await published(client, 2)).diagnostics) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_noqa_quick_fix_and_fix_all(client: LanguageClient):
    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    noqa = apply(BEFORE, actions[1].edit.document_changes[0].edits)
    assert "  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))  # noqa: PAL001\n" in noqa
    (fix_all,) = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.pallas"])))
    assert (fix_all.kind, fix_all.title) == ("source.fixAll.pallas", "Fix all pallas-lsp problems")  # one title
    assert apply(BEFORE, fix_all.edit.document_changes[0].edits) == AFTER


CROSS = GOLDEN / "input_cross_module"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def cross_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=(CROSS / "before").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_spanning_two_files_versions_the_open_one_only(cross_client: LanguageClient):
    """The body is open in the editor, its launch is not: the launch's change has version null."""
    body_uri, launch_uri = (CROSS / "before" / "bodies.py").as_uri(), (CROSS / "before" / "launch.py").as_uri()
    text = (CROSS / "before" / "bodies.py").read_text()
    cross_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=body_uri, language_id="python", version=7, text=text)))

    # PAL001 needs launch.py's kernels: not in a first pass's publish
    (diagnostic,) = (await publish_with_findings(cross_client, body_uri, 7, 60)).diagnostics
    actions = await cross_client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=body_uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    fix = actions[0]
    assert fix.title == "pallas-lsp (PAL001): Pass residual as a kernel input (in_specs)"
    changes = {c.text_document.uri: c for c in fix.edit.document_changes}
    assert {uri: c.text_document.version for uri, c in changes.items()} == {body_uri: 7, launch_uri: None}
    assert apply(text, changes[body_uri].edits) == (CROSS / "after" / "bodies.py").read_text()
    launch = (CROSS / "before" / "launch.py").read_text()
    assert apply(launch, changes[launch_uri].edits) == (CROSS / "after" / "launch.py").read_text()


@pytest.mark.asyncio(loop_scope="function")
async def test_no_quick_fix_from_a_diagnostic_of_older_text(client: LanguageClient):
    """Edits computed for text the editor no longer has would land in the wrong place."""
    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="# a new first line\n" + BEFORE)]))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    assert actions is None  # neither its fixes nor fix-all nor its documentation: all of an older text
    (fresh,) = (await published(client, 2)).diagnostics
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=fresh.range,
        context=types.CodeActionContext(diagnostics=[fresh])))
    assert actions[0].title == "pallas-lsp (PAL001): Pass lut as a kernel operand"


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_from_the_quick_fix_menu_applies_the_fix_all_edit(client: LanguageClient):
    edits = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    fix_all = next(a for a in actions if a["title"] == "Fix all pallas-lsp problems")
    assert "edit" not in fix_all and fix_all["command"]["command"] == "pallas.fixAll"
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=fix_all["command"]["command"], arguments=fix_all["command"]["arguments"]))
    (applied,) = edits
    assert applied.label == "Fix all pallas-lsp problems"
    (change,) = applied.edit.document_changes
    assert (change.text_document.uri, change.text_document.version) == (URI, 1)
    assert apply(BEFORE, change.edits) == AFTER


@pytest.mark.asyncio(loop_scope="function")
async def test_show_documentation_action_links_the_packaged_rule_page(client: LanguageClient):
    from pallas_lsp.rules import RULES_BY_CODE, doc_path

    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    docs = next(a for a in actions if a["title"] == "Show documentation for PAL001")
    page = doc_path(RULES_BY_CODE["PAL001"])
    assert docs["command"]["command"] == "pallas.openRuleDocs"
    assert docs["command"]["arguments"] == [page.as_uri()] == [diagnostic.code_description.href]
    assert page.read_text().startswith("# PAL001")
    # A client without window/showDocument gets the link in a message.
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=docs["command"]["command"], arguments=docs["command"]["arguments"]))
    assert client.messages[-1].message == f"pallas-lsp: {page.as_uri()}"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def resolving_client(lsp_client: LanguageClient):
    """A client like VS Code: resolves a code action's edit, opens documents the server shows."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(code_action=types.CodeActionClientCapabilities(
                data_support=True, resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]))),
            window=types.WindowClientCapabilities(show_document=types.ShowDocumentClientCapabilities(support=True))),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_diagnostics_carry_no_fixes_and_the_picked_action_is_resolved(resolving_client: LanguageClient):
    """Fixes cost nothing until asked for: the diagnostic names its text only; the actions come
    without edits, and `codeAction/resolve` gives the edit of the one picked."""
    client = resolving_client
    open_document(client, BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    assert list(diagnostic.data) == ["textHash"]
    actions = [a for a in await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))) if isinstance(a, types.CodeAction)]
    assert [(a.title, a.edit) for a in actions] == [
        ("pallas-lsp (PAL001): Pass lut as a kernel operand", None),
        ("pallas-lsp (PAL001): Disable PAL001 for this line", None)]
    resolved = await client.code_action_resolve_async(actions[0])
    assert apply(BEFORE, resolved.edit.document_changes[0].edits) == AFTER


@pytest.mark.asyncio(loop_scope="function")
async def test_the_picked_action_is_resolved_in_a_file_with_a_form_feed(resolving_client: LanguageClient):
    """Resolve compared the text with `str.splitlines`, which also splits at a form feed, while the
    actions carry the hash of LSP's lines: in such a file the picked fix came back without an edit."""
    client = resolving_client
    header = "# part one\x0cpart two\n"
    open_document(client, header + BEFORE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = [a for a in await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))) if isinstance(a, types.CodeAction)]
    resolved = await client.code_action_resolve_async(actions[0])
    assert resolved.edit is not None
    assert apply(header + BEFORE, resolved.edit.document_changes[0].edits) == header + AFTER


UNFIXABLE = (REPO / "tests" / "fixes" / "no_fix" / "shape_from_argument.py").read_text()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_finding_without_a_fix_offers_its_rule_page(resolving_client: LanguageClient):
    """No rewrite is known (the shape is a parameter): only noqa and the rule's page; no "Fix all",
    which would do nothing; no disabled action for a client that would not grey it out."""
    client = resolving_client
    open_document(client, UNFIXABLE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    href = diagnostic.code_description.href
    assert [(a["title"], a.get("command", {}).get("arguments")) for a in actions] == [
        ("pallas-lsp (PAL001): Disable PAL001 for this line", None),
        ("Show documentation for PAL001", [href])]
    assert await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.pallas"]))) is None
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="pallas.openRuleDocs", arguments=[href]))
    assert [(d.uri, d.external) for d in client.shown_documents] == [(href, not href.startswith("file:"))]


@pytest.mark.asyncio(loop_scope="function")
async def test_two_fixes_of_one_finding_are_two_actions_and_either_removes_it(client: LanguageClient):
    """PAL004: a one-block grid (preferred) and one semaphore array are both offered; each edit,
    applied, leaves no diagnostic."""
    before = (REPO / "tests" / "fixes" / "corpus" / "two_semaphores_no_grid.py").read_text()
    open_document(client, before)
    (diagnostic,) = (await published(client, 1)).diagnostics
    assert diagnostic.code == "PAL004"
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))
    assert [(a["title"], a.get("isPreferred")) for a in await code_actions_json(client, params)][:2] == [
        ("pallas-lsp (PAL004): Launch the kernel on a one-block grid (grid=(1,))", True),
        ("pallas-lsp (PAL004): Use one semaphore array, plgpu.SemaphoreType.REGULAR((2,)), indexed with .at[i]",
         None)]
    actions = await client.text_document_code_action_async(params)
    for version, (action, golden) in enumerate(zip(actions[:2], ("grid_one_block_two_semaphores",
                                                                  "array_two_semaphores")), start=2):
        (change,) = action.edit.document_changes
        fixed = apply(before, change.edits)
        assert fixed == (GOLDEN / golden / "after.py").read_text()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        assert list((await published(client, version)).diagnostics) == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def disabled_client(lsp_client: LanguageClient):
    """A client like VS Code that shows a code action's `disabled.reason` (LSP 3.16 disabledSupport)."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(disabled_support=True))),
        root_uri=(REPO / "tests" / "fixtures").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_finding_without_a_fix_shows_a_disabled_action_that_says_why(disabled_client: LanguageClient):
    client = disabled_client
    open_document(client, UNFIXABLE)
    (diagnostic,) = (await published(client, 1)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    assert [(a["title"], a.get("disabled")) for a in actions] == [
        ("pallas-lsp (PAL001): No automatic fix",
         {"reason": "the array's type depends on n, which the launch cannot write, and spelled from the value it "
                    "has here it would hold for one configuration only"}),
        ("pallas-lsp (PAL001): Disable PAL001 for this line", None),
        ("Show documentation for PAL001", None)]
    # A fixable finding gets no disabled action.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=BEFORE)]))
    (diagnostic,) = (await published(client, 2)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    assert [a["title"] for a in actions if "disabled" in a] == []
