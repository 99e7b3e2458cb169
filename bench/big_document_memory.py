"""Server memory for one big document: a 5.6 MB module opened, then ten one-character edits.

Prints RSS of the server after initialize (and a small file analysed: the baseline), after the
open and after the tenth edit's diagnostics, and the growth over the baseline as a multiple of the
document's size. `plain` never mentions Pallas; `pallas` imports it in every unit.

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/big_document_memory.py plain|pallas
"""
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_client import JAX_PYTHON, LspClient  # noqa: E402
from server_memory import proc_status  # noqa: E402
kind = sys.argv[1] if len(sys.argv) > 1 else "plain"
d = tempfile.mkdtemp()
unit = "def helper_{i}(x, y):\n    total = x + y * {i}\n    if total > 10:\n        return [total, x, y]\n    return {{'a': x, 'b': y}}\n\n"
if kind == "pallas":
    unit = "from jax.experimental import pallas as pl\n" + unit
i, parts, size = 0, [], 0
while size < 5_600_000:
    u = unit.format(i=i); parts.append(u); size += len(u); i += 1
text = "".join(parts)
path = os.path.join(d, "big.py"); open(path, "w").write(text)
with LspClient() as c:
    c.initialize(d, python=JAX_PYTHON, debounce_ms=0)
    small = os.path.join(d, "small.py"); open(small, "w").write("x = 1\n")
    u0, _ = c.open(small); c.wait_published(u0, 1)
    base = proc_status(c.pid)
    t = time.perf_counter()
    uri, _ = c.open(path); c.wait_published(uri, 1)
    opened = proc_status(c.pid)
    for v in range(2, 12):
        c.change(uri, v, 1, 4, 4, " ")
        c.wait_published(uri, v)
    end = proc_status(c.pid)
shutil.rmtree(d)
print(kind, "size MB", round(len(text)/1e6, 2), "baseline RSS", round(base["VmRSS"]), "after open RSS", round(opened["VmRSS"]), "after 10 edits RSS", round(end["VmRSS"]), "HWM", round(end["VmHWM"]), "over baseline x size", round((end["VmRSS"]-base["VmRSS"])/(len(text)/2**20), 1), "secs", round(time.perf_counter()-t, 1))
