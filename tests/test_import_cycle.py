"""An import that resolves, by path, to itself (`from pkg import envs` in `pkg/__init__.py` with no
`envs` module, or two modules importing a name from each other) ends at once as unknown, as the
unbounded recursion it was ended at Python's recursion limit (analysis/resolver.py `ImportCycle`)."""

import ast

import pytest

from pallas_lsp.analysis import Project
from pallas_lsp.analysis.resolver import Resolver
from pallas_lsp.analysis.values import UNKNOWN

FILES = {
    "self_loop": {"pkg/__init__.py": "from pkg import envs\n\nX = envs\n"},
    "two_modules": {"a.py": "from b import name\n\nX = name\n", "b.py": "from a import name\n"},
}


@pytest.mark.parametrize("case", FILES)
def test_an_import_naming_itself_is_unknown_after_two_steps(tmp_path, monkeypatch, case):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    for name, text in FILES[case].items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    fallbacks = []
    by_path = Resolver._import_fallback

    def counted(resolver, model, binding):
        fallbacks.append(binding.lineno)
        return by_path(resolver, model, binding)

    monkeypatch.setattr(Resolver, "_import_fallback", counted)
    project = Project(root=str(tmp_path), use_jedi=False)  # no jedi: every import is the fallback's
    model = project.model(str(tmp_path / next(iter(FILES[case]))))
    assignment = next(node for node in model.tree.body if isinstance(node, ast.Assign))
    assert project.evaluator.value(model, assignment.value) is UNKNOWN
    assert len(fallbacks) <= len(FILES[case])  # each statement once; it was once per frame up to the limit
    # and the cycle leaves nothing in progress: asked again (a fresh memo), it ends the same way
    model.forget_evaluations()
    fallbacks.clear()
    assert project.evaluator.value(model, assignment.value) is UNKNOWN
    assert len(fallbacks) <= len(FILES[case])
