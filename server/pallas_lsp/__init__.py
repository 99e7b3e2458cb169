"""pallas-lsp: catch broken JAX Pallas GPU kernels while they are written."""

__version__ = "0.1.0"

# `[project.urls] Repository` of pyproject.toml (a test keeps them equal). Links that leave the
# machine (SARIF uploaded to code scanning, `--help` of an installed wheel) point here, never into
# site-packages or a checkout the reader does not have.
PROJECT_URL = "https://github.com/pallas-lsp/pallas-lsp"
DOCS_WEB_URL = f"{PROJECT_URL}/blob/main/docs"
