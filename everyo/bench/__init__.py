"""Benchmarking: timing, sweeps, regression gates, and the environment record they all store."""

from everyo.bench.environment import environment, format_environment  # loads the submodule first
from everyo.bench.grid import benchmark_grid
from everyo.bench.precision import PrecisionResult, PrecisionRow, compare_precisions
from everyo.bench.regression import (
    Comparison,
    RegressionCheck,
    check_regression,
    compare,
    regression_verdict,
)
from everyo.bench.result import BenchmarkResult, load
from everyo.bench.stats import ratio_interval, summarize
from everyo.bench.sweep import (
    EveryOBenchmarkWarning,
    SweepResult,
    SweepRow,
    sweep_batch_sizes,
)
from everyo.bench.throughput import TrainingThroughput, measure_training
from everyo.bench.timing import Timer, benchmark

__all__ = ["environment", "format_environment"]
__all__ += ["benchmark_grid"]
__all__ += ["benchmark", "BenchmarkResult", "Timer", "load", "summarize", "ratio_interval"]
__all__ += ["compare", "check_regression", "regression_verdict", "Comparison", "RegressionCheck"]
__all__ += ["sweep_batch_sizes", "SweepResult", "SweepRow", "EveryOBenchmarkWarning"]
__all__ += ["compare_precisions", "PrecisionResult", "PrecisionRow"]
__all__ += ["measure_training", "TrainingThroughput"]
