"""Subcommands of ``python -m everyo`` (see everyo/__main__.py)."""
