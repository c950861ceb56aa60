"""The summary table: its columns, cell texts, rows and sort orders (the widget lays out what
they give)."""
