"""The model's shortcuts give what the slow ways give, on real code (jax's own source, this project's
examples and fixtures): `child_nodes` lists what `ast.iter_child_nodes` does less the token nodes, the
scope the builder keeps for a name, call, def or class is the one `scope_of` climbs to, and the call
index finds the calls a scan of every call finds (issue 24: these are asked hundreds of thousands of
times for one big module)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, jax_python
from pallas_lsp.analysis.model import _TOKEN_NODES, ModuleModel, child_nodes


def _jax_sources() -> list[Path]:
    root = subprocess.run([jax_python(), "-c", "import jax, os; print(os.path.dirname(jax.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    pallas = sorted(Path(root, "_src", "pallas").rglob("*.py"))
    return pallas + sorted(Path(root, "_src", "lax").rglob("*.py"))[:40]


@pytest.fixture(scope="module")
def sources() -> list[tuple[Path, str]]:
    paths = [*_jax_sources(), *sorted((REPO / "examples").rglob("*.py")), *sorted((REPO / "tests" / "fixtures").rglob("*.py"))]
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            ast.parse(text)
        except SyntaxError:  # fixtures of broken files: the recovery's trees are other tests' business
            continue
        found.append((path, text))
    assert len(found) > 150
    return found


def test_child_nodes_are_the_child_nodes_but_the_tokens(sources):
    checked = 0
    for path, text in sources:
        for node in ast.walk(ast.parse(text)):
            if node.__class__ in _TOKEN_NODES:
                continue
            expected = [c for c in ast.iter_child_nodes(node) if c.__class__ not in _TOKEN_NODES]
            assert child_nodes(node) == expected, (str(path), getattr(node, "lineno", None), ast.dump(node)[:120])
            checked += 1
    assert checked > 100_000


def test_child_nodes_of_a_node_missing_fields():
    """A node built by hand may lack a field (3.12 gives none for lists): what it has is listed, as before."""
    func = ast.Name(id="f", ctx=ast.Load())
    assert child_nodes(ast.Call(func=func)) == [func]
    assert child_nodes(ast.Return()) == []
    key = ast.Constant(1)
    assert child_nodes(ast.Dict(keys=[None, key], values=[func, func])) == [key, func, func]  # `{**f, 1: f}`


def test_the_scope_the_builder_keeps_is_the_one_scope_of_climbs_to(sources):
    checked: dict[type, int] = {}
    for path, text in sources:
        model = ModuleModel(str(path), text)
        kept = dict(model._scope_of)
        for node, scope in kept.items():
            model._scope_of.clear()  # climb from nothing known
            assert model.scope_of(node) is scope, (str(path), getattr(node, "lineno", None), ast.dump(node)[:120])
            checked[node.__class__] = checked.get(node.__class__, 0) + 1
    assert checked[ast.Name] > 50_000 and checked[ast.Call] > 10_000 and checked[ast.FunctionDef] > 1_000
    assert checked[ast.Lambda] > 10 and checked[ast.ClassDef] > 100


def test_calls_named_or_aliased_are_what_a_scan_of_every_call_finds(sources):
    for path, text in sources:
        model = ModuleModel(str(path), text)
        for name in ("get_global", "run_scoped", "semaphore_signal", "partial", "zeros"):
            scanned = []
            for call in model.calls:
                func = call.func
                last = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if last != name:
                    if not isinstance(func, ast.Name):
                        continue
                    binding = model.lookup(func.id, model.scope_of(call), call.lineno)
                    if binding is None or binding.kind not in ("assign", "import"):
                        continue
                scanned.append(call)
            assert model.calls_named_or_aliased(name) == scanned, (str(path), name)
