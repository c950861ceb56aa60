"""The offline HTML page every report of the lab writes (a run's, :mod:`everyo_lab.html_report`; a
comparison's, :mod:`everyo_lab.compare_html`): plotly.js inlined (no network needed), the
figures as JSON in a ``<script>`` element, drawn on load; charts that zoom together."""

from __future__ import annotations

import html
import json

__all__ = ["page", "link_script", "script_json"]

CONFIG = {"responsive": True, "displaylogo": False, "scrollZoom": True}
"""plotly's options for every chart of a page."""


def page(title: str, body: list[str], figures: dict) -> str:
    """The document: ``title`` (escaped here), ``body`` (HTML parts, in order) and
    ``figures`` (``{element id: figure dict}``, drawn into those elements)."""
    from plotly.offline import get_plotlyjs  # lazily: only reports need the 4.5 MB bundle

    return _DOCUMENT.format(
        title=html.escape(title),
        plotly=get_plotlyjs(),
        body="\n".join(body),
        figures=script_json(figures),
        config=json.dumps(CONFIG),
    )


def script_json(value) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: every ``<`` becomes ``\\u003c``
    (the same string to ``JSON.parse``), so no text of an event name (``</script>``, or
    ``<!--<script>``, which would make the parser skip the element's real end) can end it."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")


def link_script(ids: list[str]) -> str:
    """A ``<script>`` that makes the plotly charts with these element ids zoom together."""
    return _LINK.replace("IDS", json.dumps(list(ids)))


# After the figures are drawn: a zoom or pan of one chart moves the others too.
_LINK = """<script type="text/javascript">
window.addEventListener("load", function () {
  var ids = IDS.filter(function (id) { return document.getElementById(id); });
  var busy = false;
  ids.forEach(function (id) {
    document.getElementById(id).on("plotly_relayout", function (ev) {
      if (busy) return;
      var update = {};
      if (ev["xaxis.autorange"]) update["xaxis.autorange"] = true;
      else if (ev["xaxis.range[0]"] !== undefined)
        update["xaxis.range"] = [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
      else if (ev["xaxis.range"]) update["xaxis.range"] = ev["xaxis.range"];
      else return;
      busy = true;
      ids.forEach(function (other) {
        if (other !== id) Plotly.relayout(other, update);
      });
      busy = false;
    });
  });
});
</script>"""

_DOCUMENT = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="everyo_lab">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 16px 24px; color: #1f2328; }}
h2 {{ font-size: 15px; margin: 18px 0 4px; }}
.chart {{ width: 100%; min-height: 300px; }}
</style>
<script type="text/javascript">{plotly}</script>
</head>
<body>
{body}
<script type="application/json" id="everyo-figures">{figures}</script>
<script type="text/javascript">
(function () {{
  var figures = JSON.parse(document.getElementById("everyo-figures").textContent);
  Object.keys(figures).forEach(function (id) {{
    var fig = figures[id];
    Plotly.newPlot(id, fig.data, fig.layout, {config});
  }});
}})();
</script>
</body>
</html>
"""
