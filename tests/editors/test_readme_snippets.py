"""The README shows the same Neovim, Emacs and JupyterLab configuration that the editor tests run."""

import re

from conftest import REPO


def blocks_marked_tested(text: str) -> dict[str, str]:
    return dict(re.findall(r"<!-- tested: ([a-z-]+) -->\s*```[a-z]*\n(.*?)```", text, re.S))


def test_readme_carries_the_tested_editor_configs_verbatim():
    blocks = blocks_marked_tested((REPO / "docs" / "editors.md").read_text())
    assert set(blocks) == {"neovim", "emacs-eglot", "jupyterlab"}
    readme = (REPO / "README.md").read_text()
    for name, block in blocks.items():
        assert block in readme, f"README.md's {name} snippet differs from docs/editors.md's tested block"
