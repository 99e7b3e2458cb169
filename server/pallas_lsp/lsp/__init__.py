"""The language server: LSP in and out, over the analysis core. `server.py` says which module
handles which request; nothing is imported here, so `cli.py` reads `serve_options` without pygls."""
