"""The launches' scratch keywords (analysis.kernel_model.SCRATCH_KEYWORDS) as JAX takes them.

Each launch is built with the table's keyword, run interpreted on the CPU and cross-lowered compiled for
Mosaic GPU; the other keyword is built too, which JAX must refuse. The fixes write `keyword`, the
messages' advice reads `mosaic_gpu_lowers`.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from pallas_lsp.analysis.kernel_model import MOSAIC_GPU_SCRATCH_REFUSAL, SCRATCH_KEYWORDS

LAUNCHES = r'''
import json, sys
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import AbstractDevice, AbstractMesh

keywords = json.loads(sys.argv[1])
out = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ones = lambda: jnp.full((8, 128), 1.0, jnp.float32)

def interpreted_body(o_ref, s):
    s[...] = ones()
    o_ref[...] = s[...]

def mosaic_gpu_body(o_ref, s):
    s[...] = ones()
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(s, o_ref)
    plgpu.wait_smem_to_gmem(0)

def launch(api, keyword, scratch, body, **options):
    if api == "plgpu.kernel":
        return plgpu.kernel(body, out_type=out, **{keyword: scratch}, **options)
    if api == "pl.kernel":
        return pl.kernel(body, out_type=out, mesh=plgpu.Mesh(), **{keyword: scratch}, **options)
    if api == "pl.pallas_call":
        return pl.pallas_call(body, out_shape=out, **{keyword: scratch}, **options)
    def run():  # pl.core_map: its body takes the scratch refs alone
        def stateful(o_ref):
            @pl.core_map(plgpu.Mesh(), **{keyword: scratch}, **options)
            def _(s):
                body(o_ref, s)
        return pl.run_state(stateful)(jnp.zeros((8, 128), jnp.float32))
    return run

def outcome(go):
    try:
        return go()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"

def lowered(build, platform, device=None):
    def go():
        fn = build()
        if device is None:
            jax.jit(fn).trace().lower(lowering_platforms=(platform,))
        else:
            with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_d",), abstract_device=AbstractDevice(
                    device_kind=device[0], num_cores=device[1], platform=device[2]))):
                jax.jit(fn).trace().lower(lowering_platforms=(platform,))
        return "lowered"
    return outcome(go)

smem = [plgpu.SMEM((8, 128), jnp.float32)]
found = {}
for api, keyword in keywords.items():
    other = {"scratch_types": "scratch_shapes", "scratch_shapes": "scratch_types"}[keyword]
    gpu_options = {"compiler_params": plgpu.CompilerParams()} if api == "pl.pallas_call" else {}
    found[api] = {
        "interpret": outcome(lambda: f"ran: {float(jax.jit(launch(api, keyword, smem, interpreted_body, interpret=True))().sum())}"),
        "other keyword": outcome(lambda: jax.jit(launch(api, other, smem, interpreted_body, interpret=True))() and "ran"),
        "mosaic_gpu": lowered(lambda: launch(api, keyword, smem, mosaic_gpu_body, **gpu_options), "cuda"),
    }
    if api == "pl.pallas_call":  # what jax 0.12 compiles a pallas_call with: Triton on a GPU, Mosaic on a TPU
        found[api]["triton"] = lowered(lambda: launch(api, keyword, smem, interpreted_body), "cuda", ("NVIDIA H200", 132, "gpu"))
        found[api]["tpu"] = lowered(lambda: launch(api, keyword, [pltpu.VMEM((8, 128), jnp.float32)], interpreted_body),
                                    "tpu", ("TPU v5 lite", 1, "tpu"))
print(json.dumps(found))
'''


@pytest.mark.jax
def test_each_launch_takes_its_scratch_keyword_and_lowers_it_where_the_table_says(jax_env):
    keywords = {api: entry.keyword for api, entry in SCRATCH_KEYWORDS.items()}
    run = subprocess.run([jax_env, "-c", LAUNCHES, json.dumps(keywords)], capture_output=True, text=True, timeout=600,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.splitlines()[-1])
    ran = "ran: 1024.0"  # the (8, 128) output, every element written from the scratch
    refused = f"NotImplementedError: {MOSAIC_GPU_SCRATCH_REFUSAL}"
    unexpected = "TypeError: {}() got an unexpected keyword argument '{}'"
    assert found == {
        # plgpu.kernel passes keywords it does not know on to its plgpu.Mesh
        "plgpu.kernel": {"interpret": ran, "other keyword": unexpected.format("Mesh.__init__", "scratch_shapes"),
                         "mosaic_gpu": "lowered"},
        "pl.kernel": {"interpret": ran, "other keyword": unexpected.format("kernel", "scratch_shapes"),
                      "mosaic_gpu": refused},
        "pl.core_map": {"interpret": ran, "other keyword": unexpected.format("core_map", "scratch_types"),
                        "mosaic_gpu": refused},
        # jax 0.12 has no Mosaic GPU lowering of a pallas_call (plgpu.CompilerParams registers none), with
        # scratch or without; Triton lowers no scratch; a TPU pallas_call lowers its scratch_shapes.
        "pl.pallas_call": {"interpret": ran, "other keyword": unexpected.format("pallas_call", "scratch_types"),
                           "mosaic_gpu": "AssertionError: ",
                           "triton": "NotImplementedError: scratch memory not implemented in the Triton backend",
                           "tpu": "lowered"},
    }
    for api, entry in SCRATCH_KEYWORDS.items():  # the table's second column, where jax 0.12 can tell
        if found[api]["mosaic_gpu"] in ("lowered", refused):
            assert entry.mosaic_gpu_lowers == (found[api]["mosaic_gpu"] == "lowered"), api
