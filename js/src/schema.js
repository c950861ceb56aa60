// Generated from everyo/profiler/schema.py by `python -m everyo.profiler.schema`;
// do not edit (tests/profiler/test_schema.py checks it is current).
export const GROUP_HEADERS = {"name": "name", "path": "module [path]", "shape": "input shapes"};
export const NO_VALUE = "–";
