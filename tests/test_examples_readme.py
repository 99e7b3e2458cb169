"""examples/README.md shows what the real commands print, so it cannot drift from them; and the
examples are what the page says: one per rule that produces exactly its rule's finding, correct
look-alikes with none, and real JAX failing on every line pallas-lsp reports and nowhere else.

Each block that starts with `$ COMMAND` is the output of that command, run here from the
repository root (with this checkout's server on PYTHONPATH), with `(exit status N)` after it when
N is not 0. The test runs each one and compares. To rewrite the blocks after a deliberate change:
`PALLAS_LSP_REFRESH_DOCS=1 .venvs/dev/bin/python -m pytest tests/test_examples_readme.py`.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess

import pytest

from conftest import REPO
from pallas_lsp.rules import RULES

README = REPO / "examples" / "README.md"
BLOCK = re.compile(r"```text\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)

pytestmark = pytest.mark.jax


@functools.lru_cache(maxsize=None)
def run(command: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    done = subprocess.run(command, shell=True, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout if done.stdout.endswith("\n") or not done.stdout else done.stdout + "\n"
    return output + (f"(exit status {done.returncode})\n" if done.returncode else "")


@pytest.mark.timeout(900)
def test_examples_readme_shows_what_the_commands_print():
    text = README.read_text()
    blocks = list(BLOCK.finditer(text))
    assert len(blocks) == 3, "expected the pallas-lsp block, the JAX block and the check --trace block"
    fresh = BLOCK.sub(lambda m: f"```text\n$ {m['command']}\n{run(m['command'])}```", text)
    if os.environ.get("PALLAS_LSP_REFRESH_DOCS"):
        README.write_text(fresh)
        text = fresh
    assert fresh == text, "examples/README.md differs from what its commands print (see this module's docstring)"
    assert str(REPO) not in text and "/work/" not in text, "no absolute paths of one machine"


def _block(command_start: str) -> list[str]:
    (command,) = [m["command"] for m in BLOCK.finditer(README.read_text()) if m["command"].startswith(command_start)]
    return run(command).splitlines()


EXAMPLES = sorted(path.name for path in (REPO / "examples" / "kernels").glob("*.py"))


@pytest.mark.timeout(900)
def test_each_example_gets_exactly_its_rules_finding_and_every_rule_has_one():
    found: dict[str, list[tuple[str, int]]] = {name: [] for name in EXAMPLES}
    for line in _block(".venvs/dev/bin/pallas-lsp check --python"):
        match = re.match(r"examples/kernels/([^:]+):(\d+):\d+: (PAL\d{3}) ", line)
        if match:
            found[match[1]].append((match[3], int(match[2])))
    for name, findings in found.items():
        expected = [f"PAL{name[3:6]}"] if name.startswith("pal") else []
        assert [code for code, _ in findings] == expected, name
    assert sorted(name[:6].upper() for name in EXAMPLES if name.startswith("pal")) == [
        rule.CODE for rule in RULES if rule.CODE != "PAL000" and getattr(rule, "STATIC", True)]  # PAL100: JAX says it (--trace)
    assert all(re.fullmatch(r"(pal\d{3}|good)_[a-z0-9_]+\.py", name) for name in EXAMPLES)
    assert all(f"`{name}`" in README.read_text() for name in EXAMPLES)  # the table lists each


@pytest.mark.timeout(900)
def test_jax_fails_where_pallas_lsp_reports_and_accepts_the_rest():
    reported = sorted((m[1], int(m[2])) for line in _block(".venvs/dev/bin/pallas-lsp check --python")
                      if (m := re.match(r"examples/kernels/([^:]+):(\d+):\d+: PAL", line)))
    blamed, accepted = [], []
    for line in _block(".venvs/jax/bin/python tests/jax_truth.py"):
        ok = re.match(r"examples/kernels/([^:]+): ok ", line)
        failed = re.match(r"examples/kernels/([^:]+):(\d+): ", line)
        if ok:
            accepted.append(ok[1])
        else:
            assert failed, line
            blamed.append((failed[1], int(failed[2])))
    assert sorted(blamed) == reported
    assert sorted(accepted) == [name for name in EXAMPLES if name.startswith("good_")]


@pytest.mark.timeout(900)
def test_check_trace_on_the_in_the_loop_example_confirms_pal001_and_reports_jax_s_shape_error():
    kernels = (REPO / "examples" / "in_the_loop" / "kernels.py").read_text().splitlines()
    staged = next(n for n, line in enumerate(kernels, 1) if "pl.get_global(plgpu.SMEM" in line)
    widened = next(n for n, line in enumerate(kernels, 1) if "jnp.ones((x.shape[0] // 2,)" in line)
    found = [(m[1], int(m[2]), m[3]) for line in _block(".venvs/dev/bin/pallas-lsp check --trace")
             if (m := re.match(r"examples/in_the_loop/([^:]+):(\d+):\d+: (PAL\d{3}) ", line))]
    tpu = (REPO / "examples" / "in_the_loop" / "tpu" / "tpu_kernels.py").read_text().splitlines()
    counted = next(n for n, line in enumerate(tpu, 1) if "pl.get_global(pltpu" in line)
    assert found == [("kernels.py", staged, "PAL001"), ("kernels.py", widened, "PAL100"),
                     ("tpu/tpu_kernels.py", counted, "PAL003")]
    shown = _block(".venvs/dev/bin/pallas-lsp check --trace")
    assert "(confirmed by JAX)" in shown[0] and "(confirmed by JAX)" in shown[2]
