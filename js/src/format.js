// Formatting of what the browser itself measures (hover geometry, a run picker's times, the
// diff table): the summary table, header and steps box show the kernel's texts instead.
// Unit-tested in test/format.test.mjs.
import { NO_VALUE } from "./schema.js";

/** Milliseconds with a precision that suits their size: 1234 ms -> "1,234", 0.0123 -> "0.0123". */
export function formatMs(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return NO_VALUE;
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString("en-US");
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  return value.toPrecision(3);
}

/** A time on the run's clock to the microsecond: 1234.5 -> "1,234.500" (ms). */
export function formatClock(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return NO_VALUE;
  return ms.toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
}
