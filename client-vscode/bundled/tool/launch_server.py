"""Starts the bundled pallas-lsp server on whatever Python the user picked.

The extension ships the server and its libraries under bundled/libs (like ruff-vscode and
Microsoft's Python tool extensions), so the user's environment needs nothing installed: this
script puts them first on sys.path and serves LSP on stdio. Libraries with compiled parts
(libcst) come in one folder per Python minor version, bundled/libs/cp3XX; the rest in common/.
Nothing is printed to stdout: it is the LSP channel.
"""
import os
import sys

MIN_PYTHON = (3, 10)

if sys.version_info < MIN_PYTHON:
    sys.stderr.write("pallas-lsp needs Python %d.%d or newer; this is %s\n" % (MIN_PYTHON + (sys.version.split()[0],)))
    sys.exit(3)

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
VERSIONED = os.path.join(LIBS, "cp%d%d" % sys.version_info[:2])
if not os.path.isdir(VERSIONED):
    shipped = sorted(name for name in os.listdir(LIBS) if name.startswith("cp")) if os.path.isdir(LIBS) else []
    sys.stderr.write("pallas-lsp: this extension build carries no libraries for Python %d.%d (it has: %s)\n"
                     % (sys.version_info[:2] + (", ".join(shipped) or "none",)))
    sys.exit(4)
sys.path[0:0] = [VERSIONED, os.path.join(LIBS, "common")]

from pallas_lsp.source_text import quiet_compile_warnings  # noqa: E402
from pallas_lsp.lsp.server import main  # noqa: E402

quiet_compile_warnings()  # CPython's SyntaxWarnings for the user's files are not ours to print

sys.exit(main(sys.argv[1:]))
