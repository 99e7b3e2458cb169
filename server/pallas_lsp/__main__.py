"""`python -m pallas_lsp`.

For `-m`, Python puts the working folder first on `sys.path`. Run inside a repository being checked,
that folder's `struct.py` or `json.py` would be imported by the checker itself and run its code, so
the working folder is dropped unless pallas_lsp itself was found there (a source checkout's `server/`).
"""

import os
import sys


def _drop_the_working_folder() -> None:
    if not sys.path or getattr(sys.flags, "safe_path", False):
        return
    first = os.path.realpath(sys.path[0] or os.curdir)
    found_in = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if first == os.path.realpath(os.curdir) and first != found_in:
        del sys.path[0]


_drop_the_working_folder()

from pallas_lsp.cli import main  # noqa: E402  (after the path is safe)

raise SystemExit(main())
