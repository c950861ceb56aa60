"""Spellings every view of everyo shares (text, HTML, the widgets, the CLI), so one thing reads
the same wherever it is shown: see docs/glossary.md."""

NO_VALUE = "–"
"""A cell without a value (a live run's median, a column some rows lack, a sweep point that
failed): an en dash, never ``-``, ``—`` or an empty cell."""
