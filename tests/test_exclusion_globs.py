"""Exclusion globs are matched in linear time (issue 19, item 6): `*a*a*a*a*a*a*a*a*a*a*a*a*b` in a
`.gitignore` or `extend-exclude`, with a 60-letter file name, made `check` spin for minutes and the
server deaf (Python's `re` backtracks). The matcher must still mean what the regex-based one meant.

PALLAS_LSP_FUZZ_EXAMPLES_SCALE multiplies the number of random patterns (1: the CI budget)."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import pytest_lsp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import jax_python, publish_for
from pallas_lsp.analysis.exclusions import Exclusions
from pallas_lsp.analysis.globs import GlobSet, glob

SCALE = float(os.environ.get("PALLAS_LSP_FUZZ_EXAMPLES_SCALE", "1"))
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
HOSTILE = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
LONG_NAME = "a" * 60  # not matched (no `b` at the end): the old regex tried every split of it
KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")


def regex_before_issue_19(pattern: str) -> re.Pattern:
    """The translation `exclusions.py` used before (backtracking): the reference for what a pattern
    means on the patterns it could compile."""
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `[[`: a possible nested set to re
        return re.compile(("^" if anchored else "(?:^|.*/)") + "".join(out) + r"\Z", re.S)


# Pattern pieces whole (a class is never cut in two), names over a small alphabet so that matches
# are common; names are kept short so that the old regex answers quickly.
PIECES = st.sampled_from(["a", "b", "c", ".", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "[a-c]", "[]a]",
                          "\\*", "\\a", "[", "]", "!"])
PATTERNS = st.lists(PIECES, min_size=1, max_size=8).map("".join)
NAMES = st.text(alphabet="abc./*[]!", max_size=12)


@settings(FUZZ, max_examples=int(1000 * SCALE))
@given(PATTERNS, NAMES)
def test_the_linear_matcher_agrees_with_the_old_regex(pattern, name):
    # `[!]...`: the old regex closed the class at that `]` (`[^]`, an error, or, spliced with what
    # followed, some other class); a `]` first in a class is now one of its characters, as in git.
    assume("[!]" not in pattern)
    try:
        old = regex_before_issue_19(pattern)
    except re.error:  # `[z-a]`: the old matcher raised (see the test below)
        assume(False)
    assert glob(pattern).matches(name) == (old.match(name) is not None)


@settings(FUZZ, max_examples=int(600 * SCALE))
@given(st.lists(st.sampled_from(["a", "b", "*", "?", "[ab]", "[!a]"]), min_size=1, max_size=8).map("".join),
       st.text(alphabet="abc", max_size=12))
def test_a_slash_free_pattern_on_a_name_means_what_fnmatch_says(pattern, name):
    assert glob(pattern).matches(name) == fnmatch.fnmatchcase(name, pattern)


@settings(FUZZ, max_examples=int(200 * SCALE))
@given(st.lists(PATTERNS, min_size=1, max_size=5), st.lists(NAMES, min_size=1, max_size=5))
def test_a_set_of_patterns_matches_what_each_one_matches(patterns, names):
    """One DFA answers for all the patterns of a `.gitignore`; its tables are shared across paths."""
    together = GlobSet(patterns)
    for name in names:
        assert together.matching(name) == {i for i, p in enumerate(patterns) if glob(p).matches(name)}


def test_a_class_that_cannot_match_matches_nothing_instead_of_crashing_the_walk(tmp_path):
    """`[z-a]` made `re.compile` raise: `check` stopped with an internal error."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("[z-a].py\n[!]x].py\n")
    for name in ("m.py", "x.py", "].py"):
        (tmp_path / name).write_text("import os\n")
    walked = [os.path.basename(p) for p in Exclusions.for_folder(str(tmp_path)).walk(str(tmp_path))]
    assert walked == ["].py", "x.py"]  # `[!]x]`: any one character but `]` and `x` (as in git) leaves out m.py


@pytest.mark.timeout(120)
def test_a_fifo_named_gitignore_is_not_read_and_does_not_hang_check(tmp_path):
    """A FIFO put in place of `.gitignore` or `.git/info/exclude` made the walk wait for a writer."""
    (tmp_path / ".git" / "info").mkdir(parents=True)
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / ".git" / "info" / "exclude")
    (tmp_path / "kernel.py").write_text(KERNEL)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--format", "json", "."],
                         capture_output=True, text=True, cwd=tmp_path, timeout=110)
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("kernel.py", "PAL001")], run.stderr


def hostile_tree(root, *, gitignore: bool, extend_exclude: bool) -> None:
    """A kernel with a 60-letter name that is checked, and a folder the pattern leaves out."""
    (root / ".git").mkdir()
    if gitignore:
        (root / ".gitignore").write_text(HOSTILE + "\n")
    options = f'extend-exclude = ["{HOSTILE}"]\n' if extend_exclude else ""
    (root / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{jax_python()}"\n{options}')
    (root / f"{LONG_NAME}.py").write_text(KERNEL)
    (root / f"{LONG_NAME[:-1]}b").mkdir()
    (root / f"{LONG_NAME[:-1]}b" / f"{LONG_NAME}.py").write_text(KERNEL)  # left out by its folder


@pytest.mark.timeout(120)
@pytest.mark.parametrize("gitignore, extend_exclude", [(True, False), (False, True)],
                         ids=["gitignore", "extend-exclude"])
def test_check_with_a_hostile_pattern_finishes_with_the_right_findings(tmp_path, gitignore, extend_exclude):
    hostile_tree(tmp_path, gitignore=gitignore, extend_exclude=extend_exclude)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "."],
                         capture_output=True, text=True, cwd=tmp_path, timeout=110)
    assert run.returncode == 1, run.stderr
    assert [(f["path"], f["code"], f["line"]) for f in json.loads(run.stdout)] == [(f"{LONG_NAME}.py", "PAL001", 7)]


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"])


@pytest_lsp.fixture(config=SERVER)
async def hostile_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    hostile_tree(root, gitignore=True, extend_exclude=True)
    lsp_client.root = root
    await asyncio.wait_for(lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0})), 60)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.timeout(180)
@pytest.mark.asyncio(loop_scope="function")
async def test_the_server_with_a_hostile_extend_exclude_still_answers(hostile_client: LanguageClient):
    client = hostile_client
    uri = (client.root / f"{LONG_NAME}.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=KERNEL)))
    params = await publish_for(client, uri, 1, 90)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("PAL001", 6)]
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=6, character=16))), 60)
    assert hover is not None and "get_global" in str(hover.contents)
