"""Run comparison: the comparison object and its static HTML."""
