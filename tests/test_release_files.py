"""What a release carries agrees with itself: the license the package declares is the text at the
root; CHANGELOG.md keeps the Keep a Changelog form, its newest release is the version of the
package, the server and the VS Code extension; and the docs pin that release's tag, which exists."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import REPO
from pallas_lsp import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
CHANGELOG = (REPO / "CHANGELOG.md").read_text()


def test_the_license_file_is_the_apache_2_license_the_package_declares():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert text.split()[:5] == ["Apache", "License", "Version", "2.0,", "January"]
    for section in ("1. Definitions.", "2. Grant of Copyright License.", "3. Grant of Patent License.",
                    "4. Redistribution.", "9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS"):
        assert section in text
    assert len(text.split()) > 1500  # the full text, not a notice


def test_the_changelog_keeps_a_changelog():
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", CHANGELOG, re.M)
    assert headings[0] == ("Unreleased", "")
    releases = headings[1:]
    assert releases and all(re.fullmatch(r"\d+\.\d+\.\d+", v) and date for v, date in releases)
    assert [tuple(map(int, v.split("."))) for v, _ in releases] == sorted(
        (tuple(map(int, v.split("."))) for v, _ in releases), reverse=True)  # newest first
    for section in re.findall(r"^### (.+)$", CHANGELOG, re.M):
        assert section in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
    for name, _ in headings:  # each heading links to its diff or tag
        assert re.search(rf"^\[{re.escape(name)}\]: https://github\.com/pallas-lsp/pallas-lsp/", CHANGELOG, re.M), name


def test_the_newest_release_is_the_version_everywhere():
    newest = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", CHANGELOG, re.M)[0]
    extension = json.loads((REPO / "client-vscode" / "package.json").read_text())["version"]
    assert newest == PYPROJECT["project"]["version"] == __version__ == extension


def test_the_docs_pin_the_release_tag_and_it_exists():
    install = (REPO / "docs" / "install.md").read_text()
    tag = f"v{__version__}"
    assert re.findall(r"^\s+rev: (\S+)", install, re.M) == [tag]
    assert f"git+https://github.com/pallas-lsp/pallas-lsp@{tag}\"" in install
    tags = subprocess.run(["git", "tag", "--list"], cwd=REPO, capture_output=True, text=True).stdout
    if not tags.strip():  # a clone made without tags (a shallow CI checkout) cannot say; one with them can
        pytest.skip("this clone has no tags: `git fetch --tags` to check the pinned release")
    found = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{tag}^{{commit}}"], cwd=REPO,
                           capture_output=True, text=True)
    if found.returncode != 0:
        pytest.fail(f"docs/install.md pins {tag}, which this repository does not have: cut the release "
                    f"(docs/install.md#releases): git tag -a {tag} -m 'pallas-lsp {__version__}' <commit>")
    tagged = subprocess.run(["git", "show", f"{tag}:pyproject.toml"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout
    assert tomllib.loads(tagged)["project"]["version"] == __version__  # the tag is that version's commit
