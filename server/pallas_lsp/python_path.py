"""Where a `python` setting points: a path, a virtual-environment folder, or a bare command name.

Editors pass what the user wrote or a default such as `python3`; a bare name (no path separator)
is a command, looked up on PATH like a shell would, never a file in the server's working folder.
Stdlib only: the analysis (jedi) and the trace runner (no jedi) both use it.
"""

from __future__ import annotations

import os
import shutil


def resolve_python(path: str) -> str:
    """An absolute path for `path`; a bare name not on PATH stays a (missing) path in the cwd."""
    expanded = os.path.expanduser(path)
    if os.sep not in expanded and (os.altsep is None or os.altsep not in expanded):
        found = shutil.which(expanded)
        if found is not None:
            return os.path.abspath(found)
    return os.path.abspath(expanded)
