// Generated from everyo/profiler/schema.py by `python -m everyo.profiler.schema`;
// do not edit (tests/profiler/test_schema.py checks it is current).
export const GROUP_HEADERS = {"name": "name", "path": "module [path]", "shape": "input shapes"};
export const COLUMN_ORDER = ["label", "name", "kind", "calls", "total_ms", "self_ms", "share", "mean_ms", "median_ms", "min_ms", "max_ms", "std_ms", "flops", "gflops", "device_ms", "mem_bytes", "shapes", "path"];
export const SORT_KEYS = ["total_ms", "self_ms", "mean_ms", "max_ms", "min_ms", "median_ms", "std_ms", "calls", "share", "name", "kind", "flops", "gflops", "device_ms", "mem_bytes"];
