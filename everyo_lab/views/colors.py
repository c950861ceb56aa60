"""Stable colours for event names and kinds, and the light/dark theme colours.

A name keeps its colour across runs, refreshes and kernels (the hash is ``zlib.crc32``, not
Python's salted ``hash``), so a ``Linear`` bar is the same colour in every chart a user sees.
Common module classes get hand-picked, clearly distinct colours; any other name gets a hue from
its hash.
"""

from __future__ import annotations

import colorsys
import zlib

__all__ = [
    "CLASS_COLORS",
    "KIND_COLORS",
    "MERGED_COLOR",
    "THEMES",
    "color_for",
    "color_key",
    "theme_colors",
]

# Common module classes get hand-picked colours (mostly Plotly's "D3" palette), so the usual
# suspects never share one. BatchNorm1d and BatchNorm2d share theirs on purpose.
CLASS_COLORS = {
    "Sequential": "#1f77b4",
    "Linear": "#ff7f0e",
    "ReLU": "#2ca02c",
    "Conv2d": "#d62728",
    "BatchNorm1d": "#9467bd",
    "BatchNorm2d": "#9467bd",
    "LayerNorm": "#8c564b",
    "Dropout": "#e377c2",
    "Embedding": "#17becf",
    "MultiheadAttention": "#bcbd22",
    "GELU": "#636efa",
    "Tanh": "#6f772f",
    "Sigmoid": "#00cc96",
    "Softmax": "#2b7d80",
    "MSELoss": "#ffa15a",
    "CrossEntropyLoss": "#b5572b",
    "MaxPool2d": "#ff6692",
}

# Events other than module calls are coloured by their kind, in colours no class above uses
# (a backward bar must not pass for a Conv2d): each is at least 25 CIE76 units from every class
# colour, every other kind colour and MERGED_COLOR (tested), and light enough for dark labels.
KIND_COLORS = {
    "backward": "#8d6587",
    "op": "#cbcefe",
    "optimizer": "#956a04",
    "data": "#1f815a",
    "train": "#fcc6ae",
    "user": "#9fdec8",
    "gpu": "#c4db8f",
}

MERGED_COLOR = "#9e9e9e"
"""Colour of a level-of-detail bar that merges events of several colours."""

THEMES = {
    # Plotly's "plotly_white" and "plotly_dark" template colours, as plain values, so views need
    # no plotly import and the figure renders the same in plotly.js alone.
    "light": {
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "font_color": "#2a3f5f",
        "grid_color": "#ebf0f8",
        "line_color": "#c8d4e3",
        "muted": "#6b7a90",
        "table_bar": "#c6dbef",
        "text_on_bar": "#111111",
        "frame_bar": "#9ecae1",  # an expanded event's sampled frames
    },
    "dark": {
        "paper_bgcolor": "rgb(17,17,17)",
        "plot_bgcolor": "rgb(17,17,17)",
        "font_color": "#f2f5fa",
        "grid_color": "#283442",
        "line_color": "#506784",
        "muted": "#a2b1c6",
        "table_bar": "#2c4a6e",
        "text_on_bar": "#111111",
        "frame_bar": "#6baed6",
    },
}


def theme_colors(theme: str) -> dict:
    """Return the colour set of ``theme`` ("light" or "dark").

    Raises
    ------
    ValueError
        For any other theme name.
    """
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"theme must be 'light' or 'dark', not {theme!r}") from None


def color_key(kind: str, name: str) -> str:
    """Return what an event is coloured by: its class name for modules, else its kind."""
    return name if kind == "module" else kind


def color_for(key: str) -> str:
    """Return the stable hex colour of a colour key (a module class name or an event kind).

    Examples
    --------
    >>> color_for("Linear") == color_for("Linear")
    True
    >>> color_for("Linear") != color_for("ReLU")
    True
    """
    fixed = CLASS_COLORS.get(key) or KIND_COLORS.get(key)
    if fixed is not None:
        return fixed
    h = zlib.crc32(key.encode("utf-8"))
    # Spread hues with the golden ratio and vary lightness a little, so hashed names differ
    # from each other and from the fixed palette more than a plain modulo would allow.
    hue = ((h & 0xFFFF) * 0.618033988749895) % 1.0
    light = 0.45 + ((h >> 16) & 0x7) * 0.025
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.65)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def centred_note(text: str, colors: dict) -> dict:
    """A plotly annotation in the middle of an empty chart ("no events"), in the theme's muted
    text colour."""
    return {
        "text": text,
        "showarrow": False,
        "xref": "paper",
        "yref": "paper",
        "x": 0.5,
        "y": 0.5,
        "font": {"size": 16, "color": colors["muted"]},
    }
