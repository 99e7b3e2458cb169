"""Fixed code a person would keep: lines a fix made too long are broken in the file's own style at
the project's line length; lines the fix did not touch stay as they are."""

from __future__ import annotations

from pallas_lsp.fixes.layout import indent_unit, line_length, style_of, wrap_long_lines

OLD = '    return plgpu.kernel(body, out_type=X), (X,), "cuda"\n'
NEW = '    return functools.partial(plgpu.kernel(body, out_type=X), jnp.zeros((128,), jnp.float32)), (X,), "cuda"\n'


def test_black_style_breaks_after_the_bracket():
    assert wrap_long_lines(OLD, NEW, 88, "hanging") == (
        "    return functools.partial(\n"
        "        plgpu.kernel(body, out_type=X), jnp.zeros((128,), jnp.float32)\n"
        '    ), (X,), "cuda"\n')


def test_one_argument_a_line_with_a_trailing_comma_when_they_do_not_fit_on_one():
    new = "    fn = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), scratch_shapes=[SEM])\n"
    assert wrap_long_lines("", new, 70, "hanging") == (
        "    fn = pl.pallas_call(\n"
        "        body,\n"
        "        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),\n"
        "        scratch_shapes=[SEM],\n"
        "    )\n")


def test_aligned_style_continues_under_the_opening_bracket():
    assert wrap_long_lines(OLD, NEW, 88, "aligned") == (
        "    return functools.partial(plgpu.kernel(body, out_type=X),\n"
        '                             jnp.zeros((128,), jnp.float32)), (X,), "cuda"\n')


def test_lines_the_fix_did_not_make_long_and_lines_with_comments_stay():
    long_line = "    x = f(" + ", ".join(f"a{i}" for i in range(40)) + ")\n"
    assert wrap_long_lines(long_line, long_line, 88, "hanging") == long_line
    commented = long_line.rstrip("\n") + "  # keep me\n"
    assert wrap_long_lines("", commented, 88, "hanging") == commented


def test_the_file_decides_style_indent_and_line_length(tmp_path):
    aligned = "x = call(a, b,\n         c)\ny = call(d,\n         e)\n"
    black = "def f():\n    x = call(\n        a,\n    )\n"
    assert (style_of(aligned), style_of(black), style_of("x = 1\n")) == ("aligned", "hanging", "hanging")
    assert (indent_unit("def f():\n  return 1\n"), indent_unit(black)) == ("  ", "    ")
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert line_length(str(tmp_path / "kernel.py")) == 100
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n[tool.black]\nline-length = 100\n")
    assert line_length(str(tmp_path / "sub" / "kernel.py")) == 120


def test_black_style_splits_the_last_bracket_when_none_has_commas():
    new = '    done = pl.get_global(plgpu.SemaphoreType.REGULAR((2,))).at[jax.lax.axis_index("rows")]\n'
    assert wrap_long_lines("", new, 88, "hanging") == (
        "    done = pl.get_global(plgpu.SemaphoreType.REGULAR((2,))).at[\n"
        '        jax.lax.axis_index("rows")\n'
        "    ]\n")
    assert wrap_long_lines("", new, 88, "aligned") == new  # JAX's style has no such break: the line stays


def test_a_line_inside_a_call_opened_above_breaks_at_its_own_commas():
    new = ("  copies = [\n"
           "      pltpu.make_async_copy(\n"
           "          w_hbm.at[pl.ds(h * HALF, HALF)], w_vmem.at[pl.ds(h * HALF, HALF)], copy_sems.at[h]\n"
           "      )\n"
           "      for h in range(2)\n"
           "  ]\n")
    assert wrap_long_lines("", new, 88, "hanging") == new.replace(
        "HALF)], copy_sems.at[h]\n", "HALF)],\n          copy_sems.at[h]\n")


def test_a_line_of_a_triple_quoted_string_is_never_broken():
    new = ('  doc = f(\n      """\n      a string line, with commas, long enough to go over the limit of this test: '
           'abcdefghij, klmnop\n      """, x)\n')
    assert wrap_long_lines("", new, 60, "hanging") == new


def test_a_line_inside_a_call_ending_in_a_comma_breaks_inside_its_own_bracket():
    new = ("  return pl.pallas_call(\n"
           "      body, out_shape=X,\n"
           "      scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],\n"
           "  )\n")
    assert wrap_long_lines("", new, 88, "hanging") == new.replace(
        "scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],\n",
        "scratch_shapes=[\n          pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))\n      ],\n")
