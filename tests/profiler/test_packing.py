"""The buffered event's packed int, and its C twin ``_packing.h``, generated from packing.py."""

from __future__ import annotations

import re
from pathlib import Path

from everyo.profiler.recording import packing

HEADER = Path(packing.__file__).with_name("_packing.h")
C_SOURCE = Path(packing.__file__).with_name("_crecorder.c")


def test_the_c_header_is_generated_from_packing_py():
    assert HEADER.read_text() == packing.c_header(), (
        "run: python -m everyo.profiler.recording.packing > everyo/profiler/recording/_packing.h"
    )


def test_the_compiled_recorder_takes_the_layout_from_the_header_only():
    source = C_SOURCE.read_text(encoding="utf-8")
    assert '#include "_packing.h"' in source
    defined = set(re.findall(r"^#define (\w+)", HEADER.read_text(), re.M))
    assert not defined & set(re.findall(r"^#define (\w+)", source, re.M))


def test_pack_keeps_key_depth_and_shape_apart():
    packed = packing.pack(packing.KEY_MASK, (1 << packing.DEPTH_BITS) - 1, 41)
    assert packed & packing.KEY_MASK == packing.KEY_MASK
    assert packed >> packing.KEY_BITS & (1 << packing.DEPTH_BITS) - 1 == (1 << 16) - 1
    assert (packed >> packing.SHAPE_SHIFT) - 1 == 41
    assert packing.pack(5, 3) == 5 | 3 << packing.KEY_BITS  # no shape: nothing above the depth
