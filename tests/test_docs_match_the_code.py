"""The README and docs/ say only what the code does, and say all of it where they list it: the
README stays a quick start (at most 250 lines) whose commands, options, rules, settings and
examples are the code's, both ways; the reference pages list every configuration key, editor
setting and environment variable the code reads and nothing else; every link leads somewhere;
and the pages are current reference, not a history of issues."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO
from pallas_lsp import config
from pallas_lsp.lsp import settings as lsp_settings
from pallas_lsp.cli import build_parser
from pallas_lsp.rules import RULES

README = (REPO / "README.md").read_text()
PAGES = sorted(path for path in (REPO / "docs").glob("*.md"))
# docs/reliability.md is written by the reliability work (it keeps its own numbered sections).
CURRENT_PAGES = [path for path in PAGES if path.name != "reliability.md"]


def _subcommands() -> dict:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(commands.choices)


def _option_actions(parser) -> list:
    return [action for action in parser._actions if action.option_strings and "-h" not in action.option_strings]


def _synopses(text: str) -> dict[str, str]:
    """`pallas-lsp SUB ...` lines of the first synopsis block, with their continuation lines."""
    block = re.search(r"```\n(pallas-lsp (?:check|rule|trace|serve).*?)```", text, re.S).group(1)
    synopses: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        match = re.match(r"pallas-lsp (\w+)", line)
        if match:
            current = match.group(1)
            synopses[current] = line
        elif current and line.startswith(" "):
            synopses[current] += " " + line.strip()
    return synopses


def test_the_readme_is_a_quick_start():
    assert len(README.splitlines()) <= 250
    for section in ("## What it catches", "## Try it", "## Install in your own project", "## Command line",
                    "## Editors", "## Configuration", "## Documentation"):
        assert section in README


@pytest.mark.parametrize("page", ["README.md", "docs/command-line.md"])
def test_the_synopses_name_every_subcommand_and_option_and_no_other(page):
    synopses = _synopses((REPO / page).read_text())
    commands = _subcommands()
    assert set(synopses) == set(commands)
    for name, line in synopses.items():
        named = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line.split(" ", 2)[2] if line.count(" ") > 1 else ""))
        actions = _option_actions(commands[name])
        assert [a.dest for a in actions if not named & set(a.option_strings)] == [], name  # every option named
        assert named <= {o for a in actions for o in a.option_strings}, name  # and no other


def test_the_readme_lists_every_rule_with_its_name_and_page():
    rows = re.findall(r"^\| \[(PAL\d{3})\]\(docs/rules/([^)]+)\) \| `([a-z-]+)` \|", README, re.M)
    assert sorted(rows) == sorted((r.CODE, f"{r.CODE}-{r.NAME}.md", r.NAME) for r in RULES)
    rows = re.findall(r"^\| \[(PAL\d{3})\]\(rules/[^)]+\) \| `([a-z-]+)` \|", (REPO / "docs" / "rules.md").read_text(), re.M)
    assert sorted(rows) == sorted((r.CODE, r.NAME) for r in RULES)


def test_the_readme_example_is_what_check_prints_on_the_example_file():
    (command, shown) = re.search(r"```text\n\$ (pallas-lsp check [^\n]+)\n(.*?)```", README, re.S).groups()
    done = subprocess.run([sys.executable, "-m", "pallas_lsp", *command.split()[1:]], capture_output=True, text=True,
                          cwd=REPO, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO / "server")})
    assert done.stdout == shown and done.returncode == 1
    snippet = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    assert snippet in (REPO / command.split()[-1]).read_text()


def test_readme_command_1_is_the_one_examples_readme_shows_and_checks():
    (first,) = re.findall(r"scripts/setup\.sh --core && (.+)$", README, re.M)
    examples = (REPO / "examples" / "README.md").read_text()
    assert f"$ {first}\n" in examples  # tests/test_examples_readme.py runs it: one finding a rule, exit 1
    assert f"one finding for each rule, {_code_ranges()}, and exits 1" in " ".join(README.split())


def _code_ranges() -> str:
    """The static rules' codes as the README says them: `PAL001 to PAL017 and PAL023` (PAL100: --trace only)."""
    numbers = sorted(int(r.CODE[3:]) for r in RULES if getattr(r, "STATIC", True) and r.CODE != "PAL000")
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    said = [f"PAL{run[0]:03} to PAL{run[-1]:03}" if len(run) > 1 else f"PAL{run[0]:03}" for run in runs]
    return " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)


def test_every_editor_setting_of_the_server_is_documented_and_nothing_else():
    keys = set(lsp_settings._READERS)
    page = (REPO / "docs" / "language-server.md").read_text()
    table = set(re.findall(r"^\| `(\w+)` \|", page[page.index("## Settings"):], re.M))
    assert table | {"select", "ignore"} == keys and "| `select` / `ignore` |" in page
    listed = re.search(r"settings \(((?:`\w+`,? ?(?:and )?)+)\)", " ".join(README.split())).group(1)
    assert set(re.findall(r"`(\w+)`", listed)) == keys


def test_every_pyproject_key_is_documented_and_nothing_else():
    page = (REPO / "docs" / "configuration.md").read_text()
    table = re.findall(r"^\| `([a-z-]+)` \|", page[page.index("| key |"):page.index("Precedence")], re.M)
    assert table == list(config.KNOWN_KEYS)
    example = re.search(r"```toml\n(.*?)```", page, re.S).group(1)
    assert set(re.findall(r"^#? ?([a-z-]+) = ", example, re.M)) | {"per-file-ignores"} == set(config.KNOWN_KEYS)


def test_every_environment_variable_the_code_reads_is_documented():
    read = set()
    for path in (REPO / "server" / "pallas_lsp").rglob("*.py"):
        read |= set(re.findall(r"PALLAS_LSP_[A-Z_]+", path.read_text()))
    read -= {"PALLAS_LSP_TRACE_NAMESPACES"}  # a switch for hosts without PID namespaces, not a user setting
    page = (REPO / "docs" / "configuration.md").read_text()
    table = set(re.findall(r"^\| `(PALLAS_LSP_[A-Z_]+)` \|", page, re.M))
    assert table == read


def _anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _markdown_files():
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    ours = {"README.md", "CHANGELOG.md", "examples/README.md"} | {p.relative_to(REPO).as_posix() for p in CURRENT_PAGES}
    ours |= {p.relative_to(REPO).as_posix() for p in (REPO / "docs" / "rules").glob("*.md")}
    return sorted(REPO / name for name in ours if (REPO / name).exists() or name in tracked)


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_leads_to_a_file_and_heading_that_exist(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path) if path else page
        if not target.exists():
            broken.append(link)
        elif anchor and target.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", re.sub(r"```.*?```", "", target.read_text(), flags=re.S), re.M)
            if anchor not in map(_anchor, headings):
                broken.append(link)
    assert broken == []


def test_every_docs_page_is_reachable_from_the_readme():
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", README))
    assert {page.name for page in PAGES} <= linked


@pytest.mark.parametrize("page", CURRENT_PAGES, ids=lambda p: p.name)
def test_docs_pages_are_reference_not_history(page):
    text = page.read_text()
    assert re.findall(r"\b(?:issue|round) \d+", text, re.I) == []


def test_the_pre_commit_snippets_pin_this_release_and_name_the_hook():
    import yaml

    version = config.__dict__.get("__version__") or __import__("pallas_lsp").__version__
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    for text in (README, (REPO / "docs" / "install.md").read_text()):
        remote = yaml.safe_load(re.search(r"```yaml\n(repos:\n  - repo: https://.*?)```", text, re.S).group(1))
        (repo,) = remote["repos"]
        assert repo["rev"] == f"v{version}" and [h["id"] for h in repo["hooks"]] == [hook["id"]]
