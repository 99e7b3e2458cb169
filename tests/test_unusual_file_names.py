"""File names with a space, a newline, a tab, a double quote, a backslash or a non-ASCII letter
(issue 19, item 11): `check --diff` must print a patch that real `git apply` takes and that gives
exactly the fixed files, with the names written as `git diff` writes them; SARIF `uri` values must
be RFC 3986 URIs that lead back to exactly those paths."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, jax_python

GOLDEN = REPO / "tests" / "fixes" / "golden" / "scratch_list_plgpu_smem"
BEFORE, AFTER = (GOLDEN / "before.py").read_text(), (GOLDEN / "after.py").read_text()
NAMES = ["my kernel.py", "new\nline.py", 'say "hi".py', "tab\there.py", "back\\slash.py", "caf\u00e9.py",
         "space and\nnewline.py", "plain.py"]
# RFC 3986: unreserved and reserved characters, `%` only before two hex digits.
URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


def git(*args, cwd, **kwargs):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, check=True, **kwargs)


@pytest.fixture
def repository(tmp_path):
    """A git checkout whose kernels (one per odd name) each have a safe fix, committed as they are."""
    git("init", "-q", cwd=tmp_path)
    for name in NAMES:
        (tmp_path / name).write_text(BEFORE)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-qm", "kernels", cwd=tmp_path)
    return tmp_path


def check(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, cwd=cwd, timeout=300)


def headers(patch: bytes) -> list[bytes]:
    return [line for line in patch.split(b"\n") if line.startswith((b"--- ", b"+++ "))]


def test_diff_of_oddly_named_files_applies_with_git_and_gives_the_fixed_text(repository):
    run = check("--diff", ".", cwd=repository)
    assert run.returncode == 1, run.stderr
    patch = run.stdout
    # The names are written as `git diff` writes them (quoted, octal escapes, a tab after a space).
    for name in NAMES:
        (repository / name).write_text(AFTER)
    by_git = git("diff", cwd=repository).stdout
    assert sorted(headers(patch)) == sorted(headers(by_git)) and len(headers(patch)) == 2 * len(NAMES)
    assert b'--- "a/new\\nline.py"\n' in patch and b"--- a/my kernel.py\t\n" in patch
    git("checkout", "--", ".", cwd=repository)
    (repository.parent / "fixes.patch").write_bytes(patch)
    git("apply", "--check", str(repository.parent / "fixes.patch"), cwd=repository)
    git("apply", str(repository.parent / "fixes.patch"), cwd=repository)
    assert {name: (repository / name).read_text() for name in NAMES} == {name: AFTER for name in NAMES}
    assert check(".", cwd=repository).returncode == 0  # nothing left to fix


def sarif_locations(run: subprocess.CompletedProcess) -> tuple[str, list[dict]]:
    assert run.returncode == 1, run.stderr
    sarif = json.loads(run.stdout)["runs"][0]
    base = sarif["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    return base, [result["locations"][0]["physicalLocation"]["artifactLocation"] for result in sarif["results"]]


def file_path(uri: str) -> str:
    parts = urllib.parse.urlsplit(uri)
    assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("file", "", "", "")
    return os.fsdecode(urllib.parse.unquote_to_bytes(parts.path))


def test_sarif_uris_of_oddly_named_files_are_uris_that_lead_back_to_the_files(repository):
    base, locations = sarif_locations(check("--format", "sarif", ".", cwd=repository))
    assert base == repository.as_uri() + "/"
    found = []
    for location in locations:
        uri = location["uri"]
        assert URI_REFERENCE.fullmatch(uri), uri
        assert location["uriBaseId"] == "%SRCROOT%"
        parts = urllib.parse.urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", "")
        found.append(os.fsdecode(urllib.parse.unquote_to_bytes(uri)))
        assert file_path(urllib.parse.urljoin(base, uri)) == str(repository / found[-1])
    assert sorted(found) == sorted(NAMES)


def test_sarif_uris_of_files_outside_the_working_folder_are_file_uris(repository):
    """A file outside the working folder gets an absolute `file:` URI (no `uriBaseId`)."""
    elsewhere = repository.parent / "elsewhere"
    elsewhere.mkdir()
    _, locations = sarif_locations(check("--format", "sarif", str(repository), cwd=elsewhere))
    assert all(URI_REFERENCE.fullmatch(location["uri"]) and "uriBaseId" not in location for location in locations)
    assert sorted(file_path(location["uri"]) for location in locations) == sorted(str(repository / n) for n in NAMES)
    assert urllib.request.url2pathname(urllib.parse.urlsplit(locations[0]["uri"]).path) in {
        str(repository / n) for n in NAMES}
