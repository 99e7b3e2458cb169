"""A document's first pass (analysis/first_pass.py): the kernels of the modules importing it are not
modelled; the rules that needed them are left out of its findings, the others' findings are exactly the
whole analysis's, and the whole analysis afterwards finds what a fresh one finds."""

import pytest

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze, analyze_before_importers, analyze_incremental

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""
# `body` signals a semaphore array whole, `barrier` asks get_global for a barrier: reported (PAL005,
# PAL001) only through the kernels launcher.py launches with them (PAL001's search is kept in a memo).
# `copy`, launched here, asks for more shared memory than a block has (PAL012): no importer needed.
HELPERS = HEADER + """

def body(x_ref, o_ref, sems):
    pl.semaphore_signal(sems)


def barrier(x_ref, o_ref):
    s = pl.get_global(plgpu.SemaphoreType.BARRIER)


def own(x_ref, o_ref, buf, bars):
    o_ref[...] = x_ref[...]


copy = plgpu.kernel(own, out_type=X,
                    scratch_types=[plgpu.SMEM((65536,), jnp.float32), plgpu.Barrier(num_arrivals=1, num_barriers=4)])
"""
LAUNCHER = HEADER + """
import helpers


def run(x):
    return plgpu.kernel(helpers.body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])(x)


def wait(x):
    return plgpu.kernel(helpers.barrier, out_type=X)(x)
"""
ALONE = HEADER + """

def alone(x_ref, o_ref, sems):
    pl.semaphore_wait(sems)


def run(x):
    return plgpu.kernel(alone, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((3,))])(x)
"""
FILES = {"helpers.py": HELPERS, "launcher.py": LAUNCHER, "alone.py": ALONE}


@pytest.fixture
def workspace(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _keys(findings):
    return [(f.code, f.span, f.message) for f in findings]


def _whole(workspace, name):
    return _keys(analyze(Project(str(workspace), python=jax_python()), str(workspace / name)))


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_first_pass_finds_a_part_of_the_whole_and_the_analysis_after_it_the_whole(workspace, name):
    project = Project(str(workspace), python=jax_python())
    path, text = str(workspace / name), FILES[name]
    project.set_text(path, text)
    first, complete = analyze_before_importers(project, path, text)
    whole = _whole(workspace, name)
    assert set(_keys(first)) <= set(whole)
    if complete:
        assert _keys(first) == whole
    assert _keys(analyze_incremental(project, path, text)) == whole


def test_the_rules_needing_the_importers_kernels_wait_for_the_whole_analysis(workspace):
    project = Project(str(workspace), python=jax_python())
    path = str(workspace / "helpers.py")
    project.set_text(path, HELPERS)
    first, complete = analyze_before_importers(project, path, HELPERS)
    assert [f.code for f in first] == ["PAL012"] and not complete
    assert "launcher.py" not in {p.rsplit("/", 1)[-1] for p in project._models}
    assert [f.code for f in analyze_incremental(project, path, HELPERS)] == ["PAL005", "PAL001", "PAL012"]


def test_a_module_no_other_imports_is_whole_at_once(workspace):
    project = Project(str(workspace), python=jax_python())
    path = str(workspace / "alone.py")
    project.set_text(path, ALONE)
    first, complete = analyze_before_importers(project, path, ALONE)
    assert complete and [f.code for f in first] == ["PAL005"]
