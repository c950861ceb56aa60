// Pure formatting helpers shared by the widgets (unit-tested in test/format.test.mjs).

const MS_KEYS = new Set([
  "total_ms", "mean_ms", "max_ms", "min_ms", "median_ms", "std_ms", "self_ms", "device_ms",
]);

// Exact counts stay exact ("1,024 calls"); FLOPs, bytes and the like get SI suffixes.
const COUNT_KEYS = new Set(["calls", "events"]);

/** Milliseconds with a precision that suits their size: 1234 ms -> "1,234", 0.0123 -> "0.0123". */
export function formatMs(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString("en-US");
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  return value.toPrecision(3);
}

/** A share in [0, 1] as a percentage string: 0.4567 -> "45.7 %". */
export function formatShare(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  return `${(value * 100).toFixed(1)} %`;
}

/** Large counts with SI suffixes: 1500 -> "1.5 k", 2e9 -> "2.0 G". */
export function formatCount(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  const abs = Math.abs(value);
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [scale, suffix] of units) {
    if (abs >= scale) return `${(value / scale).toFixed(1)} ${suffix}`;
  }
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Format one table cell by its column key. */
export function formatCell(key, value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (MS_KEYS.has(key)) return formatMs(value);
  if (key === "share") return formatShare(value);
  if (key === "mem_bytes") return formatCount(value).replace(/ ?([kMGT]?)$/, (_, p) => ` ${p}B`);
  if (COUNT_KEYS.has(key) && Number.isInteger(value)) return value.toLocaleString("en-US");
  if (typeof value === "number") return formatCount(value);
  return String(value);
}

/** A column key as a header label: "total_ms" -> "total (ms)". */
export function columnLabel(key) {
  if (key.endsWith("_ms")) return `${key.slice(0, -3).replace(/_/g, " ")} (ms)`;
  if (key === "mem_bytes") return "allocated"; // profile_memory: bytes of the arrays returned
  return key.replace(/_/g, " ");
}

/** A time on the run's clock to the microsecond: 1234.5 -> "1,234.500" (ms). */
export function formatClock(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  return ms.toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
}
