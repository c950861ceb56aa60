"""Profiler exporters, one module per format."""
