// The numbers the browser writes itself: only those it measures (a bar it merged while
// zooming, the hover of an event, the seconds a sweep point has run); every other figure is
// the kernel's text. Each function is the twin of one in everyo/spelling.py, rule for rule,
// and tests/lab/test_format_js.py holds them to the same output for the same inputs. Rounding
// is on whole nanoseconds, half up, in integer steps: the same on both sides, ties included.
import { NO_VALUE } from "./schema.js";

/** Whole nanoseconds of a time in milliseconds (what the wire format sent, exactly). */
export function toNs(ms) {
  return Math.round(ms * 1e6);
}

/** `n / unit` rounded half up, for whole `n >= 0` (exact integer steps, no float division). */
function roundTo(n, unit) {
  const rest = n % unit;
  return (n - rest) / unit + (2 * rest >= unit ? 1 : 0);
}

/** Thousands separators for a whole number >= 0. */
function grouped(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const missing = (v) => v === null || v === undefined || Number.isNaN(v);

/** A count with thousands separators (spelling.count_text): 1234 -> "1,234". */
export function countText(n) {
  if (missing(n)) return NO_VALUE;
  return n < 0 ? `-${grouped(-n)}` : grouped(n);
}

/** A duration (spelling.duration_text): "1,234 ms" from 100 ms, "12.35 ms" from 1 ms, else
 * three significant digits ("0.0123 ms"); "0 ms". `ns`: whole nanoseconds. */
export function durationText(ns) {
  if (missing(ns)) return NO_VALUE;
  if (ns < 0) return `-${durationText(-ns)}`;
  if (ns === 0) return "0 ms";
  if (ns < 1e6) {
    let digits = Math.max(0, String(ns).length - 3);
    let q = roundTo(ns, 10 ** digits);
    if (q >= 1000) {
      digits += 1;
      q = roundTo(ns, 10 ** digits);
    }
    if (q * 10 ** digits < 1e6) return `0.${String(q).padStart(6 - digits, "0")} ms`;
  }
  const hundredths = roundTo(ns, 10000);
  if (hundredths < 10000) return `${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, "0")} ms`;
  return `${grouped(roundTo(ns, 1e6))} ms`;
}

/** A time on the run's clock in ms to the microsecond, without the unit (spelling.clock_text):
 * 1234567800 ns -> "1,234.568". */
export function clockText(ns) {
  if (missing(ns)) return NO_VALUE;
  const us = roundTo(Math.abs(ns), 1000);
  return `${ns < 0 ? "-" : ""}${grouped(Math.floor(us / 1000))}.${String(us % 1000).padStart(3, "0")}`;
}

/** Seconds to a tenth, half up (spelling.seconds_text): 2.14 -> "2.1 s"; below zero "0.0 s". */
export function secondsText(s) {
  if (missing(s)) return NO_VALUE;
  const tenths = Math.floor(Math.max(s, 0) * 10 + 0.5);
  return `${Math.floor(tenths / 10)}.${tenths % 10} s`;
}
