"""Fixed colours: every common class and every event kind tells apart from all the others."""

from __future__ import annotations

import itertools

import numpy as np

from everyo_lab.views import color_for
from everyo_lab.views.colors import CLASS_COLORS, KIND_COLORS, MERGED_COLOR

MIN_DELTA_E = 25  # CIE76; about 2.3 is a just-noticeable difference, 20+ reads as another colour


def cie_lab(hex_color: str) -> np.ndarray:
    """sRGB hex to CIE L*a*b* (D65)."""
    rgb = np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


# the kinds the recorder, regions and loaders write (a module's colour comes from its class)
KINDS = ("module", "backward", "op", "optimizer", "data", "train", "user", "gpu")


def test_every_kind_but_module_has_a_fixed_colour():
    assert set(KIND_COLORS) == set(KINDS) - {"module"}
    assert all(color_for(kind) == KIND_COLORS[kind] for kind in KIND_COLORS)


def test_fixed_class_and_kind_colours_are_pairwise_distinct():
    named = {colour: name for name, colour in CLASS_COLORS.items()}  # BatchNorm1d/2d share one
    for name, colour in KIND_COLORS.items():
        assert colour not in named, f"kind {name!r} shares {colour} with {named.get(colour)!r}"
        named[colour] = name
    assert MERGED_COLOR not in named
    named[MERGED_COLOR] = "merged"
    for a, b in itertools.combinations(named, 2):
        delta = float(np.linalg.norm(cie_lab(a) - cie_lab(b)))
        assert delta > MIN_DELTA_E, f"{named[a]} {a} and {named[b]} {b}: delta E {delta:.1f}"


def test_the_colours_that_used_to_clash_differ():
    assert color_for("backward") != color_for("Conv2d")
    assert color_for("data") != color_for("CrossEntropyLoss") != color_for("Embedding")
    assert color_for("Tanh") != color_for("Conv2d")
