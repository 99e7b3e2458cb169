"""Where the trace's abstract arguments come from (pure: no jax, nothing executed)."""

import textwrap

import pytest

from pallas_lsp.trace.targets import (ArgSpec, ArgSpecError, ArgsNotFound, TargetNotFound, parse_args, suggest_args,
                                      resolve_args, split_target)


def resolve(source: str, function: str, explicit=None):
    found = resolve_args(textwrap.dedent(source), function, explicit)
    return str(found), found.source


def test_arg_specs_parse_short_and_numpy_dtype_names_and_scalars():
    assert parse_args("f32[128,128], i32[8]") == (ArgSpec("float32", (128, 128)), ArgSpec("int32", (8,)))
    assert parse_args(" bf16[ 4 , 8 ] ,bool[],float16[2]") == (
        ArgSpec("bfloat16", (4, 8)), ArgSpec("bool", ()), ArgSpec("float16", (2,)))
    assert parse_args("") == ()
    assert str(ArgSpec("float32", (128, 128))) == "f32[128,128]"


@pytest.mark.parametrize("text, message", [
    ("f33[8]", "unknown dtype 'f33' in argument 1"),
    ("f32[8], i32[n]", "dimension 'n' of argument 2 is not a whole number"),
    ("f32[8] i32[8]", "expected ',' after argument 1"),
    ("f32", "cannot read argument 1 ('f32')"),
])
def test_bad_arg_specs_say_what_is_wrong(text, message):
    with pytest.raises(ArgSpecError, match=None) as info:
        parse_args(text)
    assert message in str(info.value)


def test_target_is_path_and_function():
    assert split_target("a/b.py::kern") == ("a/b.py", "kern")
    with pytest.raises(ArgSpecError, match="expected PATH::FUNCTION"):
        split_target("a/b.py")


def test_explicit_args_win_over_everything():
    assert resolve("# pallas-lsp: trace(f32[8])\ndef f(x): ...\n", "f", "i8[2]") == ("i8[2]", "--args")


def test_comment_directly_above_the_decorators():
    source = """
    import functools

    # pallas-lsp: trace(f32[128,128], i32[8])
    # (more words are fine)
    @functools.partial(plgpu.kernel, out_type=X)
    def kernel(x_ref, i_ref, o_ref):
        ...
    """
    assert resolve(source, "kernel") == ("f32[128,128], i32[8]", "comment on line 4")


def test_comment_above_a_kernel_object_assignment():
    source = """
    # pallas-lsp: trace(f32[16])
    add = plgpu.kernel(body, out_type=X)
    """
    assert resolve(source, "add") == ("f32[16]", "comment on line 2")


def test_a_broken_comment_is_reported_with_its_line():
    with pytest.raises(ArgSpecError, match=r"line 1: unknown dtype 'float'"):
        resolve("# pallas-lsp: trace(float[8])\ndef f(x): ...\n", "f")


def test_jaxtyping_annotations():
    source = """
    from jaxtyping import Array, Float, Int32
    import jaxtyping as jt

    def f(x: Float[Array, "128 128"], i: "Int32[Array, '8']", s: jt.Bool[jax.Array, ""], scale=2.0):
        ...
    """
    assert resolve(source, "f") == ("f32[128,128], i32[8], bool[]", "annotations")


def test_a_call_in_the_same_file_with_static_shapes():
    source = """
    import jax, jax.numpy as jnp, numpy as np
    N = 64
    X = jax.ShapeDtypeStruct((N * 2,), jnp.float32)

    def f(a, b, c, d, e):
        ...

    def main():
        idx = jnp.arange(8)
        f(X, jnp.zeros((N, 4), dtype=jnp.bfloat16), idx, np.ones(3), jax.random.normal(key, (2, 2)))
    """
    assert resolve(source, "f") == ("f32[128], bf16[64,4], i32[8], f64[3], f32[2,2]", "call on line 11")


def test_a_jitted_call_counts_and_the_first_static_call_wins():
    source = """
    def f(x):
        ...
    f(some_array)
    jax.jit(f)(jnp.ones((4,), "int8"))
    """
    assert resolve(source, "f") == ("i8[4]", "call on line 5")


def test_missing_arguments_say_exactly_what_is_missing():
    source = """
    def f(x: Float[Array, "n 128"], y):
        ...

    f(data, jnp.zeros(3))
    """
    with pytest.raises(ArgsNotFound) as info:
        resolve(source, "f")
    assert str(info.value) == (
        "no arguments to trace f with: no '# pallas-lsp: trace(f32[128,128], f32[128,128])' comment directly above "
        "line 2; "
        "the annotation of parameter 'x' has the symbolic dimension 'n'; "
        "argument 1 of the call on line 5 (data) has no static shape")


def test_suggested_arguments_come_from_module_level_shape_dtype_structs():
    source = """\
import jax
import jax.numpy as jnp
HALF = 128
X = jax.ShapeDtypeStruct((2, HALF), jnp.float32)
IDX = jax.ShapeDtypeStruct((8,), jnp.int32)
OUT = jax.ShapeDtypeStruct((4,), jnp.bfloat16)
k = something(body, out_type=X)

def f(x, idx):
    ...
"""
    assert suggest_args(source, "k") == "f32[2,128], i32[8], bf16[4]"
    assert suggest_args(source, "f") == "f32[2,128], i32[8]"  # as many as f takes
    assert suggest_args("def f(x):\n    ...\n", "f") is None
    # Constants unpacked from a tuple, as examples/kernels/pal001_global_buffer.py writes them.
    assert suggest_args("import jax\nimport jax.numpy as jnp\nROWS, COLS = 4, 128\n"
                        "X = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)\n", "X") == "f32[4,128]"


def test_no_call_and_no_annotation():
    with pytest.raises(ArgsNotFound, match=r"parameter 'x' has no annotation; no call of f\(\.\.\.\) in this file"):
        resolve("def f(x):\n    ...\n", "f")


def test_unknown_function():
    with pytest.raises(TargetNotFound, match="no module-level function or assignment named 'g'"):
        resolve("def f(x):\n    ...\n", "g")
