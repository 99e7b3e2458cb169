"""A keystroke is patched into the file's model and forgets only the answers it can change
(analysis/model_patch.py, analysis/reads.py), with exactly the findings of a whole analysis.

The workspace is shaped like the kernel files of real packages: a module whose kernels are nested
in one factory function and one class (so a whole top-level statement is most of the module, as in
tpu-inference's rpa kernel or maxtext's attention op), a helpers module it imports, and a module
importing it that launches its kernels. Random edits of the kinds a user makes (characters typed
and deleted inside body lines, types and flags switched in place, lines added and removed, comments,
text that does not parse and its repair) go to any of the three; after each one every module is
analysed as the server does (one long-lived project, `set_text`, `analyze_incremental`, models over
the budget dropped) and compared with a fresh project's whole analysis. The other tests count the
work a keystroke does: a fraction of a whole analysis, no module parsed again.
"""

from __future__ import annotations

import random
import re
import sys

import pytest

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project, evaluate
from pallas_lsp.analysis.model import ModuleModel
from pallas_lsp.analysis.project import PINNED_BUDGETS
from pallas_lsp.engine import analyze, analyze_incremental

sys.path.insert(0, str(REPO / "bench"))
import make_big_file  # noqa: E402

HELPERS = """\
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

KIND = plgpu.SemaphoreType.REGULAR
SCRATCH = plgpu.SMEM((8,), jnp.float32)
STEPS = 4


def semaphore_kind():
    return KIND


def buffer_kind():
    return SCRATCH
"""

CONNECTED = """

import helpers
from helpers import KIND, STEPS, semaphore_kind

BLOCK = 128


def make_attention(block=BLOCK, interpret=False):
    \"\"\"Kernels nested in one factory, as real kernel files write them.\"\"\"

    def _signal_both(sem):
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)

    def _step(i, carry):
        sem = pl.get_global(semaphore_kind())
        _signal_both(sem)
        return carry + 1

    def _tail(o_ref, value):
        scaled = value * 2
        o_ref[...] = scaled

    def kernel(x_ref, o_ref):
        acc = 0
        acc = lax.fori_loop(0, STEPS, _step, acc)
        sem = pl.get_global(KIND)
        pl.semaphore_signal(sem)
        spare = pl.get_global(helpers.semaphore_kind())
        pl.semaphore_wait(spare)

        @pl.when(acc > 0)
        def _():
            nxt = acc + 1
            _tail(o_ref, nxt)

    def other(x_ref, o_ref):
        sem = pl.get_global(KIND)
        pl.semaphore_signal(sem)
        o_ref[...] = x_ref[...]

    def run(x):
        out = jax.ShapeDtypeStruct((block,), jnp.float32)
        first = plgpu.kernel(kernel, out_type=out, interpret=interpret)(x)
        return plgpu.kernel(other, out_type=out, interpret=False)(first)

    return run


class Attention:
    def __init__(self, block=BLOCK, interpret=False):
        self.block = block
        self.interpret = interpret
        self.kind = KIND

    def _body(self, x_ref, o_ref):
        sem = pl.get_global(self.kind)
        pl.semaphore_signal(sem)
        o_ref[...] = x_ref[...]

    def __call__(self, x):
        out = jax.ShapeDtypeStruct((self.block,), jnp.float32)
        return plgpu.kernel(self._body, out_type=out, interpret=self.interpret)(x)


def debug(x):
    return Attention(interpret=False)(x) + make_attention(interpret=False)(x)
"""

LAUNCHER = """\
import contextlib

from jax.experimental.pallas import mosaic_gpu as plgpu

import kernels_module as km


def debug(x):
    return km.make_attention(interpret=False)(x)


def debug_class(x):
    return km.Attention(interpret=False)(x)


def debug_switched(x):
    with plgpu.force_gpu_interpret_mode():
        return km.make_attention()(x)
"""

# Edits that keep every line where it is: `(pattern, replacement)` applied to one matching line.
SWITCHES = [
    (r"plgpu\.SemaphoreType\.REGULAR", "plgpu.SMEM((8,), jnp.float32)"),
    (r"plgpu\.SMEM\(\(8,\), jnp\.float32\)", "plgpu.SemaphoreType.REGULAR"),
    (r"interpret=False", "interpret=True"),
    (r"interpret=True", "interpret=False"),
    (r"semaphore_kind\(\)", "buffer_kind()"),
    (r"buffer_kind\(\)", "semaphore_kind()"),
    (r"pl\.semaphore_wait\((\w+)\)", r"pl.semaphore_wait(\1.at[0])"),
    (r"\.at\[0\]\)", ")"),
    (r"STEPS = \d+", "STEPS = 0"),
    (r"STEPS = 0", "STEPS = 4"),
    (r"plgpu\.force_gpu_interpret_mode\(\)", "contextlib.nullcontext()"),
    (r"contextlib\.nullcontext\(\)", "plgpu.force_gpu_interpret_mode()"),
]
# Edits no model can be patched with: the module is parsed again, and what was read from it forgotten.
UNPATCHABLE = [("import", "import math\n"), ("broken", "def (\n"), ("repaired", "")]


def _typed(rng: random.Random, text: str) -> tuple[str, str]:
    """A keystroke or a small edit that keeps every line where it is."""
    lines = text.split("\n")
    kind = rng.choice(["char", "char", "delete_char", "switch", "switch", "switch", "comment"])
    if kind == "switch":
        pattern, replacement = rng.choice(SWITCHES)
        found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
        if found:
            at = rng.choice(found)
            lines[at] = re.sub(pattern, replacement, lines[at], count=1)
        return kind, "\n".join(lines)
    body = [i for i, line in enumerate(lines) if re.match(r"^ {4,}\w+ = ", line)]
    if not body:
        return kind, text
    at = rng.choice(body)
    line = lines[at]
    column = len(line) - len(line.lstrip())
    if kind == "char":  # before the assigned name: it binds another name
        lines[at] = line[:column] + rng.choice("abxy") + line[column:]
    elif kind == "delete_char" and len(line.lstrip()) > 1:
        lines[at] = line[:column] + line[column + 1:]
    elif kind == "comment":
        lines[at] = line + f"  # note {rng.randrange(99)}"
    return kind, "\n".join(lines)


def _unpatchable(rng: random.Random, text: str) -> tuple[str, str]:
    """An import added, a line that does not parse added, or that line taken out again."""
    broken = "def (\n"
    if broken in text:
        return "repaired", text.replace(broken, "", 1)
    kind, line = rng.choice(UNPATCHABLE[:2])
    return kind, line + text


def _workspace(tmp_path, seed: int) -> dict[str, str]:
    units, _ = make_big_file.generate(lines=250, seed=seed, bug_every=3)
    texts = {"helpers.py": HELPERS, "kernels_module.py": units + CONNECTED, "launcher.py": LAUNCHER}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_patched_edits_give_the_findings_of_a_whole_analysis(tmp_path, seed):
    from test_incremental_analysis import _parses, random_edit  # the line-moving and broken edits

    texts = _workspace(tmp_path, seed)
    paths = {name: str(tmp_path / name) for name in texts}
    python = jax_python()
    editing = Project(root=str(tmp_path), python=python)
    if seed == 2:  # a small budget: every model is dropped (and its answers forgotten) between analyses, even those
        # another module's analysis read (pinned: a rule of the launcher's, PAL026, models the kernels it launches)
        editing.model_text_budget = min(len(text) for text in texts.values()) // 2
        assert sum(len(text) for text in texts.values()) > PINNED_BUDGETS * editing.model_text_budget
    reference = Project(root=str(tmp_path), python=python)
    rng = random.Random(seed)
    for name in texts:  # every module open in the editor
        editing.set_text(paths[name], texts[name])
        analyze_incremental(editing, paths[name], texts[name], min_lines=0)
    patched = 0
    parsed = texts["kernels_module.py"]  # its last text that parsed
    for step in range(36):
        name = rng.choice(["kernels_module.py"] * 4 + ["helpers.py", "launcher.py"])
        if name == "kernels_module.py" and texts[name] != parsed and rng.random() < 0.5:
            kind, edited = "put back", parsed  # a broken text is often repaired soon
        elif name == "kernels_module.py" and rng.random() < 0.25:
            kind, edited = random_edit(rng, texts[name])
        elif name == "launcher.py" and rng.random() < 0.3:
            kind, edited = _unpatchable(rng, texts[name])
        else:
            kind, edited = _typed(rng, texts[name])
        texts[name] = edited
        if name == "kernels_module.py" and _parses(edited):
            parsed = edited
        editing.set_text(paths[name], edited)
        patched += editing.patched_model(paths[name], edited)
        reference.forget_models()
        for other in texts:
            reference.set_text(paths[other], texts[other])
        for other in ([name] + [n for n in texts if n != name]):  # the edited one first, as the server does
            got = analyze_incremental(editing, paths[other], texts[other], min_lines=0)
            editing.drop_models_over_budget(paths[other])
            expected = analyze(reference, paths[other], texts[other])
            assert got == expected, f"seed {seed}, edit {step} ({kind} in {name}), findings of {other}"
    if seed == 2:  # no model of a module over the budget is kept: its edits take the chunks' way
        assert patched == 0
    else:
        assert patched >= 18, patched  # most edits were patched into the models kept


CONNECTED_ONLY = make_big_file.HEADER + CONNECTED


def _connected(tmp_path) -> tuple[str, Project]:
    """The connected module, its helpers and its importer on disk: the module's path, a project."""
    for name, text in {"helpers.py": HELPERS, "kernels_module.py": CONNECTED_ONLY, "launcher.py": LAUNCHER}.items():
        (tmp_path / name).write_text(text)
    return str(tmp_path / "kernels_module.py"), Project(root=str(tmp_path), python=jax_python())


def _count_evaluations(monkeypatch):
    counts = {"evaluations": 0, "models": 0}
    evaluate_ = evaluate.Evaluator._eval

    def counted(self, model, expr, frame):
        counts["evaluations"] += 1
        return evaluate_(self, model, expr, frame)

    build = ModuleModel.__init__

    def built(self, *args, **kwargs):
        counts["models"] += 1
        return build(self, *args, **kwargs)

    monkeypatch.setattr(evaluate.Evaluator, "_eval", counted)
    monkeypatch.setattr(ModuleModel, "__init__", built)
    return counts


def test_a_keystroke_in_a_nested_kernel_body_evaluates_a_fraction_of_a_whole_analysis(tmp_path, monkeypatch):
    """The kernels are nested in one factory (one top-level statement) and launched from an
    importer: a character typed in a nested function's body re-derives that function's
    expressions and the kernels reaching it, not the module, nor what the importer says."""
    path, project = _connected(tmp_path)
    project.model_text_budget = len(CONNECTED_ONLY) + 100  # the importer's models: only as read by its analyses
    counts = _count_evaluations(monkeypatch)
    text = CONNECTED_ONLY
    project.set_text(path, text)
    first = analyze_incremental(project, path, text, min_lines=0)
    project.drop_models_over_budget(path)
    whole = counts["evaluations"]
    assert first and whole > 100
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == "scaled = value * 2")
    for step, typed in enumerate(["    ascaled = value * 2", "    scaled = value * 2", "    scaled = value * 23"]):
        lines[at] = "    " + typed
        edited = "\n".join(lines)
        counts.update(evaluations=0, models=0)
        project.set_text(path, edited)
        got = analyze_incremental(project, path, edited, min_lines=0)
        project.drop_models_over_budget(path)
        assert counts["models"] == 0, step  # no module parsed again, this one included
        assert counts["evaluations"] * 10 < whole, (step, counts["evaluations"], whole)
        fresh = Project(root=str(tmp_path), python=jax_python())
        fresh.set_text(path, edited)
        assert got == analyze(fresh, path, edited)


def test_a_line_added_in_a_nested_body_is_patched_too(tmp_path, monkeypatch):
    """Enter in a kernel body moves every line below: the lines are moved in the model kept, no
    module is parsed again, and the findings below the new line move with it."""
    path, project = _connected(tmp_path)
    counts = _count_evaluations(monkeypatch)
    project.set_text(path, CONNECTED_ONLY)
    before = analyze_incremental(project, path, CONNECTED_ONLY, min_lines=0)
    lines = CONNECTED_ONLY.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == "scaled = value * 2")
    edited = "\n".join([*lines[:at], "        extra = 1", *lines[at:]])
    counts.update(evaluations=0, models=0)
    project.set_text(path, edited)
    got = analyze_incremental(project, path, edited, min_lines=0)
    assert counts["models"] == 0
    assert project.patched_model(path, edited)
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(path, edited)
    assert got == analyze(fresh, path, edited)
    assert [f.span.line + (f.span.line >= at) for f in before] == [f.span.line for f in got]


def test_an_importers_interpret_switch_after_its_edit(tmp_path):
    """The importer runs the module's kernels under `force_gpu_interpret_mode`, which its kernel
    index marks on the module's entry points while PAL002 looks at importers, after the rules
    that read them unmarked. After an edit of the importer analysed alone (its import facts
    change), the module's next analysis reads the marks in the same order as a whole analysis."""
    texts = {"helpers.py": HELPERS, "kernels_module.py": CONNECTED_ONLY, "launcher.py": LAUNCHER}
    _, project = _connected(tmp_path)
    paths = {name: str(tmp_path / name) for name in texts}
    for name in ("kernels_module.py", "launcher.py", "kernels_module.py"):
        project.set_text(paths[name], texts[name])
        analyze_incremental(project, paths[name], texts[name], min_lines=0)
    edited = "import math\n" + LAUNCHER
    project.set_text(paths["launcher.py"], edited)
    analyze_incremental(project, paths["launcher.py"], edited, min_lines=0)
    got = analyze_incremental(project, paths["kernels_module.py"], CONNECTED_ONLY, min_lines=0)
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(paths["launcher.py"], edited)
    expected = analyze(fresh, paths["kernels_module.py"], CONNECTED_ONLY)
    assert {"PAL002", "PAL004"} <= {f.code for f in expected}
    assert got == expected


def test_hovers_and_inlay_hints_between_keystrokes_keep_the_answers(tmp_path, monkeypatch):
    """An editor asks for inlay hints (and hovers) between keystrokes: they are answered from the
    model kept, not from a blanked one standing in for it, which forgot every answer of the file."""
    from pallas_lsp.analysis.hover import hover_text, inlay_hints

    path, project = _connected(tmp_path)
    counts = _count_evaluations(monkeypatch)
    project.set_text(path, CONNECTED_ONLY)
    analyze_incremental(project, path, CONNECTED_ONLY, min_lines=0)
    whole = counts["evaluations"]
    lines = CONNECTED_ONLY.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == "scaled = value * 2")
    fresh = Project(root=str(tmp_path), python=jax_python())
    for typed in ["        ascaled = value * 2", "        scaled = value * 2"]:
        lines[at] = typed
        edited = "\n".join(lines)
        project.set_text(path, edited)
        analyze_incremental(project, path, edited, min_lines=0)
        hints = inlay_hints(project, path, edited, 0, len(lines))
        column = lines[at + 6].find("pl.get_global")
        hovered = hover_text(project, path, edited, at + 6, column + 4)
        fresh.set_text(path, edited)
        assert hints == inlay_hints(fresh, path, edited, 0, len(lines))
        assert hovered == hover_text(fresh, path, edited, at + 6, column + 4)
    counts.update(evaluations=0)
    lines[at] = "        scaled = value * 3"
    edited = "\n".join(lines)
    project.set_text(path, edited)
    analyze_incremental(project, path, edited, min_lines=0)
    assert counts["evaluations"] * 10 < whole, (counts["evaluations"], whole)


CLASS_KERNELS = make_big_file.HEADER + """

class Ring:
    KIND = plgpu.SemaphoreType.REGULAR

    def kernel(self, *args, **kwargs):
        return plgpu.kernel(*args, interpret=False, **kwargs)

    def _body(self, x_ref, o_ref):
        sem = pl.get_global(self.KIND)
        pl.semaphore_signal(sem)
        o_ref[...] = x_ref[...]

    def __call__(self, x):
        out = jax.ShapeDtypeStruct((128,), jnp.float32)
        return self.kernel(self._body, out_type=out)(x)
"""


def test_edits_of_a_class_body_and_of_a_launch_wrapper_are_patched_with_their_findings(tmp_path):
    """What is kept on a syntax node (a class's members, the call a launch wrapper hands its
    arguments on to) goes with an edit of the statements it was read from: a class attribute's
    type switched in place, then the wrapper's `interpret=`, give a whole analysis's findings."""
    path = str(tmp_path / "ring.py")
    (tmp_path / "ring.py").write_text(CLASS_KERNELS)
    project = Project(root=str(tmp_path), python=jax_python())
    text = CLASS_KERNELS
    project.set_text(path, text)
    analyze_incremental(project, path, text, min_lines=0)
    seen = set()
    for old, new in [("KIND = plgpu.SemaphoreType.REGULAR", "KIND = plgpu.SMEM((8,), jnp.float32)"),
                     ("KIND = plgpu.SMEM((8,), jnp.float32)", "KIND = plgpu.SemaphoreType.REGULAR"),
                     ("interpret=False", "interpret=True")]:
        text = text.replace(old, new)
        project.set_text(path, text)
        assert project.patched_model(path, text), new
        got = analyze_incremental(project, path, text, min_lines=0)
        fresh = Project(root=str(tmp_path), python=jax_python())
        fresh.set_text(path, text)
        assert got == analyze(fresh, path, text), new
        seen.add(tuple(sorted({f.code for f in got})))
    assert len(seen) == 3, seen  # each edit changed the findings


SPECS_HELPER = make_big_file.HEADER + """

def block_specs():
    specs = [pl.BlockSpec((8,), lambda i: (i,))]
    return specs


def launch(x):
    def kernel(x_ref, o_ref):
        scaled = x_ref[...] * 2
        o_ref[...] = scaled

    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    return pl.pallas_call(kernel, in_specs=block_specs(), out_shape=out, grid=(1,))(x)
"""


def test_a_keystroke_keeps_what_a_list_in_a_variable_was_found_to_be(tmp_path, monkeypatch):
    """A list bound to a name is its literal only where nothing changes it in place (`specs.append`):
    that question reads the whole scope, and an edit of a statement that changes nothing in place
    (a keystroke in a kernel body) keeps the answers that asked it."""
    path = str(tmp_path / "specs.py")
    (tmp_path / "specs.py").write_text(SPECS_HELPER)
    project = Project(root=str(tmp_path), python=jax_python())
    asked = []
    evaluate_ = evaluate.Evaluator._eval

    def counted(self, model, expr, frame):
        if getattr(expr, "id", None) == "specs":
            asked.append(expr)
        return evaluate_(self, model, expr, frame)

    monkeypatch.setattr(evaluate.Evaluator, "_eval", counted)
    project.set_text(path, SPECS_HELPER)
    analyze_incremental(project, path, SPECS_HELPER, min_lines=0)
    assert asked
    for typed in ["ascaled", "scaled"]:
        text = SPECS_HELPER.replace("        scaled = x_ref", f"        {typed} = x_ref")
        asked.clear()
        project.set_text(path, text)
        assert project.patched_model(path, text)
        got = analyze_incremental(project, path, text, min_lines=0)
        assert not asked, typed
        fresh = Project(root=str(tmp_path), python=jax_python())
        fresh.set_text(path, text)
        assert got == analyze(fresh, path, text)
    text = SPECS_HELPER.replace("    return specs", "    specs.append(specs[0])\n    return specs")
    project.set_text(path, text)  # a line added that changes the list in place: it is asked again
    got = analyze_incremental(project, path, text, min_lines=0)
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh.set_text(path, text)
    assert got == analyze(fresh, path, text)
