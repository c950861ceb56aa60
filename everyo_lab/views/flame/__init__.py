"""The flame chart: its bars and level of detail (``lod``, twin of ``js/src/lod.js``), the figure,
its static HTML, the live binned chart and the icicle."""
