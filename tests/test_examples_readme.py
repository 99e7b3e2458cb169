"""examples/README.md shows what the real commands print, so it cannot drift from them.

Each block that starts with `$ COMMAND` is the output of that command, run here from the
repository root (with this checkout's server on PYTHONPATH), with `(exit status N)` after it when
N is not 0. The test runs each one and compares. To rewrite the blocks after a deliberate change:
`PALLAS_LSP_REFRESH_DOCS=1 .venvs/dev/bin/python -m pytest tests/test_examples_readme.py`.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from conftest import REPO

README = REPO / "examples" / "README.md"
BLOCK = re.compile(r"```text\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)

pytestmark = pytest.mark.jax


def run(command: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    done = subprocess.run(command, shell=True, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout if done.stdout.endswith("\n") or not done.stdout else done.stdout + "\n"
    return output + (f"(exit status {done.returncode})\n" if done.returncode else "")


@pytest.mark.timeout(900)
def test_examples_readme_shows_what_the_commands_print():
    text = README.read_text()
    blocks = list(BLOCK.finditer(text))
    assert len(blocks) == 2, "expected the pallas-lsp block and the JAX block"
    fresh = BLOCK.sub(lambda m: f"```text\n$ {m['command']}\n{run(m['command'])}```", text)
    if os.environ.get("PALLAS_LSP_REFRESH_DOCS"):
        README.write_text(fresh)
        text = fresh
    assert fresh == text, "examples/README.md differs from what its commands print (see this module's docstring)"
    assert str(REPO) not in text and "/work/" not in text, "no absolute paths of one machine"
