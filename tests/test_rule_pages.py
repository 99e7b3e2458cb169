"""Every rule has a page; the failing example on each PAL003+ page gets exactly the finding the page shows,
and the fixed example gets none."""

import re

import pytest

from conftest import REPO
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.rules import RULES, doc_path

# PAL100 reports what JAX says on a run (check --trace), nothing from the source: its page is tested by
# tests/trace/test_jax_in_the_loop.py.
NEW_RULES = [rule for rule in RULES if rule.CODE >= "PAL003" and getattr(rule, "STATIC", True)]


def test_every_rule_has_a_page():
    assert [rule.CODE for rule in RULES if not doc_path(rule).exists()] == []


@pytest.mark.parametrize("rule", NEW_RULES, ids=[r.CODE for r in NEW_RULES])
def test_page_examples(tmp_path, jax_env, rule):
    page = doc_path(rule).read_text()
    failing, fixed = re.findall(r"```python\n(.*?)```", page, re.S)[:2]
    shown = re.search(r"\$ pallas-lsp check example.py\n(.*?)\n```", page, re.S).group(1)
    project = Project(root=str(tmp_path), python=jax_env)
    (tmp_path / "example.py").write_text(failing)
    findings = analyze(project, str(tmp_path / "example.py"))
    lines = [f"example.py:{f.span.line + 1}:{f.span.column + 1}: {f.code} {f.message}" for f in findings]
    assert len(lines) == 1 and lines[0].startswith(shown.removesuffix(" (...)")), lines  # the page elides the rest
    (tmp_path / "example.py").write_text(fixed)
    assert analyze(project, str(tmp_path / "example.py")) == []
