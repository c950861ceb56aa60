"""Benchmarking: timing, sweeps, regression gates, and the environment record they all store."""

from everyo.bench.environment import environment, format_environment

__all__ = ["environment", "format_environment"]
