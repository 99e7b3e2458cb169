"""The docs name only settings and commands the extension has: a stale name sends a new user
looking for something VS Code does not show (issue 22: `pallasLsp.*`, "Pallas: Trace Kernel")."""

import json
import re
import subprocess

import pytest

from conftest import REPO
from pallas_lsp.lsp.code_actions import OPEN_RULE_DOCS_COMMAND
from pallas_lsp.lsp.fix_all import FIX_ALL_COMMAND
from pallas_lsp.lsp.trace_command import TRACE_COMMAND

MANIFEST = json.loads((REPO / "client-vscode" / "package.json").read_text())
PROPERTIES = MANIFEST["contributes"]["configuration"]["properties"]
LIVE_SETTINGS = [key for key, spec in PROPERTIES.items() if "markdownDeprecationMessage" not in spec]
OLD_SETTINGS = [key for key, spec in PROPERTIES.items() if "markdownDeprecationMessage" in spec]
COMMANDS = MANIFEST["contributes"]["commands"]
# Commands the server answers (`workspace/executeCommand`), which other editors' docs name.
SERVER_COMMANDS = {TRACE_COMMAND, OPEN_RULE_DOCS_COMMAND, FIX_ALL_COMMAND}

DOCS = [REPO / path for path in subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True,
                                                text=True, check=True).stdout.split()
        if not path.startswith("tests/")]
NAME = re.compile(r"`(pallas(?:Lsp)?\.[A-Za-z][A-Za-z.]*?)(\.\*)?`")
TITLE = re.compile(r"`(Pallas|pallas-lsp): ([A-Z][a-z]+(?: [A-Z][a-z]+)*)`")


def _paragraphs():
    for doc in DOCS:
        for paragraph in re.split(r"\n\s*\n", doc.read_text()):
            yield doc.relative_to(REPO).as_posix(), paragraph


def _matches(name: str, wildcard: bool, known) -> bool:
    return any(key.startswith(name + ".") for key in known) if wildcard else name in known


def test_every_pallas_name_in_the_docs_is_a_setting_or_command_of_the_extension_or_server():
    known = set(LIVE_SETTINGS) | {c["command"] for c in COMMANDS} | SERVER_COMMANDS
    stale = sorted({(doc, name + wildcard) for doc, paragraph in _paragraphs()
                    for name, wildcard in NAME.findall(paragraph)
                    if name.startswith("pallas.") and not _matches(name, bool(wildcard), known)})
    assert stale == []


def test_old_pallasLsp_names_appear_only_where_the_docs_say_they_were_renamed():
    misplaced = sorted({(doc, name + wildcard) for doc, paragraph in _paragraphs()
                        for name, wildcard in NAME.findall(paragraph)
                        if name.startswith("pallasLsp.")
                        and not (("first releases" in paragraph or f"old `{name}`" in paragraph) and _matches(name, bool(wildcard), OLD_SETTINGS))})
    assert misplaced == []


def test_every_command_title_in_the_docs_is_one_the_command_palette_shows():
    shown = {f"{c['category']}: {c['title']}" for c in COMMANDS}
    titles = sorted({(doc, f"{category}: {title}") for doc, paragraph in _paragraphs()
                     for category, title in TITLE.findall(paragraph)})
    assert titles and [(doc, title) for doc, title in titles if title not in shown] == []


def test_the_vscode_settings_table_lists_every_setting_with_its_default():
    table = re.findall(r"^\| `(pallas\.[A-Za-z.]+)` \| `([^`]*)` \|", (REPO / "docs" / "vscode.md").read_text(), re.M)
    assert [key for key, _ in table] == LIVE_SETTINGS
    for key, default in table:
        value = PROPERTIES[key]["default"]
        assert default == (value if isinstance(value, str) and key != "pallas.interpreter" and value
                           else json.dumps(value)), key


@pytest.mark.parametrize("what", ["Settings", "Commands"])
def test_the_extension_readme_lists_every_setting_and_command(what):
    readme = (REPO / "client-vscode" / "README.md").read_text()
    listed = re.search(rf"{what}:\s((?:`[^`]+`(?:,\s)?)+)", readme).group(1)
    names = re.findall(r"`([^`]+)`", listed)
    assert names == (LIVE_SETTINGS if what == "Settings" else [f"{c['category']}: {c['title']}" for c in COMMANDS])
