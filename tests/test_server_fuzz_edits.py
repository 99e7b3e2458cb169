"""Random edit sequences of real kernel files through incremental didChange.

The server must never crash, must keep answering requests, and its last publish must equal a fresh
analysis of the final text (no stale diagnostics survive a burst of edits).
"""

import asyncio
import random
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import FIXTURES, REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.lsp.convert import to_diagnostic

KERNELS = sorted([*(REPO / "examples" / "kernels").glob("*.py"), *(FIXTURES / "agreement").glob("bad_*.py")])
SNIPPETS = ["pl.get_global(", "plgpu.SemaphoreType.BARRIER)", "plgpu.SMEM((8,), jnp.float32)", "\n", "def ",
            "(", ")", ":", "    ", "interpret=True, ", "é", "𝔘 ", "\"\"\"", "#", "lambda: ", "\t", "\x00"]
SEEDS = range(6)
EDITS_PER_SEED = 25


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=(FIXTURES / "agreement").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 5}))
    yield
    await lsp_client.shutdown_session()


def position(text: str, offset: int) -> types.Position:
    """LSP position (UTF-16 columns) of a code-point offset."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=sum(2 if ord(c) > 0xFFFF else 1 for c in text[start:offset]))


def random_edit(rng: random.Random, text: str, donor: str) -> tuple[int, int, str]:
    """(start, end, replacement) as code-point offsets: truncation, insertion, deletion or transplant."""
    kind = rng.choice(["truncate", "insert", "insert", "delete", "transplant", "replace_line"])
    size = len(text)
    if kind == "truncate":
        cut = rng.randint(0, size)
        return cut, size, ""
    if kind == "insert":
        at = rng.randint(0, size)
        return at, at, rng.choice(SNIPPETS)
    if kind == "delete":
        start = rng.randint(0, size)
        return start, min(size, start + rng.randint(1, 40)), ""
    if kind == "transplant":  # a piece of another real kernel file
        at = rng.randint(0, size)
        start = rng.randint(0, max(0, len(donor) - 1))
        return at, at, donor[start:start + rng.randint(1, 300)]
    lines = text.splitlines(keepends=True)
    if not lines:
        return 0, 0, donor[:200]
    index = rng.randrange(len(lines))
    start = sum(len(line) for line in lines[:index])
    return start, start + len(lines[index]), rng.choice(donor.splitlines(keepends=True) or ["\n"])


def expected(path, text):
    project = Project(root=str(FIXTURES / "agreement"), python=jax_python())
    project.set_text(str(path), text)
    lines = text.splitlines()
    return [to_diagnostic(f, lines) for f in analyze(project, str(path), text)]


def summary(diagnostics):
    return [(d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.message)
            for d in diagnostics]


def record_publishes(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Every publishDiagnostics the client receives, in order (waiting for "the next one" can miss some)."""
    seen: list[types.PublishDiagnosticsParams] = []
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def handler(params):
        seen.append(params)
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = handler
    return seen


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.parametrize("seed", SEEDS)
async def test_random_edits_end_with_a_publish_equal_to_a_fresh_analysis(client: LanguageClient, seed):
    rng = random.Random(seed)
    path = KERNELS[seed % len(KERNELS)]
    donor = KERNELS[(seed * 7 + 3) % len(KERNELS)].read_text()
    uri = path.with_name(f"fuzz_{seed}.py").as_uri()
    text = path.read_text()
    publishes = record_publishes(client)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    version = 1
    for _ in range(EDITS_PER_SEED):
        start, end, new = random_edit(rng, text, donor)
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=position(text, start), end=position(text, end)), text=new)]))
        text = text[:start] + new + text[end:]
        if rng.random() < 0.3:
            await asyncio.sleep(rng.choice([0, 0.002, 0.02]))  # let some analyses start, then supersede them
        if rng.random() < 0.2:  # requests in the middle of the burst are answered, not dropped
            await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=position(text, rng.randint(0, len(text))))), 30)

    async def final_publish():
        while not any(p.uri == uri and p.version == version for p in publishes):
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(final_publish(), 60)
    except TimeoutError:
        pytest.fail(f"no publish for version {version}; saw {[p.version for p in publishes if p.uri == uri]}")
    published_versions = [p.version for p in publishes if p.uri == uri]
    params = [p for p in publishes if p.uri == uri][-1]
    assert params.version == version, "the last publish is not for the final text"
    assert published_versions == sorted(published_versions), "a publish went back to an older version"
    assert summary(params.diagnostics) == summary(expected(path.with_name(f"fuzz_{seed}.py"), text)), text
    # Still serving after the burst.
    hints = await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10_000, character=0)))), 30)
    assert hints is None or isinstance(hints, (list, tuple))
