"""Inlay hints and a kernel parameter's hover are answered from the last analysis while another runs
(server/pallas_lsp/lsp/known_answers.py), and the client is asked for hints again once it is done.

The server is the real one, its analysis of a text holding `HOLD` held (inside the analysis, by a gate
of files in the workspace) until the test lets it go: the answers must come while it is held."""

import asyncio
import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import jax_python, publish_for

HOLD = "# held by the test's gate"
# The real server; `Session._findings` (run inside the analysis: `Session.first_findings`) waits, for a
# text holding HOLD, until the test writes `gate/release` beside the file, after writing `gate/started`.
GATED_SERVER = f"""
import os, sys, time
from pallas_lsp.lsp import session

analyse = session.Session._findings

def held(self, folder, path, text, *args, **kwargs):
    if {HOLD!r} in text:
        gate = os.path.join(os.path.dirname(path), "gate")
        open(os.path.join(gate, "started"), "w").close()
        while not os.path.exists(os.path.join(gate, "release")):
            time.sleep(0.01)
    return analyse(self, folder, path, text, *args, **kwargs)

session.Session._findings = held
from pallas_lsp.cli import main
sys.exit(main(["serve"]))
"""

KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, buf):
    o_ref[...] = x_ref[...] + buf[...]


run = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)])
"""
BUF_LINE = 8  # `def body(x_ref, o_ref, buf):`, 0-based


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-c", GATED_SERVER]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def _until(condition, timeout=60.0):
    """Wait for a state (polled), a deadline only against a hang."""
    async def wait():
        while not condition():
            await asyncio.sleep(0.02)
    await asyncio.wait_for(wait(), timeout)


@pytest.mark.asyncio(loop_scope="function")
async def test_hints_and_a_parameter_hover_come_from_the_last_analysis_while_one_runs(client: LanguageClient, tmp_path):
    (tmp_path / "gate").mkdir()
    refreshes = []
    client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)(lambda ls, params: refreshes.append(params))
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True))),
        root_uri=tmp_path.as_uri(), initialization_options={"python": jax_python(), "debounceMs": 0}))
    (tmp_path / "kern.py").write_text(KERNEL)
    uri = (tmp_path / "kern.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=KERNEL)))
    await publish_for(client, uri, 1)

    async def hints(lines: int):
        found = await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=lines, character=0)))), 60)
        return [(h.position.line, h.position.character, h.label) for h in found or []]

    before = await hints(len(KERNEL.splitlines()))
    buf = [h for h in before if h[0] == BUF_LINE and "smem" in h[2]]
    assert buf, before  # the scratch buffer's type, from the analysis

    edited = HOLD + "\n" + KERNEL  # one line more above everything: the hints move down a line
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
    try:
        await _until(lambda: os.path.exists(tmp_path / "gate" / "started"))  # the analysis of version 2 is held
        during = await hints(len(edited.splitlines()))
        assert during == [(line + 1, character, label) for line, character, label in before]
        hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=BUF_LINE + 1, character=edited.splitlines()[BUF_LINE + 1].index("buf") + 1))), 60)
        assert hover is not None and f"buf{buf[0][2]}" in hover.contents.value and "last analysis" in hover.contents.value
        assert not refreshes  # all while the analysis is held
    finally:
        (tmp_path / "gate" / "release").write_text("")
    await _until(lambda: refreshes)  # asked to ask again once the analysis is done
    await publish_for(client, uri, 2)
    assert await hints(len(edited.splitlines())) == during  # the analysis's own: a comment changed no type
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=BUF_LINE + 1, character=edited.splitlines()[BUF_LINE + 1].index("buf") + 1))), 60)
    assert hover is not None and "last analysis" not in hover.contents.value  # computed again
