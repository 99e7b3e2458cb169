"""Text that came from the repository (settings keys and values, source segments, file names) reaches
notifications and hovers quoted: VS Code renders `[label](command:ID?ARGS)` in a notification as a
link that runs that command, Restricted Mode too, and renders hovers as Markdown. The real server
over stdio, a real pyproject.toml."""

from __future__ import annotations

import re
import textwrap

from conftest import jax_python
from lsp_wire import WireServer

# VS Code's own pattern for links in notification text (src/vs/base/common/linkedText.ts).
VSCODE_LINK = re.compile(r"\[([^\]]+)\]\(((?:https?://|command:|file:)[^\)\s]+)(?: ([\"'])(.+?)(\3))?\)", re.I)
# A Markdown link or autolink anywhere in a hover (outside code, where the hover is well quoted).
MARKDOWN_LINK = re.compile(r"\]\(|<(?:command|https?|file):", re.I)
LINK = "[Open a terminal](command:workbench.action.terminal.new?%5B%5D)"


def _shown_messages(server: WireServer) -> list[str]:
    with server.changed:
        return [m["params"]["message"] for m in server.messages
                if m.get("method") in ("window/showMessage", "window/showMessageRequest")]


def test_a_settings_key_or_code_written_as_a_link_is_shown_as_text(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.pallas-lsp]\n"{LINK}" = 1\n')
    (tmp_path / "k.py").write_text("x = 1\n")
    server = WireServer(cwd=tmp_path)
    try:
        server.initialize(str(tmp_path), python=jax_python(), select=[LINK], ignore=["PAL0\x1b[2J"])
        server.open((tmp_path / "k.py").as_uri(), "x = 1\n")
        server.published((tmp_path / "k.py").as_uri())
        assert server.request(1, "shutdown") is not None
        messages = _shown_messages(server)
        assert len([m for m in messages if "Open a terminal" in m]) == 2  # the key, and the select code
        assert any("PAL0" in m for m in messages)
        for message in messages:
            assert not VSCODE_LINK.search(message), message
            assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", message), message
    finally:
        server.kill()


def test_a_hover_quotes_the_source_it_shows(tmp_path):
    source = textwrap.dedent("""\
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import mosaic_gpu as plgpu

        KINDS = {"`[Open](command:workbench.action.terminal.new)` <command:x> ``": plgpu.SMEM((8,), "float32")}


        def body(o_ref):
            buf = pl.get_global(KINDS["`[Open](command:workbench.action.terminal.new)` <command:x> ``"])
            o_ref[...] = buf[...]
        """)
    path = tmp_path / "k.py"
    path.write_text(source)
    server = WireServer(cwd=tmp_path)
    try:
        server.initialize(str(tmp_path), python=jax_python())
        server.open(path.as_uri(), source)
        server.published(path.as_uri())
        line = source.splitlines().index(next(s for s in source.splitlines() if "get_global" in s))
        answer = server.request(2, "textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                          "position": {"line": line, "character": 16}})
        markdown = answer["result"]["contents"]["value"]
        assert "**pl.get_global** of " in markdown
        outside_code = re.sub(r"(`+)(?:(?!\1).)*?\1", "", markdown.split("\n\n")[0])
        assert not MARKDOWN_LINK.search(outside_code), markdown
    finally:
        server.kill()
