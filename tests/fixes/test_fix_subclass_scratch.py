"""subclass_scratch: a subclass hook's buffer becomes that subclass's scratch, where the base class launches; it is
refused wherever another class would get a ref it does not take (golden cases: tests/fixes/golden/subclass_scratch_*)."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
BEFORE = (GOLDEN / "subclass_scratch_barrier_override" / "before.py").read_text()


def _titles(ws, source: str) -> list[str]:
    [finding] = [f for f in ws.findings("kernel.py", source) if f.code == "PAL001"]
    return [fix.title for fix in ws.fixes(finding)]


def test_the_fix_says_which_class_it_edits(ws):
    [title] = [t for t in _titles(ws, BEFORE) if "Allocate" in t]
    assert "override of scratch in AddKernel" in title and "taken by AddKernel.step" in title, title


def test_refused_where_a_class_deriving_from_the_subclass_overrides_the_hook(ws):
    """`Derived.step` would be handed the new ref without a parameter for it."""
    source = BEFORE.replace("\n\ndef target():", """

class Derived(AddKernel):
    def step(self, y_gmem, rows, tile, other):
        other[...] = tile[...]


def target():""")
    assert not [t for t in _titles(ws, source) if "Allocate" in t]


def test_refused_where_the_base_body_hands_the_hook_no_refs_past_its_own(ws):
    """`self.step(y_gmem, rows, tile, other)` without `*more`: a new scratch ref would reach the base body only."""
    source = BEFORE.replace("self.step(y_gmem, rows, tile, other, *more)", "self.step(y_gmem, rows, tile, other)")
    assert not [t for t in _titles(ws, source) if "override" in t]


def test_refused_for_a_dataclass_with_slots(ws):
    """super() without arguments fails in a class `dataclass(slots=True)` rebuilds."""
    source = BEFORE.replace("import jax\n", "import dataclasses\n\nimport jax\n", 1).replace(
        "class AddKernel(TileKernel):", "@dataclasses.dataclass(slots=True)\nclass AddKernel(TileKernel):")
    assert not [t for t in _titles(ws, source) if "override" in t]
