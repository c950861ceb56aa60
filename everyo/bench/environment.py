"""The environment record, under its older home: the code lives in :mod:`everyo.environment_record`
(the profiler records it too, and the profiler does not import the benchmarking package).

``from everyo.bench.environment import environment`` keeps working; ``eo.environment()`` and
``everyo.bench.environment()`` are the same function.
"""

from everyo.environment_record import blas_info, environment, format_environment

__all__ = ["blas_info", "environment", "format_environment"]
