// Generated from everyo/profiler/analysis/schema.py
// by `python -m everyo.profiler.analysis.schema`;
// do not edit (tests/profiler/test_schema.py checks it is current).
export const GROUP_HEADERS = {"name": "name", "path": "module [path]", "shape": "input shapes"};
export const NO_VALUE = "–";
