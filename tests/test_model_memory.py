"""The server keeps parsed modules within a budget, least recently used dropped first; findings never
depend on which ones were dropped (results cached in one module that hold another module are
forgotten with it)."""

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import at, jax_python, publish_for, publish_with_findings
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.analysis.project import MODEL_TEXT_BUDGET
from test_server_bad_input import client, open_text  # noqa: F401 - the server fixture, a workspace folder of its own

HEADER = ("from jax.experimental import pallas as pl\n"
          "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
SEM = "pl.get_global(plgpu.SemaphoreType.REGULAR)"
BODIES = HEADER + f"\ndef body(o_ref):\n    s = {SEM}\n    pl.semaphore_signal(s)\n    pl.semaphore_wait(s)\n"
LAUNCH = HEADER + ("import bodies\n\ndef run(x):\n"
                   "    return plgpu.kernel(bodies.body, out_type=(), interpret=True)(x)\n")
OTHER = HEADER + "\ndef other(o_ref):\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n"
EDITED = "# an edit above the body\n" + BODIES


def found(project, path, text=None):
    """What the server does for a document: analyse it, then drop the models over the budget."""
    findings = analyze(project, str(path), text)
    project.drop_models_over_budget(str(path))
    return [(f.code, f"{f.span.line + 1}:{f.span.column + 1}-{f.span.end_line + 1}:{f.span.end_column + 1}")
            for f in findings]


@pytest.fixture
def package(tmp_path):
    for name, text in {"bodies.py": BODIES, "launch.py": LAUNCH, "other.py": OTHER}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_dropped_models_give_the_same_findings_as_kept_ones(package):
    kept_all = Project(str(package), python=jax_python())
    kept_all.model_text_budget = 10**9
    small = Project(str(package), python=jax_python())
    small.model_text_budget = len(LAUNCH)  # room for launch.py besides the module analysed
    steps = [("bodies.py", None, ["bodies.py", "launch.py"]),  # bodies' analysis reads its importer
             ("other.py", None, ["launch.py", "other.py"]),  # bodies.py dropped; launch.py's results held it
             ("bodies.py", None, ["launch.py", "bodies.py"]),
             ("bodies.py", EDITED, ["launch.py", "bodies.py"]),
             ("other.py", None, ["launch.py", "other.py"]),
             # its kernel's model (PAL018/PAL019/PAL024 read the scratch of the kernels a module launches) reads
             # the body's module
             ("launch.py", None, ["bodies.py", "launch.py"]),
             ("bodies.py", EDITED, ["launch.py", "bodies.py"])]
    for name, text, models in steps:
        for project in (kept_all, small):
            project.set_text(str(package / name), text)
        assert found(small, package / name, text) == found(kept_all, package / name, text), (name, text)
        assert sorted(path.rsplit("/", 1)[-1] for path in small._models) == sorted(models)
    assert found(small, package / "bodies.py", EDITED) == [("PAL002", at(EDITED, SEM))]
    assert len(kept_all._models) == 3


# ---- the server: a document over the budget pushes the others out; findings stay the same ----------

# Over the budget in comments alone: cheap to parse, and every other model is dropped after it.
BIG = HEADER + "# padding\n" * (MODEL_TEXT_BUDGET // 10 + 1) + "\ndef big(o_ref):\n    o_ref[...] = 1\n"


def _close(client, uri):
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


def _ranges(params):
    return [(d.code, f"{d.range.start.line + 1}:{d.range.start.character + 1}-{d.range.end.line + 1}:"
                     f"{d.range.end.character + 1}") for d in params.diagnostics]


@pytest.mark.asyncio(loop_scope="function")
async def test_server_findings_after_other_files_pushed_the_importer_out(client: LanguageClient):
    for name, text in {"bodies.py": BODIES, "launch.py": LAUNCH, "big.py": BIG}.items():
        (client.root / name).write_text(text)
    bodies = open_text(client, "bodies.py", BODIES)
    # PAL002 needs launch.py's kernels: not in a first pass's publish
    assert _ranges(await publish_with_findings(client, bodies, 1, timeout=60)) == [("PAL002", at(BODIES, SEM))]
    launch = open_text(client, "launch.py", LAUNCH)
    assert _ranges(await publish_for(client, launch, 1, timeout=60)) == []
    _close(client, launch)
    await publish_for(client, launch, None, timeout=60)
    big = open_text(client, "big.py", BIG)  # its analysis drops the models of bodies.py and launch.py
    assert _ranges(await publish_for(client, big, 1, timeout=60)) == []
    _close(client, big)
    await publish_for(client, big, None, timeout=60)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=bodies, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=EDITED)]))
    assert _ranges(await publish_for(client, bodies, 2, timeout=60)) == [("PAL002", at(EDITED, SEM))]
    launch = open_text(client, "launch.py", LAUNCH)
    assert _ranges(await publish_for(client, launch, 1, timeout=60)) == []


# ---- a document over check's 5 MB limit: not analysed (its tree would be ~40x its size), said once ---

@pytest.mark.asyncio(loop_scope="function")
async def test_a_document_over_the_size_limit_is_not_analysed_and_the_user_is_told_once(client: LanguageClient):
    from pallas_lsp.source_text import MAX_FILE_BYTES

    huge = OTHER + "x = 1\n" * (MAX_FILE_BYTES // 6)
    size = len(huge)
    uri = open_text(client, "huge.py", huge)
    assert _ranges(await publish_for(client, uri, 1, timeout=60)) == []
    for version in (2, 3):  # an edit that keeps it over the limit: nothing new is said
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                text="#\n")]))
        assert _ranges(await publish_for(client, uri, version, timeout=60)) == []
        size += 2
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Warning, (
        f"pallas-lsp: huge.py: not analysed: {size - 4:,} bytes, over the 5 MB limit for analysed files"))]
    client.text_document_did_change(types.DidChangeTextDocumentParams(  # back under it: analysed again
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=4),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=OTHER)]))
    assert [code for code, _ in _ranges(await publish_for(client, uri, 4, timeout=60))] == ["PAL001"]


def test_a_big_text_has_the_names_of_its_code_interned_before_it_is_parsed():
    """Python 3.12 never frees an interned string, and the parser interns each identifier amid the
    tree's objects (which then cannot go back once freed): a big text's code names are interned
    first, packed together; the words of its strings and comments are not (they would stay)."""
    import sys

    from pallas_lsp.analysis.source import BIG_TEXT, intern_names_first

    tag = str(id(object()))  # names no other test made
    code, comment, string = (f"{kind}_{tag}" for kind in ("code_name", "comment_word", "string_word"))
    filler = "".join(f"value_{i % 97} = {i}\n" for i in range(BIG_TEXT // 12))
    intern_names_first(f"{filler}{code} = 1  # {comment}\nx = '{string}'\n")
    fresh = [name[:3] + name[3:] for name in (code, comment, string)]  # equal strings, new objects
    assert [sys.intern(name) is not name for name in fresh] == [True, False, False]
