"""`check --fix` crash figures for docs/reliability.md: a process rewrites a file back and forth with
`write_fixed_file` (what `--fix` writes with) and is killed with SIGKILL at a random moment; the
file must always be exactly the old or the new text. Prints the counts as JSON.

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/reliability_kill_fix_writes.py 200
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = Path(__file__).resolve().parents[1] / "tests" / "fixes" / "golden" / "scratch_list_plgpu_smem"
WRITER = """\
import sys
from pallas_lsp.fixes.write_back import write_fixed_file
path, texts = sys.argv[1], [open(sys.argv[2]).read(), open(sys.argv[3]).read()]
current = 0
while True:
    assert write_fixed_file(path, texts[current], texts[1 - current]) is None
    current = 1 - current
    print("wrote", flush=True)
"""


def kill_rewrites(kills: int, seed: int = 13) -> dict:
    """Counts of what the file held after each kill: "old", "new", "other" (must stay 0)."""
    old, new = (CASE / "before.py").read_text() * 400, (CASE / "after.py").read_text() * 400  # ~0.3 MB
    rng = random.Random(seed)
    counts = {"kills": kills, "old": 0, "new": 0, "other": 0, "temporary_files_left": 0}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "old.txt").write_text(old)
        (folder / "new.txt").write_text(new)
        path = folder / "kernel.py"
        for _ in range(kills):
            path.write_text(old)
            child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(folder / "old.txt"),
                                      str(folder / "new.txt")], stdout=subprocess.PIPE, env=env)
            for _ in range(rng.randint(1, 5)):
                assert child.stdout.readline() == b"wrote\n"
            for _ in range(rng.randint(0, 200_000)):  # a random moment inside a later write
                pass
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
            text = path.read_text()
            counts["old" if text == old else "new" if text == new else "other"] += 1
            for leftover in folder.glob("*.pallas-lsp-tmp"):  # a killed process cannot clean up
                counts["temporary_files_left"] += 1
                leftover.unlink()
    return counts


if __name__ == "__main__":
    print(json.dumps(kill_rewrites(int(sys.argv[1]) if len(sys.argv) > 1 else 100)))
