"""The message an editor without a report view gets when a trace's arguments are not known suggests
one argument per parameter of the traced function, from the file's own shapes where it has them."""

from pallas_lsp.lsp.trace_command import trace_result_message


def _asks(tmp_path, source: str, function: str) -> str:
    path = tmp_path / "k.py"
    path.write_text(source)
    result = {"ok": False, "path": str(path), "error": {"type": "ArgsNotFound", "stage": "args", "message": "?"}}
    return trace_result_message(result, function, 3).message


def test_one_placeholder_per_parameter_where_the_file_has_no_shapes(tmp_path):
    message = _asks(tmp_path, "def add(x, y, z):\n    return x + y + z\n", "add")
    assert "'# pallas-lsp: trace(f32[128,128], f32[128,128], f32[128,128])' above line 4" in message


def test_the_files_own_shapes_where_it_has_them(tmp_path):
    source = "import jax.numpy as jnp\n\nX = jnp.ones((8, 256), jnp.bfloat16)\n\n\ndef add(x):\n    return x + 1\n"
    assert "trace(bf16[8,256])" in _asks(tmp_path, source, "add")
