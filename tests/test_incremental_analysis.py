"""Incremental re-analysis (analysis/incremental.py) gives exactly the findings of a whole analysis.

A generated module of real Pallas units (bench/make_big_file.py: helpers in their own statements,
kernels launched from others, planted bugs) goes through random edits: lines typed inside kernel
bodies, lines and statements added and removed, a helper renamed so the kernel using it no longer
reaches it, a helper reached by a kernel of another statement given (and rid of) a bad get_global,
interpret=True added to a launch or forwarded through **options, a constant read by kernels of two
other statements changed, an import added, text that does not parse (a body line cut short as
typing leaves it, a bracket or triple-quoted string left open to the end of the module and
closed later, among others); one module also switches
interpret mode for every kernel at module level, another is imported by a module that launches
its kernels. After every edit the
findings of one long-lived project (the server's way) must equal those of a whole analysis of the
same text.
"""

from __future__ import annotations

import ast
import contextlib
import os
import random
import re
import sys
import time
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.engine import analyze_incremental
from pallas_lsp.analysis.model import ModuleModel

sys.path.insert(0, str(REPO / "bench"))
import make_big_file  # noqa: E402

SEEDS = range(3)
EDITS_PER_SEED = 40
# Ties between statements beyond one unit's own: a constant read through a helper by two kernels of
# other statements, and interpret=True forwarded through a launcher's **options from a third.
CROSS_UNIT = """

SHARED_KIND = plgpu.SemaphoreType.REGULAR


def _shared_kind():
    return SHARED_KIND


@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))
def shared_a(x_ref, o_ref):
    sem = pl.get_global(_shared_kind())
    pl.semaphore_signal(sem)


def shared_b_body(x_ref, o_ref):
    sem = pl.get_global(_shared_kind())
    pl.semaphore_signal(sem)


def run_shared_b(x, **options):
    return pl.pallas_call(shared_b_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), **options)(x)


def debug_shared_b(x):
    return run_shared_b(x, interpret=False)
"""
# Another workspace module launching kernels of the edited one (PAL002 in the edited module from here).
IMPORTER = """\
import jax
from jax.experimental import pallas as pl
from kernels_module import shared_b_body
import kernels_module as km


def debug(x):
    return pl.pallas_call(shared_b_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)


def debug_through_options(x):
    return km.run_shared_b(x, interpret=True)
"""
# A kernel whose semaphore type comes from another workspace module.
KIND_USER = """\
@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))
def kind_user(x_ref, o_ref):
    sem = pl.get_global(KIND)
    pl.semaphore_signal(sem)
"""
# A module-level switch: every kernel built in a function is interpreted (PAL002 on each get_global).
MODULE_SWITCH = "\nplgpu.set_gpu_interpret_mode(True)\n"
BROKEN = ["pl.get_global(", "def ", "(", ")", ":", "\"\"\"", "    return", "\t", "@functools.partial(", "]", "'", "[", "{",
          "'''"]

CLOSING = {"(": ")", "[": "]", "{": "}", '"""': '"""', "'''": "'''"}


def _lines_matching(lines: list[str], pattern: str) -> list[int]:
    return [i for i, line in enumerate(lines) if re.search(pattern, line)]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def random_edit(rng: random.Random, text: str) -> tuple[str, str]:
    """(what, new text): one edit of the kinds a user makes in a big module."""
    lines = text.split("\n")
    kind = rng.choice(["type_in_body", "type_in_body", "delete_line", "duplicate_line", "blank_lines",
                       "rename_helper", "helper_type", "helper_get_global", "interpret", "broken",
                       "move_statement", "add_import", "shared_kind", "forward_interpret", "half_typed",
                       "left_open"])
    if kind == "type_in_body":  # a new line inside a kernel body (lines shift below it)
        candidates = _lines_matching(lines, r"^    (acc|sem|o_ref|pl\.)")
        if candidates:
            at = rng.choice(candidates)
            lines.insert(at, f"{_indent(lines[at])}_typed_{rng.randrange(1000)} = {rng.randrange(100)}")
    elif kind == "delete_line":
        del lines[rng.randrange(len(lines))]
    elif kind == "duplicate_line":
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
    elif kind == "blank_lines":
        at = rng.randrange(len(lines))
        lines[at:at] = [""] * rng.randint(1, 3) + ([f"# note {rng.randrange(99)}"] if rng.random() < 0.5 else [])
    elif kind == "rename_helper":  # the definition or one use only: the kernel reaches another helper, or none
        candidates = _lines_matching(lines, r"_(semaphore|buffer)_type_\d+|_scale_\d+")
        if candidates:
            at = rng.choice(candidates)
            lines[at] = re.sub(r"(_(semaphore|buffer)_type|_scale)_(\d+)",
                               lambda m: f"{m.group(1)}_{rng.choice([m.group(3), str(rng.randrange(1, 60))])}",
                               lines[at], count=1)
    elif kind == "helper_type":  # what a helper in its own statement returns decides PAL001 in the kernel
        candidates = _lines_matching(lines, r"return plgpu\.(SemaphoreType\.REGULAR|GMEM\(\(256,\), jnp\.float32\))$")
        if candidates:
            at = rng.choice(candidates)
            if "REGULAR" in lines[at]:
                lines[at] = lines[at].replace("plgpu.SemaphoreType.REGULAR", "plgpu.SMEM((8,), jnp.float32)")
            else:
                lines[at] = lines[at].replace("plgpu.GMEM((256,), jnp.float32)", "plgpu.SemaphoreType.REGULAR")
    elif kind == "helper_get_global":  # a helper called from a kernel of another statement
        added = _lines_matching(lines, r"^    extra = pl\.get_global")
        if added and rng.random() < 0.5:
            del lines[rng.choice(added)]
        else:
            candidates = _lines_matching(lines, r"^def _scale_\d+\(")
            if candidates:
                at = rng.choice(candidates) + 2
                kind_text = rng.choice(["plgpu.SMEM((8,), jnp.float32)", "plgpu.SemaphoreType.REGULAR"])
                lines.insert(at, f"    extra = pl.get_global({kind_text})")
    elif kind == "interpret":
        candidates = _lines_matching(lines, r"out_specs=spec,$")
        if candidates:
            at = rng.choice(candidates)
            lines.insert(at + 1, lines[at].replace("out_specs=spec,", "interpret=True,"))
    elif kind == "broken":  # text that does not parse, sometimes to stay for a few edits
        at = rng.randrange(len(lines))
        line = lines[at]
        cut = rng.randint(0, len(line))
        lines[at] = line[:cut] + rng.choice(BROKEN) + line[cut:]
    elif kind == "left_open":  # a bracket or string opened in a kernel body (to the end of the module), later closed
        opened = _lines_matching(lines, r"^\s+_opened = ")
        if opened:
            at = opened[0]
            lines[at] += CLOSING[lines[at].split("_opened = ", 1)[1][:3].rstrip("1")]
        else:
            candidates = _lines_matching(lines, r"^    (acc|sem|o_ref|pl\.)")
            if candidates:
                at = rng.choice(candidates)
                lines.insert(at, f"{_indent(lines[at])}_opened = {rng.choice(list(CLOSING))}1")
    elif kind == "half_typed":  # a body line cut short, as typing leaves it: `pl.semaphore_signal(se`
        candidates = _lines_matching(lines, r"^    (acc|sem|o_ref|pl\.)")
        if candidates:
            at = rng.choice(candidates)
            lines[at] = lines[at][:rng.randint(5, len(lines[at]) - 1)]
    elif kind == "move_statement":  # a whole unit moved elsewhere: statements change order
        starts = _lines_matching(lines, r"^# ---- unit")
        if len(starts) > 2:
            k = rng.randrange(len(starts) - 1)
            unit = lines[starts[k]:starts[k + 1]]
            del lines[starts[k]:starts[k + 1]]
            target = rng.choice(_lines_matching(lines, r"^# ---- unit"))
            lines[target:target] = unit
    elif kind == "shared_kind":
        for at in _lines_matching(lines, r"^SHARED_KIND = "):
            lines[at] = ("SHARED_KIND = plgpu.SMEM((8,), jnp.float32)" if "REGULAR" in lines[at]
                         else "SHARED_KIND = plgpu.SemaphoreType.REGULAR")
    elif kind == "forward_interpret":
        for at in _lines_matching(lines, r"run_shared_b\(x, interpret="):
            lines[at] = lines[at].replace("False", "@").replace("True", "False").replace("@", "True")
    elif kind == "add_import":
        at = max(_lines_matching(lines, r"^(from|import) ") or [0]) + 1
        lines.insert(at, rng.choice(["import math", "from jax.experimental.pallas import tpu as pltpu"]))
    return kind, "\n".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_incremental_findings_equal_a_whole_analysis_after_random_edits(tmp_path, seed):
    text, _ = make_big_file.generate(lines=500, seed=seed, bug_every=3)
    text += CROSS_UNIT + (MODULE_SWITCH if seed == 2 else "")
    path = tmp_path / "kernels_module.py"
    path.write_text(text)
    if seed == 1:
        (tmp_path / "launcher.py").write_text(IMPORTER)
    python = jax_python()
    editing = Project(root=str(tmp_path), python=python)
    if seed:  # over the models' budget: whole analyses by chunks, no whole model kept
        editing.model_text_budget = 0
    reference = Project(root=str(tmp_path), python=python)
    rng = random.Random(seed)
    assert analyze_incremental(editing, str(path), text, min_lines=0) == analyze(reference, str(path), text)
    parsed_text = text  # the last text that parsed: a broken one is often put back
    incremental_steps = 0
    for step in range(EDITS_PER_SEED):
        kind, edited = random_edit(rng, text)
        if text != parsed_text and rng.random() < 0.5:
            kind, edited = "put back", parsed_text
        state = editing.incremental.get(str(path))
        updates = state.updates if state is not None else None
        editing.set_text(str(path), edited)  # as the server does: other modules read this text
        got = analyze_incremental(editing, str(path), edited, min_lines=0)
        reference.forget_models()
        reference.set_text(str(path), edited)
        expected = analyze(reference, str(path), edited)
        assert got == expected, f"seed {seed}, edit {step} ({kind})"
        state = editing.incremental.get(str(path))
        if state is not None and updates is not None and state.updates == updates + 1:
            incremental_steps += 1
        if _parses(edited):
            parsed_text = edited
        text = edited
    assert incremental_steps >= EDITS_PER_SEED // 3  # most edits took the incremental path


def test_a_small_file_takes_the_whole_path(tmp_path):
    text, _ = make_big_file.generate(lines=300, bug_every=3)
    path = tmp_path / "small.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    assert analyze_incremental(project, str(path), text)
    assert str(path) not in project.incremental  # under INCREMENTAL_MIN_LINES


def _analysed_module(tmp_path, size: int) -> tuple[Project, object, list[str]]:
    """A generated module of `size` lines analysed once incrementally: (project, path, its lines)."""
    text, _ = make_big_file.generate(lines=size, bug_every=3)
    path = tmp_path / "typing.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    analyze_incremental(project, str(path), text, min_lines=0)
    return project, path, text.split("\n")


def test_edits_that_leave_a_syntax_error(tmp_path):
    """Typing leaves half-written code: PAL000 for the first error and every other finding, as a
    whole analysis reports them, from the recovered lines; an unclosed bracket that swallows the
    rest of the module included."""
    project, path, lines = _analysed_module(tmp_path, 400)
    late = max(i for i, line in enumerate(lines) if line.startswith("    pl.semaphore_signal(sem)"))
    early = min(i for i, line in enumerate(lines) if line.startswith("    pl.semaphore_signal(sem)"))
    steps = [(late, "    pl.semaphore_signal(sem"), (late, "    pl.semaphore_signal(se m)"),
             (early, "    pl.semaphore_signal(se m)"), (late, "    pl.semaphore_signal(sem)"),
             (early, "    pl.semaphore_signal(sem)"), (early, "    x = [")]
    updates = []
    for line, new in steps:
        lines[line] = new
        edited = "\n".join(lines)
        got = analyze_incremental(project, str(path), edited, min_lines=0)
        assert got == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited), new
        state = project.incremental.get(str(path))
        updates.append(state.updates if state is not None else None)
        errors = [f for f in got if f.code == "PAL000"]
        assert len(errors) == (0 if _parses(edited) else 1)
    assert updates[:5] == [1, 2, 3, 4, 5]  # all but the unclosed bracket were incremental


@contextlib.contextmanager
def _parses_counted(monkeypatch):
    """The code lines of every text `ast.parse` is given meanwhile (how much of the module is parsed again)."""
    parsed: list[int] = []
    real_parse = ast.parse

    def counting_parse(source, *args, **kwargs):
        tree = real_parse(source, *args, **kwargs)
        parsed.append(sum(1 for line in str(source).split("\n") if line.strip()))
        return tree

    with monkeypatch.context() as patched:
        patched.setattr(ast, "parse", counting_parse)
        yield parsed


def test_a_syntax_error_inside_one_statement_does_not_reparse_the_rest(tmp_path, monkeypatch):
    """Typing that leaves one statement broken (an unclosed call, a half-typed attribute or `if`, a
    string not closed yet, whose message names its line):
    the findings of a whole analysis, PAL000 included, while no text parsed holds more than a few
    of the module's statements (failed parses stop at the error; the rest is known to parse)."""
    project, path, lines = _analysed_module(tmp_path, 1200)
    early = min(i for i, line in enumerate(lines) if line.startswith("    pl.semaphore_signal(sem)"))
    code_lines = sum(1 for line in lines if line.strip())
    for new in ["    pl.semaphore_signal(sem", "    pl.semaphore_signal(sem.", "    if sem", "    x = [1,",
                "    x = 'unterminated", "    x = (1,\n    2]", "    pl.semaphore_signal(sem)"]:
        lines[early] = new
        edited = "\n".join(lines)
        with _parses_counted(monkeypatch) as parsed:
            got = analyze_incremental(project, str(path), edited, min_lines=0)
        assert got == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited), new
        assert [f.code for f in got].count("PAL000") == (0 if _parses(edited) else 1)
        assert max(parsed) < code_lines // 4, new  # never the rest of the module


@pytest.mark.parametrize("opening, closing", [("(", ")"), ("[", "]"), ("{", "}"), ('"""', '"""'), ("'''", "'''")])
def test_a_bracket_or_string_left_open_to_the_end_of_the_module(tmp_path, monkeypatch, opening, closing):
    """Opened in a kernel body and typed on while open, then closed: it swallows every line below
    (three double quotes pair every later docstring's quotes the other way round, and Python
    blames the last one, at the end of the module); each step gives a whole analysis's findings,
    PAL000 included, stays incremental, and parses no text holding more than a few statements."""
    project, path, lines = _analysed_module(tmp_path, 1200)
    code_lines = sum(1 for line in lines if line.strip())
    body = min(i for i, line in enumerate(lines) if line.startswith("    pl.semaphore_signal(sem)"))
    lines.insert(body, "")
    steps = [f"    x = {opening}", f"    x = {opening}1", f"    x = {opening}1, 2", f"    x = {opening}1, 2{closing}"]
    for new in ["", *steps]:
        lines[body] = new
        edited = "\n".join(lines)
        updates = project.incremental[str(path)].updates
        with _parses_counted(monkeypatch) as parsed:
            got = analyze_incremental(project, str(path), edited, min_lines=0)
        assert max(parsed) < code_lines // 4, new  # never the rest of the module
        assert got == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited), new
        assert [f.code for f in got].count("PAL000") == (0 if _parses(edited) else 1), new
        assert project.incremental[str(path)].updates == updates + 1, new


def test_an_edit_reanalyses_only_the_statements_connected_to_it(tmp_path):
    """A get_global made bad in a helper is found in the kernel reached through it (PAL001 there, and
    PAL005 on the kernel's signal and wait of the SMEM tile: JAX checks those while tracing);
    findings of other units are kept (moved down by the added line), and equal a whole analysis."""
    text, _ = make_big_file.generate(lines=400, bug_every=3)
    path = tmp_path / "units.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    before = analyze_incremental(project, str(path), text, min_lines=0)
    lines = text.split("\n")
    helper = next(i for i, line in enumerate(lines) if line.startswith("def _semaphore_type_"))
    lines[helper + 2] = lines[helper + 2].replace("plgpu.SemaphoreType.REGULAR", "plgpu.SMEM((8,), jnp.float32)")
    lines.insert(helper, "# a comment line: everything below moves down by one")
    edited = "\n".join(lines)
    after = analyze_incremental(project, str(path), edited, min_lines=0)
    assert project.incremental[str(path)].updates == 1
    assert after == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited)
    new = [f for f in after if (f.span.line, f.code) not in {(b.span.line + (b.span.line >= helper), b.code) for b in before}]
    use = next(i for i in range(helper, len(lines)) if "pl.get_global(_semaphore_type_" in lines[i])
    assert [(f.code, lines[f.span.line].strip()) for f in new] == [
        ("PAL001", lines[use].strip()),
        ("PAL005", "pl.semaphore_signal(sem)"), ("PAL005", "pl.semaphore_wait(sem)")]
    assert all(use < f.span.line < use + 20 for f in new[1:])  # the same kernel's


KERNEL_MODULE = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    o_ref[...] = x_ref[...]
"""

LAUNCHER = """\
import jax
from jax.experimental import pallas as pl
from kern import body


def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)
"""


def test_an_edit_keeps_what_an_importer_says(tmp_path):
    """The importer's kernel entries were evaluated through the edited module's old text: after the
    edit they must be evaluated again, or PAL002 (interpret=True in the importer) is lost."""
    (tmp_path / "kern.py").write_text(KERNEL_MODULE)
    (tmp_path / "launch.py").write_text(LAUNCHER)
    path = str(tmp_path / "kern.py")
    project = Project(root=str(tmp_path), python=jax_python())
    assert [(f.code, f.span.line) for f in analyze_incremental(project, path, KERNEL_MODULE)] == [("PAL002", 5)]
    edited = KERNEL_MODULE.replace("def body", "# a line above the kernel\ndef body")
    project.set_text(path, edited)
    assert [(f.code, f.span.line) for f in analyze_incremental(project, path, edited)] == [("PAL002", 6)]


def test_hovers_and_inlay_hints_of_a_few_lines_equal_the_whole_models(tmp_path):
    """They are answered from the chunks of the asked lines and what is tied to them (the whole
    model of a big module takes seconds to evaluate), the same as from the whole model."""
    from pallas_lsp.analysis.hover import hover_text, inlay_hints

    text, _ = make_big_file.generate(lines=600, bug_every=3)
    text += CROSS_UNIT
    path = tmp_path / "kernels_module.py"
    path.write_text(text)
    (tmp_path / "launcher.py").write_text(IMPORTER)
    editing = Project(root=str(tmp_path), python=jax_python())
    editing.set_text(str(path), text)
    analyze_incremental(editing, str(path), text, min_lines=0)
    lines = text.split("\n")
    edited = "\n".join([*lines[:40], "", *lines[40:]])  # an edit: the state moves to this text
    editing.set_text(str(path), edited)
    analyze_incremental(editing, str(path), edited, min_lines=0)
    assert editing.incremental[str(path)].updates == 1
    whole = Project(root=str(tmp_path), python=jax_python())
    whole.set_text(str(path), edited)
    lines = edited.split("\n")
    hinted = 0
    for first in range(0, len(lines), 37):
        got = inlay_hints(editing, str(path), edited, first, first + 40)
        assert got == inlay_hints(whole, str(path), edited, first, first + 40), first
        hinted += len(got)
    assert hinted > 10
    hovered = 0
    for line, text_line in enumerate(lines):
        column = text_line.find("get_global(")
        if column < 0:
            column = text_line.find("x_ref")
        if column >= 0:
            got = hover_text(editing, str(path), edited, line, column + 1)
            assert got == hover_text(whole, str(path), edited, line, column + 1), line
            hovered += got is not None
    assert hovered > 20


def test_modules_dropped_from_memory_do_not_stop_it_and_their_files_changing_on_disk_does(tmp_path):
    """Between analyses the server drops other modules' models over its memory budget: that
    changes nothing, so edits stay incremental; an imported module changed on disk (no file
    events) is read again, as a whole analysis would."""
    text, _ = make_big_file.generate(lines=300, bug_every=3)
    text += "\n\nfrom helper import KIND\n\n\n" + KIND_USER
    path = tmp_path / "kernels_module.py"
    path.write_text(text)
    helper = tmp_path / "helper.py"
    helper.write_text("from jax.experimental.pallas import mosaic_gpu as plgpu\n\nKIND = plgpu.SemaphoreType.REGULAR\n")
    project = Project(root=str(tmp_path), python=jax_python())
    project.model_text_budget = 0
    lines = text.split("\n")
    for step in range(3):
        edited = "\n".join([*lines[:30], *[""] * step, *lines[30:]])
        project.set_text(str(path), edited)
        analyze_incremental(project, str(path), edited, min_lines=0)
        project.drop_models_over_budget(str(path))
        assert str(helper) not in project._models
    assert project.incremental[str(path)].updates == 2
    helper.write_text("from jax.experimental.pallas import mosaic_gpu as plgpu\n\nKIND = plgpu.SMEM((8,), jnp.float32)\n"
                      .replace("\n\nKIND", "\nimport jax.numpy as jnp\n\nKIND"))
    os.utime(helper, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))  # a stamp surely newer
    edited = "\n".join([*lines[:30], "# one more line", *lines[30:]])
    project.set_text(str(path), edited)
    got = analyze_incremental(project, str(path), edited, min_lines=0)
    whole = Project(root=str(tmp_path), python=jax_python())
    whole.set_text(str(path), edited)
    assert got == analyze(whole, str(path), edited)
    assert any(f.code == "PAL001" and "get_global(KIND)" in edited.split("\n")[f.span.line] for f in got)


def test_a_document_over_the_model_budget_keeps_only_its_chunks(tmp_path):
    """Its whole model (~90 times its text) is not kept between edits; edits, the first statement
    below the imports included, stay incremental and equal a whole analysis."""
    text, _ = make_big_file.generate(lines=600, bug_every=3)
    path = tmp_path / "kernels_module.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    project.model_text_budget = len(text) // 2
    assert analyze_incremental(project, str(path), text, min_lines=0)
    assert str(path) not in project._models and project.incremental[str(path)].text is text
    lines = text.split("\n")
    below_imports = lines.index(next(line for line in lines if line.startswith("DTYPES = ")))
    for step, (at, new) in enumerate([(below_imports, "DTYPES = (jnp.float32,)"), (below_imports + 1, "# a note")]):
        lines[at:at + (step == 0)] = [new]
        edited = "\n".join(lines)
        project.set_text(str(path), edited)
        got = analyze_incremental(project, str(path), edited, min_lines=0)
        assert got == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited)
        assert project.incremental[str(path)].updates == step + 1
        assert str(path) not in project._models


def test_an_edit_keeps_only_the_import_statements_its_statements_use(tmp_path, monkeypatch):
    """A module importing in every unit (30,000 imports in a 5 MB one) made every edit parse them
    all: the analysed text keeps the imports binding a name the analysed statements use, and the
    one naming the backend (read off the module's text), with the findings of a whole analysis."""
    import pallas_lsp.analysis.incremental as incremental

    text, _ = make_big_file.generate(lines=600, bug_every=3)
    text += "".join(f"\n\nimport os as os_{i}\n\n\ndef path_{i}(p):\n    return os_{i}.path.join(p, 'x')\n"
                    for i in range(20))
    path = tmp_path / "units.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    analyze_incremental(project, str(path), text, min_lines=0)
    analysed = []

    class Recorded(ModuleModel):
        def __init__(self, path, text, *args, **kwargs):
            analysed.append(text)
            super().__init__(path, text, *args, **kwargs)

    monkeypatch.setattr(incremental, "ModuleModel", Recorded)
    lines = text.split("\n")
    helper = next(i for i, line in enumerate(lines) if line.startswith("def _semaphore_type_"))
    lines[helper + 2] = lines[helper + 2].replace("plgpu.SemaphoreType.REGULAR", "plgpu.SMEM((8,), jnp.float32)")
    edited = "\n".join(lines)
    got = analyze_incremental(project, str(path), edited, min_lines=0)
    assert project.incremental[str(path)].updates == 1
    assert got == analyze(Project(root=str(tmp_path), python=jax_python()), str(path), edited)
    assert "PAL001" in {f.code for f in got}
    [blanked] = analysed
    assert "import os as" not in blanked
    assert "from jax.experimental import pallas as pl\n" in blanked
    assert "from jax.experimental.pallas import mosaic_gpu as plgpu\n" in blanked


_TEXTS = st.text(alphabet="ab\n", max_size=60)


@settings(max_examples=400, deadline=None)
@given(_TEXTS, _TEXTS, st.integers(0, 70), st.integers(0, 70))
def test_the_lines_of_a_big_text_found_on_the_string_equal_its_split(old, new, start, stop):
    """An edit of a big document no longer splits the old and new texts into lists of lines (207k
    strings each for 5 MB, whose freed pages stayed with the server): slices of `_Lines` are the
    split's, and the changed lines found on the strings hold every line that differs."""
    from pallas_lsp.analysis.incremental import _changed_lines, _Lines

    block, _Lines._BLOCK = _Lines._BLOCK, 3  # several blocks in a short text
    try:
        lines, split = _Lines(new), new.split("\n")
        assert len(lines) == len(split) and list(lines) == split and lines == split and lines == _Lines(new)
        assert lines[start:stop] == split[start:stop] and lines[start:] == split[start:]
        assert lines.joined(start, stop) == "\n".join(split[start:stop])
        sizes = [start % 4, stop % 5, len(split)]
        cuts = [0, *accumulate(sizes)]
        assert list(lines.runs(sizes)) == ["\n".join(split[cuts[k]:cuts[k + 1]]) for k in range(3)]
        if start < len(split):
            assert lines[start] == split[start]
        first, old_end = _changed_lines(_Lines(old), lines)
        exact_first, exact_end = _changed_lines(old.split("\n"), split)
        assert exact_first - 1 <= first <= exact_first and exact_end <= old_end <= exact_end + 1 or old == new
        old_split = old.split("\n")
        delta = len(split) - len(old_split)
        assert old_split[:first] == split[:first] and old_split[old_end:] == split[old_end + delta:]
        assert first <= old_end and first <= old_end + delta
    finally:
        _Lines._BLOCK = block


def test_equal_chunks_of_a_document_are_one_object(tmp_path):
    """A 5 MB module importing in every unit kept 30,000 equal import chunks between edits: one now."""
    text = "".join(f"from jax.experimental import pallas as pl\n\n\ndef unit_{i}(x_ref):\n    x_ref[...] = pl.program_id(0)\n\n\n"
                   for i in range(50))
    path = tmp_path / "units.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    analyze_incremental(project, str(path), text, min_lines=0)
    imports = [c for c in project.incremental[str(path)].chunks if c.imports_only]
    assert len(imports) == 50 and len(set(map(id, imports))) == 1
    edited = text.replace("def unit_3(x_ref):\n", "def unit_3(x_ref):\n    y = 1\n")
    project.set_text(str(path), edited)
    assert analyze_incremental(project, str(path), edited, min_lines=0) == analyze(
        Project(root=str(tmp_path), python=jax_python()), str(path), edited)
    assert project.incremental[str(path)].updates == 1
