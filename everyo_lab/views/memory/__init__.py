"""The memory chart (twin of ``js/src/memory_view.js``)."""
