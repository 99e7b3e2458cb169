"""Every kernel parameter of the corpus (tests/fixtures/kernel_types) hovers with JAX's own type.

JAX's side: tests/jax_kernel_types.py traces each file's own launches (`__main__`, test functions)
with `jax.make_jaxpr` and records the `str(aval)` of every ref the kernel body receives (the
`pallas_call` / `mpmd_map` equation's jaxpr invars, scratch in the nested `run_scoped`). Our side:
the hover on that parameter. bench/kernel_types.py reports the same comparison as counts.
"""

import os
import sys

import pytest

from conftest import REPO, jax_python

sys.path.insert(0, str(REPO / "bench"))

from kernel_types import CORPUS, compare, counts  # noqa: E402

pytestmark = pytest.mark.jax


@pytest.fixture(scope="module")
def rows():
    return compare([str(p) for p in sorted(CORPUS.glob("*.py"))], jax_python())


def test_jax_traced_every_file_and_every_kind_of_launch(rows):
    files = {row["file"] for row in rows}
    assert files == {p.name for p in CORPUS.glob("*.py")} - {"kt_lib_main.py"}  # it only launches kt_lib_kernels
    assert len(rows) == 108


def test_every_parameter_gets_jaxs_exact_type_and_none_a_wrong_one(rows):
    not_exact = [f"{r['file']}:{r['line']} {r['param']}: JAX {r['jax']}, hover {r['head']} {r['seen']}"
                 for r in rows if not r["exact"]]
    assert not_exact == []
    assert counts(rows)["wrong"] == 0


def test_disagreeing_call_sites_show_question_marks_and_each_call_sites_type(rows):
    x_ref = next(r for r in rows if r["file"] == "two_call_sites.py" and r["param"] == "x_ref")
    assert x_ref["jax"] == ["Ref<default>{float32[256,128]}", "Ref<default>{float32[512,128]}"]
    assert x_ref["hover"] == (
        "```python\nx_ref: Ref<default>{float32[?,128]}\n```\n\n"
        "seen at the call sites: `Ref<default>{float32[256,128]}` (line 16), `Ref<default>{float32[512,128]}` (line 17)"
        "\n\n- kernel input from `operand 0` of `pl.pallas_call` (line 12)")


def test_a_body_launched_from_the_module_importing_it_gets_that_call_sites_types(rows):
    relu = {r["param"]: r["hover"].split("\n")[1] for r in rows if r["file"] == "kt_lib_kernels.py"}
    assert relu == {"x_ref": "x_ref: Ref<default>{bfloat16[16,96]}", "o_ref": "o_ref: Ref<default>{bfloat16[16,96]}"}


def test_inlay_hints_are_short_and_name_the_memory_space_only_where_it_is_not_default():
    from pallas_lsp.analysis import Project
    from pallas_lsp.analysis.hover import inlay_hints

    project = Project(root=str(CORPUS), python=jax_python())
    labels, tooltips = {}, {}
    for name in ("whole_array_smem.py", "two_call_sites.py", "matmul_tiled.py", "gpu_kernel_decorator.py"):
        path = os.path.join(CORPUS, name)
        text = open(path).read()
        found = inlay_hints(project, path, text, 0, 1000)
        labels[name] = [label for _, _, label, _ in found]
        tooltips[name] = [tooltip for _, _, _, tooltip in found]
    assert labels == {
        "whole_array_smem.py": [": f32[1] smem", ": f32[8,128] any", ": f32[8,128] vmem", ": f32[8,128] vmem",
                                ": f32[8,128] vmem", ": dma_sem[] semaphore_mem"],
        "two_call_sites.py": [": f32[?,128]", ": f32[?,128]"],
        "matmul_tiled.py": [": bf16[128,256]", ": bf16[256,128]", ": bf16[128,128]", ": f32[128,128] vmem"],
        "gpu_kernel_decorator.py": [": f32[4096] gmem", ": f32[4096] gmem", ": f32[256] smem", ": barrier[] smem"],
    }
    assert tooltips["two_call_sites.py"][0] == (
        "Ref<default>{float32[?,128]}: kernel input from `operand 0` of `pl.pallas_call` (line 12)\n"
        "  Ref<default>{float32[256,128]} from the call at line 16\n"
        "  Ref<default>{float32[512,128]} from the call at line 17")


SHIPPED = ("gpu/softmax.py", "gpu/layer_norm.py", "gpu/rms_norm.py", "tpu/matmul.py", "tpu/example_kernel.py")
DRIVER = '''\
"""Calls jax's shipped kernels (copied here) with arrays, as a user's script would."""
import jax.numpy as jnp

import example_kernel
import layer_norm
import matmul
import rms_norm
import softmax

if __name__ == "__main__":
    w, b = jnp.ones((1024,)), jnp.zeros((1024,))
    softmax.softmax(jnp.ones((8, 1024), jnp.float32))
    layer_norm.layer_norm(jnp.ones((4, 8, 1024)), w, b)
    rms_norm.rms_norm(jnp.ones((4, 8, 1024)), w, b)
    matmul.matmul(jnp.ones((512, 1024), jnp.bfloat16), jnp.ones((1024, 256), jnp.bfloat16), block_shape=(128, 128))
    example_kernel.double(jnp.ones((16, 128)))
'''


def test_kernels_jax_ships_called_from_a_script_get_no_wrong_type(tmp_path):
    """Kernels not written for this corpus: jax's own ops (vmapped launches, dtypes chosen in branches)."""
    import shutil

    from lsp_client import jax_package_dir

    ops = jax_package_dir(jax_python()) / "experimental" / "pallas" / "ops"
    for name in SHIPPED:
        shutil.copy(ops / name, tmp_path)
    (tmp_path / "drive.py").write_text(DRIVER)
    rows = compare([str(tmp_path / "drive.py")], jax_python(), root=tmp_path)
    assert len(rows) == 16
    assert [f"{r['file']}:{r['param']}: {r['head']}" for r in rows if r["wrong"]] == []
    # A dtype chosen in a branch (`acc_dtype = jnp.float32; if x.dtype in [jnp.int8, ...]: acc_dtype = jnp.int32`,
    # `if out_dtype is None: out_dtype = x.dtype`) follows the call site's arrays; the norms' launches under
    # `jax.vmap(jax.vmap(method, in_axes=(0, None, None)), ...)` take the mapped axes off; softmax's input, vmapped
    # in a loop (`for _ in range(len(x.shape) - 1): f = jax.vmap(f)`), stays unknown.
    assert sorted((r["file"], r["param"]) for r in rows if r["exact"]) == [
        ("example_kernel.py", "x_ref"), ("example_kernel.py", "y_ref"),
        *(("layer_norm.py", p) for p in ("bias_ref", "o_ref", "weight_ref", "x_ref")),
        ("matmul.py", "acc_ref"), ("matmul.py", "o_tile_ref"), ("matmul.py", "x_tile_ref"), ("matmul.py", "y_tile_ref"),
        *(("rms_norm.py", p) for p in ("bias_ref", "o_ref", "weight_ref", "x_ref")), ("softmax.py", "probs_ref")]
    acc = next(r for r in rows if r["param"] == "acc_ref")
    assert (acc["jax"], acc["head"]) == (["Ref<vmem>{float32[128,128]}"], "Ref<vmem>{float32[128,128]}")


def test_types_trace_gives_jaxs_types_of_a_kernel_over_a_tpu_mesh(tmp_path):
    """`pl.kernel` over a TPU TensorCore mesh: JAX passes the body its refs directly (its scratch among
    them; a `pl.run_scoped` in the body is the body's own), unlike `plgpu.kernel`'s wrapper."""
    import json
    import shutil
    import subprocess

    shutil.copy(CORPUS / "tpu_kernel_mesh.py", tmp_path)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "types", "--trace", "--format", "json", "--python",
                          jax_python(), str(tmp_path / "tpu_kernel_mesh.py")], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(REPO / "server")}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["parameter"]: (r["type"], r["source"]) for r in json.loads(run.stdout)}
    assert rows == {"x_hbm": ("Ref<any>{float32[128,256]}", "traced"), "o_hbm": ("Ref<any>{float32[128,256]}", "traced"),
                    "staging": ("Ref<vmem>{float32[128,256]}", "traced")}


VARARGS_KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def add_kernel(*refs):
  x_ref, y_ref, o_ref = refs
  o_ref[...] = x_ref[...] + y_ref[...]


def add(x, y):
  return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x, y)


if __name__ == "__main__":
  add(jnp.ones((8, 128), jnp.float32), jnp.ones((8, 128), jnp.float32))
'''


def test_types_trace_gives_each_ref_of_a_body_taking_star_refs(tmp_path):
    """A body taking `*refs` (flywheel-tpu's flash attention, jax's own TPU flash attention): JAX names its
    refs `refs[0]`, `refs[1]`, ...; `types --trace` gives each, as JAX traced it, and `types` as inferred."""
    import json
    import subprocess

    from kernel_types import jax_types

    path = tmp_path / "star_refs.py"
    path.write_text(VARARGS_KERNEL)
    truth = jax_types([str(path)], jax_python())["types"][str(path)]["6"]
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "types", "--trace", "--format", "json", "--python",
                          jax_python(), str(path)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(REPO / "server")}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    traced = {r["parameter"]: [r["type"]] for r in json.loads(run.stdout) if r["source"] == "traced"}
    assert traced == truth == {f"refs[{i}]": ["Ref<default>{float32[8,128]}"] for i in range(3)}
    # Statically too: the operands, then the output, each a ref of `*refs` as JAX names it.
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "types", "--format", "json", "--python", jax_python(),
                          str(path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO / "server")}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {r["parameter"]: [r["type"]] for r in json.loads(run.stdout) if r["source"] == "inferred"} == truth


HBM_OPERAND = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import AbstractDevice, AbstractMesh


def copy_kernel(x_hbm, y_any, o_hbm):
  pltpu.sync_copy(x_hbm, o_hbm)


def copy(x):
  pinned = pltpu.with_memory_space_constraint(x, memory_space=pltpu.HBM)
  mesh = pltpu.create_tensorcore_mesh("core")
  return pl.kernel(copy_kernel, out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32), mesh=mesh)(
      pinned, jnp.zeros((8, 128), jnp.float32))


def test_pinned():
  x = jnp.ones((8, 128), jnp.float32)
  with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_device",), abstract_device=AbstractDevice(
      device_kind="TPU v6 lite", num_cores=1, platform="tpu"))):
    copy(x)
'''


def test_an_operand_pinned_to_a_memory_space_keeps_it_unknown_never_any(tmp_path):
    """tokamax's loss kernel pins its operands to HBM (`pltpu.with_memory_space_constraint`) before a
    `pl.kernel` over a TPU mesh: JAX gives the body `Ref<hbm>`, not the mesh's default `any`."""
    path = tmp_path / "pinned.py"
    path.write_text(HBM_OPERAND)
    rows = {r["param"]: r for r in compare([str(path)], jax_python(), root=tmp_path)}
    assert {name: r["jax"] for name, r in rows.items()} == {
        "x_hbm": ["Ref<hbm>{float32[8,128]}"], "y_any": ["Ref<any>{float32[8,128]}"], "o_hbm": ["Ref<any>{float32[8,128]}"]}
    assert [name for name, r in rows.items() if r["wrong"]] == []
    assert rows["y_any"]["exact"] and rows["o_hbm"]["exact"]
    assert rows["x_hbm"]["head"].startswith("Ref<?>")
