"""Batch-size sweeps: the report, its charts and its static HTML."""
