"""Builds everyo's one optional C extension: the profiler's module-call path.

Everything else about the package is in pyproject.toml. The extension is optional: where no C
compiler is found the install still succeeds, and ``everyo.profiler.recorder`` records through
its pure-Python path (the same events, about twice the cost per event; ``python -m everyo info``
says which one runs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "everyo.profiler._crecorder",
            sources=["everyo/profiler/_crecorder.c"],
            optional=True,
        )
    ]
)
