"""A module's text is parsed once for everything that reads its statements: its import table
(`workspace_imports`), the syntax check of a file that cannot matter, and its model."""

from __future__ import annotations

import textwrap

import pytest

from pallas_lsp.analysis import Project, big_literals
from pallas_lsp.analysis.model import ModuleModel
from pallas_lsp.analysis.parsed_trees import ParsedTrees
from pallas_lsp.engine import analyze

HELPER = textwrap.dedent("""\
    import jax

    def double(x):
        return x * 2

    SCALE = 4
""")

KERNEL = textwrap.dedent("""\
    import jax
    from jax.experimental import pallas as pl
    from pkg.helper import double, SCALE

    def kernel(x_ref, o_ref):
        o_ref[...] = double(x_ref[...]) * SCALE

    def run(x):
        return pl.pallas_call(kernel, out_shape=x)(x)
""")


@pytest.fixture
def package(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helper.py").write_text(HELPER)
    (tmp_path / "pkg" / "kernel.py").write_text(KERNEL)
    return tmp_path


@pytest.fixture
def parses(monkeypatch):
    """The texts `big_literals.parse` was asked to parse, in order."""
    texts: list[str] = []
    parse_elided = big_literals.parse_elided

    def counting(text):
        texts.append(text)
        return parse_elided(text)

    monkeypatch.setattr(big_literals, "parse_elided", counting)
    return texts


def test_a_table_read_before_the_model_gives_the_model_its_tree(package, parses):
    project = Project(root=str(package), use_jedi=False)
    path = str(package / "pkg" / "helper.py")
    exports = project.resolver.workspace_imports.exports(path)
    assert set(exports.names) == {"jax", "double", "SCALE"}
    model = project.model(path)
    assert model.tree is project.parsed_tree(path, HELPER)
    assert model.source.whole and not model.source.syntax_errors
    assert parses.count(HELPER) == 1


def test_a_model_lends_its_tree_to_the_table(package, parses):
    project = Project(root=str(package), use_jedi=False)
    path = str(package / "pkg" / "helper.py")
    model = project.model(path)
    exports = project.resolver.workspace_imports.exports(path)
    assert set(exports.names) == {"jax", "double", "SCALE"}
    assert project.parsed_tree(path, model.text) is model.tree
    assert len(parses) == 1


def test_a_check_parses_each_text_once(package, parses):
    project = Project(root=str(package), use_jedi=False)
    project.index.trust_events = True
    for name in ("__init__.py", "helper.py", "kernel.py"):
        analyze(project, str(package / "pkg" / name))
    counted = {text: parses.count(text) for text in parses}
    assert counted[HELPER] == 1 and counted[KERNEL] == 1


def test_a_text_that_does_not_parse_is_recovered_by_its_model(package):
    project = Project(root=str(package), use_jedi=False)
    path = str(package / "pkg" / "broken.py")
    broken = "def f(:\n    pass\nx = 1\n"
    (package / "pkg" / "broken.py").write_text(broken)
    with pytest.raises(SyntaxError):
        project.parsed_tree(path, broken)
    model = project.model(path)
    assert model.source.syntax_errors and not model.source.whole
    with pytest.raises(SyntaxError):  # the recovered tree is never lent as the text's own
        project.parsed_tree(path, broken)


def test_another_text_of_the_file_is_parsed_again(package):
    project = Project(root=str(package), use_jedi=False)
    path = str(package / "pkg" / "helper.py")
    tree = project.parsed_tree(path, HELPER)
    edited = HELPER + "EXTRA = 1\n"
    project.set_text(path, edited)
    model = project.model(path)
    assert model.tree is not tree and model.text == edited
    assert [getattr(node, "name", None) for node in model.tree.body][-1] is None


def test_kept_trees_stay_within_their_budget():
    trees = ParsedTrees(budget=30)
    first = trees.tree("a.py", "x = 1\n" * 3)
    trees.tree("b.py", "y = 2\n" * 3)
    trees.tree("c.py", "z = 3\n" * 3)  # 54 characters kept would be over 30: the oldest go
    assert trees.take("a.py", "x = 1\n" * 3) is None
    assert trees.take("c.py", "z = 3\n" * 3) is not None
    assert trees.take("c.py", "z = 3\n" * 3) is None  # taken: no longer kept
    assert first is not None


def test_memos_switch_for_models_made_before_and_during_a_switch(package):
    project = Project(root=str(package), use_jedi=False)
    before = project.model(str(package / "pkg" / "helper.py"))
    before.eval_cache["answer"] = "full"
    with ModuleModel.evaluating_in("own-module call sites"):
        during = project.model(str(package / "pkg" / "kernel.py"))
        assert "answer" not in before.eval_cache
        before.eval_cache["answer"] = "own"
        during.eval_cache["answer"] = "own"
    assert before.eval_cache["answer"] == "full"
    assert "answer" not in during.eval_cache
    with ModuleModel.evaluating_in("own-module call sites"):
        assert before.eval_cache["answer"] == "own" and during.eval_cache["answer"] == "own"
