"""pallas-lsp: catch broken JAX Pallas GPU kernels while they are written."""

__version__ = "0.1.0"
