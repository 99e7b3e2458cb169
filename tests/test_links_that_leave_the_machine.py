"""Links a reader follows away from this machine (SARIF in code scanning, `--help` of an installed
wheel, the install docs) lead to pages that exist, never into site-packages or a checkout
(issue 22)."""

import json
import os
import re
import subprocess
import sys
import tomllib

from conftest import REPO
from pallas_lsp import PROJECT_URL
from pallas_lsp.rules import RULES

WEB = "https://github.com/pallas-lsp/pallas-lsp"
KERNEL = "from jax.experimental import pallas as pl\n"


def cli(*args, cwd, **env):
    environment = {k: v for k, v in os.environ.items() if k != "PALLAS_LSP_DOCS_URL"} | {"COLUMNS": "200"} | env
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, timeout=300)


def test_the_project_url_is_the_repository_pyproject_names():
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    assert PROJECT_URL == urls["Repository"] == WEB


def _help_uris(run):
    assert run.returncode == 0, run.stderr
    return {rule["id"]: rule["helpUri"] for rule in json.loads(run.stdout)["runs"][0]["tool"]["driver"]["rules"]}


def test_sarif_links_each_rule_to_its_page_in_the_repository_on_the_web(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    links = _help_uris(cli("check", "--no-jedi", "--format", "sarif", "k.py", cwd=tmp_path))
    pages = {rule.CODE: f"{rule.CODE}-{rule.NAME}.md" for rule in RULES}
    assert links == {code: f"{WEB}/blob/main/docs/rules/{page}" for code, page in pages.items()}
    assert [page for page in pages.values() if not (REPO / "docs" / "rules" / page).is_file()] == []


def test_sarif_links_a_docs_site_of_ones_own(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    links = _help_uris(cli("check", "--no-jedi", "--format", "sarif", "k.py", cwd=tmp_path,
                           PALLAS_LSP_DOCS_URL="https://docs.example.com/pallas/"))
    assert links["PAL001"] == "https://docs.example.com/pallas/PAL001-get-global-not-semaphore.md"


def _github_anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_serve_help_points_at_the_tcp_docs_on_the_web(tmp_path):
    run = cli("serve", "--help", cwd=tmp_path, COLUMNS="60")  # narrow: the link stays whole
    assert run.returncode == 0
    assert "docs/editors.md)" not in run.stdout  # a wheel has no docs/ folder
    (link,) = re.findall(r"^Editor configurations, TCP and its token: (\S+)$", run.stdout, re.M)
    page, anchor = link.split("#")
    assert page == f"{WEB}/blob/main/docs/editors.md"
    headings = re.findall(r"^#+ (.*)$", (REPO / "docs" / "editors.md").read_text(), re.M)
    assert anchor in [_github_anchor(heading) for heading in headings]


def test_install_docs_pin_a_revision_the_repository_has_and_install_what_they_build():
    text = (REPO / "docs" / "install.md").read_text()
    (rev,) = re.findall(r"^\s+rev: (\S+)", text, re.M)
    assert re.fullmatch(r"v\d+\.\d+\.\d+", rev), rev  # a release tag; tests/test_release_files.py checks it exists
    workflow = text[text.index("# .github/workflows/pallas-lsp.yml"):]
    workflow = workflow[:workflow.index("```")]
    installs = re.findall(r"pip install (.*)", workflow)
    assert installs[-1] == f'"pallas-lsp @ git+{WEB}@{rev}"'
    assert "dist/" not in workflow  # no wheel that the job itself does not build
