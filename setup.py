"""Builds everyo's six optional C extensions: the engine's ``Module.__call__``, the profiler's
module-call path (the two meet at ``everyo/profiler/recording/module_call_api.h``), the stack
sampler's main-thread path, the loops the live dashboard runs over each batch of new events, the
machine-state reading every measurement takes twice, and the flush-to-zero mode the engine's
backward passes and optimizer steps run in.

Everything else about the package is in pyproject.toml. The extensions are optional: where no C
compiler is found the install still succeeds, ``everyo.profiler.recording.recorder`` records through
its pure-Python path (the same events, at several times the cost per event: figures in
``benchmarks/RESULTS.md``; ``python -m everyo info`` says which one runs),
``everyo.nn.Module`` calls through its Python ``__call__`` (the same
calls and events, a frame more per call), the sampler samples the main thread with a timer
signal and a Python handler (the same samples, at a higher cost per sample), the live
dashboard folds events in with NumPy (the same figures, with about twice the GIL hand-overs per
refresh), and ``everyo.machine_state`` reads ``/proc/stat`` itself at each reading (the same
reading, at a few times the cost). Without ``everyo/core/_cfloat.c`` nothing in Python can set
the CPU's flush-to-zero mode: the engine then computes subnormal floats as IEEE arithmetic does
(slowly on x86), and ``everyo.set_flush_denormal`` returns False.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "everyo.nn._cmodule",
            sources=["everyo/nn/_cmodule.c"],
            depends=["everyo/profiler/recording/module_call_api.h"],
            optional=True,
        ),
        Extension(
            "everyo.profiler.recording._crecorder",
            sources=["everyo/profiler/recording/_crecorder.c"],
            depends=[
                "everyo/profiler/recording/module_call_api.h",
                "everyo/profiler/recording/_packing.h",
            ],
            optional=True,
        ),
        Extension(
            "everyo.profiler.sampling._csampler",
            sources=["everyo/profiler/sampling/_csampler.c"],
            optional=True,
        ),
        Extension(
            "everyo.profiler.storage._cbatch",
            sources=["everyo/profiler/storage/_cbatch.c"],
            optional=True,
        ),
        Extension(
            "everyo.core._cfloat",
            sources=["everyo/core/_cfloat.c"],
            optional=True,
        ),
        Extension(
            "everyo._cmachine",
            sources=["everyo/_cmachine.c"],
            optional=True,
        ),
    ]
)
