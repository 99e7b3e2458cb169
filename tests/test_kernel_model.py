"""The kernel model: backend per entry point (with the `platform` setting and the analysed jax version),
grid/cluster/thread axes, get_global sites and their uses, and the jax version read from metadata."""

import ast
import subprocess
import sys

import pytest

from conftest import REPO, at
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.analysis.jax_version import jax_version, parse_version, version_from_metadata
from pallas_lsp.analysis.kernel_model import (
    INTERPRET, MOSAIC_GPU, MOSAIC_GPU_WARP, SC_VECTOR, TPU_TC, TRITON, UNKNOWN_BACKEND, kernel_models)
from pallas_lsp.config import ConfigError, load_settings

HEADER = """\
import os
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc
from jax.experimental.pallas import triton as pltriton

def body(x_ref, o_ref):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)

"""


def models(ws, source, platform=None, version=...):
    """Kernel models of `source`; `version` stands in for the environment's jax (None: no jax found)."""
    path = ws.write("kernel.py", source)
    project = Project(root=str(ws.root), python=ws.python, platform=platform)
    if version is not ...:
        project._jax_version = version
    return project, kernel_models(project, project.model(str(path)))


@pytest.mark.parametrize("launch,backend", [
    ("plgpu.kernel(body, out_type=X)", MOSAIC_GPU),
    ("pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=('x',)))", MOSAIC_GPU),
    ("pl.pallas_call(body, out_shape=X)", TRITON),
    ("pl.pallas_call(body, out_shape=X, compiler_params=pltriton.CompilerParams(num_warps=4))", TRITON),
    ("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams())", TPU_TC),
    ("pl.kernel(body, out_type=X, mesh=pltpu.create_tensorcore_mesh('core'))", TPU_TC),
    ("pl.kernel(body, out_type=X, mesh=plsc.VectorSubcoreMesh(core_axis_name='c', subcore_axis_name='s'))", SC_VECTOR),
    ("pl.pallas_call(body, out_shape=X, interpret=True)", INTERPRET),
    ("pl.pallas_call(body, out_shape=X, compiler_params=params)", UNKNOWN_BACKEND),
    # Spelled out in full (after `import jax.experimental.pallas.mosaic_gpu` and so on).
    ("jax.experimental.pallas.mosaic_gpu.kernel(body, out_type=X)", MOSAIC_GPU),
    ("jax.experimental.pallas.kernel(body, out_type=X, mesh=jax.experimental.pallas.mosaic_gpu.Mesh())", MOSAIC_GPU),
    ("pl.pallas_call(body, out_shape=X, compiler_params=jax.experimental.pallas.tpu.CompilerParams())", TPU_TC),
    ("pl.pallas_call(body, out_shape=X, compiler_params=jax.experimental.pallas.triton.CompilerParams())", TRITON),
])
def test_backend_of_each_entry_point(ws, launch, backend):
    _, (kernel,) = models(ws, HEADER + f"X = jax.ShapeDtypeStruct((8,), jnp.float32)\nk = {launch}\n")
    assert kernel.backend == backend


@pytest.mark.parametrize("launch,interpreter", [
    ("pl.pallas_call(body, out_shape=X, interpret=True)", "hlo"),
    ("pl.pallas_call(body, out_shape=X, interpret=pltpu.InterpretParams())", "tpu"),
    ("plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())", "gpu"),
    ("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams())", None),
])
def test_which_interpreter_runs_the_kernel(ws, launch, interpreter):
    _, (kernel,) = models(ws, HEADER + f"X = jax.ShapeDtypeStruct((8,), jnp.float32)\nk = {launch}\n")
    assert kernel.interpreter == interpreter


def test_semaphore_ops_reached_through_helpers(ws):
    source = HEADER + ("def wait(s):\n    pl.semaphore_wait(s, decrement=False)\n\n"
                       "def scratch_body(o_ref, s):\n    pl.semaphore_signal(s)\n    wait(s)\n\n"
                       "k = plgpu.kernel(scratch_body, out_type=(), scratch_types=[plgpu.SemaphoreType.REGULAR])\n")
    _, (kernel,) = models(ws, source)
    lines = source.splitlines()
    signal, wait = lines.index("    pl.semaphore_signal(s)") + 1, lines.index("    pl.semaphore_wait(s, decrement=False)") + 1
    assert [(op.kind, op.call.lineno) for op in kernel.semaphore_ops] == [("signal", signal), ("wait", wait)]


def test_dma_copies_their_starts_and_semaphore_arguments(ws):
    source = HEADER + ("def copy_body(x, o, a, b):\n    c = pltpu.make_async_remote_copy(x, o, a[0], b.at[1], device_id=(0,))\n"
                       "    c.start()\n    pltpu.async_copy(x, o, 7)\n\n"
                       "k = pl.pallas_call(copy_body, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), in_specs=[pl.BlockSpec(memory_space=pl.ANY)], "
                       "scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,))])\n")
    _, (kernel,) = models(ws, source)
    line = {text.strip().split("(")[0]: n for n, text in enumerate(source.splitlines(), 1)}
    remote, start, local = line["c = pltpu.make_async_remote_copy"], line["c.start"], line["pltpu.async_copy"]
    assert sorted((copy.call.lineno, [s.lineno for s in copy.starts],
                   [(role, ast.unparse(node), not_ref and (not_ref[0], ast.unparse(not_ref[1])))
                    for role, node, not_ref in copy.semaphores]) for copy in kernel.dma_copies) == [
        (remote, [start], [("dma_src", "a[0]", ("loaded", "a[0]")), ("dma_dst", "b.at[1]", None)]),
        (local, [local], [("dma_dst", "7", ("number", "7"))]),
    ]
    assert [(sem.node.arg, sem.shape, sem.dtype, sem.origin) for sem in kernel.semaphores] == [
        ("a", (2,), "dma_sem", "scratch_shapes[0]"), ("b", (2,), "dma_sem", "scratch_shapes[1]")]


@pytest.mark.parametrize("body,scratch,expected", [
    ("def tpu_body(x, o, a, b):", "pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA((2, 3))", (7, 7)),
    ("def tpu_body(x, o, a):", "pltpu.VMEM((8,), jnp.float32)", (7, 0)),
    ("def tpu_body(x, o, *rest):", "pltpu.SemaphoreType.REGULAR", (7, None)),  # roles not static
])
def test_collective_id_and_the_semaphores_a_tpu_kernel_starts_with(ws, body, scratch, expected):
    source = HEADER + (f"{body}\n    pltpu.get_barrier_semaphore()\n\n"
                       "X = jax.ShapeDtypeStruct((8,), jnp.float32)\n"
                       f"k = pl.pallas_call(tpu_body, out_shape=X, scratch_shapes=[{scratch}], "
                       "compiler_params=pltpu.CompilerParams(collective_id=7))\nk(X)\n")
    _, (kernel,) = models(ws, source)
    assert (kernel.collective_id, kernel.start_semaphores) == expected


def test_warp_mesh_core_map_is_its_own_backend_and_not_part_of_the_outer_kernel(ws):
    source = HEADER + ("def outer(x_ref, o_ref):\n    @pl.core_map(plgpu.WarpMesh(axis_name='w'))\n    def _():\n"
                       "        pl.semaphore_signal(pl.get_global(plgpu.SemaphoreType.REGULAR))\n\n"
                       "k = plgpu.kernel(outer, out_type=(), grid=(2,), grid_names=('x',))\n")
    _, kernels = models(ws, source)
    assert sorted((k.backend, len(k.get_globals)) for k in kernels) == [(MOSAIC_GPU, 0), (MOSAIC_GPU_WARP, 1)]


def test_platform_setting_picks_the_backend_of_a_bare_pallas_call(ws):
    source = HEADER + "k = pl.pallas_call(body, out_shape=())\n"
    for platform, backend, words in (("gpu", TRITON, "Triton lowering"), ("tpu", TPU_TC, "TPU lowering for tc")):
        project, (kernel,) = models(ws, source, platform=platform)
        assert kernel.backend == backend
        (finding,) = analyze(project, str(ws.root / "kernel.py"))
        assert finding.code == "PAL003" and words in finding.message
        assert f'setting platform = "{platform}"' in finding.message


def test_platform_in_pyproject(ws):
    ws.write("pyproject.toml", "[tool.pallas-lsp]\nplatform = \"tpu\"\n")
    assert load_settings(str(ws.root)).platform == "tpu"
    ws.write("pyproject.toml", "[tool.pallas-lsp]\nplatform = \"cuda\"\n")
    with pytest.raises(ConfigError, match="platform must be one of 'gpu', 'tpu'"):
        load_settings(str(ws.root))


def test_platform_reaches_check_from_pyproject(ws):
    ws.write("pyproject.toml", "[tool.pallas-lsp]\nplatform = \"tpu\"\n")
    ws.write("kernel.py", HEADER + "k = pl.pallas_call(body, out_shape=())\n")
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", ws.python, "kernel.py"],
                         capture_output=True, text=True, cwd=ws.root, timeout=300)
    assert "Pallas TPU lowering for tc: get_global" in run.stdout and run.returncode == 1


@pytest.mark.parametrize("version,backend", [((0, 11, 1), MOSAIC_GPU), ((0, 11, 2), UNKNOWN_BACKEND),
                                             ((0, 12, 0, 1), UNKNOWN_BACKEND)])
def test_mosaic_gpu_compiler_params_on_pallas_call_follow_the_jax_version(ws, version, backend):
    source = HEADER + "k = pl.pallas_call(body, out_shape=(), compiler_params=plgpu.CompilerParams())\n"
    _, (kernel,) = models(ws, source, version=version)
    assert kernel.backend == backend


@pytest.mark.parametrize("version,backend", [((0, 10, 2), MOSAIC_GPU), ((0, 11, 1), MOSAIC_GPU),
                                             ((0, 11, 2), TRITON), ((0, 12, 0, 1), TRITON), (None, TRITON)])
def test_bare_gpu_pallas_call_follows_the_jax_version(ws, version, backend):
    """Before 0.11.2 jax_pallas_use_mosaic_gpu defaulted to True: a bare GPU pallas_call was Mosaic GPU."""
    source = HEADER + "k = pl.pallas_call(body, out_shape=())\n"
    project, (kernel,) = models(ws, source, version=version)
    assert kernel.backend == backend
    assert [f.code for f in analyze(project, str(ws.root / "kernel.py"))] == ([] if backend == MOSAIC_GPU else ["PAL003"])


def test_axes(ws):
    source = HEADER + ("a = plgpu.kernel(body, out_type=(), grid=(2, 3), grid_names=('x', 'y'), num_threads=2, "
                       "thread_name='wg')\nb = plgpu.kernel(body, out_type=(), cluster=(2,), cluster_names=('c',))\n"
                       "c = plgpu.kernel(body, out_type=(), grid=g)\n")
    _, (a, b, c) = models(ws, source)
    assert (a.grid_axes, a.cluster_axes, a.thread_axes) == (("x", "y"), (), ("wg",))
    assert (b.grid_axes, b.cluster_axes, b.thread_axes) == ((), ("c",), ())
    assert c.grid_axes is None


@pytest.mark.parametrize("imports,spelling", [
    ("", "pl.run_scoped"),
    ("from jax.experimental.pallas import run_scoped\n", "run_scoped"),
    ("from jax.experimental.pallas import run_scoped as rs\n", "rs"),
    ("scoped = pl.run_scoped\n", "scoped"),
])
def test_run_scoped_is_resolved_through_aliases(ws, imports, spelling):
    source = HEADER + imports + (
        "def grid_body(x_ref, o_ref):\n    def exchange(sem):\n        pl.semaphore_signal(sem)\n"
        f"    {spelling}(exchange, plgpu.SemaphoreType.REGULAR, collective_axes='x')\n\n"
        "k = plgpu.kernel(grid_body, out_type=(), grid=(2,), grid_names=('x',))\n")
    project, (kernel,) = models(ws, source)
    assert [(s.call.func.id if spelling != "pl.run_scoped" else "pl.run_scoped", s.collective_axes)
            for s in kernel.run_scoped] == [(spelling, ("x",))]
    assert [(f.code, f.span.line + 1) for f in analyze(project, str(ws.root / "kernel.py"))] == [
        ("PAL007", source.count("\n", 0, source.index(f"    {spelling}(")) + 1)]


def test_a_call_named_run_scoped_that_is_not_jax_s_is_not_a_run_scoped(ws):
    source = HEADER + (
        "def run_scoped(f, *types, collective_axes=()):\n    return f(None)\n\n"
        "def grid_body(x_ref, o_ref):\n    run_scoped(lambda s: None, plgpu.SemaphoreType.REGULAR, collective_axes='x')\n\n"
        "k = plgpu.kernel(grid_body, out_type=(), grid=(2,), grid_names=('x',))\n")
    project, (kernel,) = models(ws, source)
    assert kernel.run_scoped == []


def test_uses_follow_names_indices_and_helpers(ws):
    source = HEADER + ("def wait(s):\n    pl.semaphore_wait(s)\n\n"
                       "def shaped(x_ref, o_ref):\n    flags = pl.get_global(plgpu.SemaphoreType.REGULAR((2, 2)))\n"
                       "    row = flags.at[0]\n    wait(row.at[1])\n    n = pl.semaphore_read(flags)\n\n"
                       "k = plgpu.kernel(shaped, out_type=())\n")
    _, (kernel,) = models(ws, source)
    (site,) = kernel.get_globals
    assert [(u.kind, u.indices, u.live) for u in site.uses] == [("wait", 2, True), ("read", 0, False)]


def test_jax_version_from_the_environments_metadata(ws, jax_env):
    project = Project(root=str(ws.root), python=jax_env)
    assert jax_version(project) == (0, 12, 0, 1)
    assert jax_version(Project(root=str(ws.root), python=sys.executable)) is None  # the dev venv has no jax


def test_version_parsing(tmp_path):
    assert parse_version("0.11.2") == (0, 11, 2) and parse_version("0.10.0rc1") == (0, 10, 0)
    metadata = tmp_path / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: jax\nVersion: 0.9.2\n\nVersion: 9.9\n")
    assert version_from_metadata(str(metadata)) == (0, 9, 2)
