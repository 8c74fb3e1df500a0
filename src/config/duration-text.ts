// Duration text ("1m30s") to milliseconds and back, free of zod: the daemon's runtime and `run`'s routes use it
// without loading the config schema (src/config/duration.ts holds the zod fields).
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// Prometheus style: one or more number+unit parts, e.g. "1m30s", "500ms", "1.5s".
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Parses "500ms", "30s", "5m", "1h30m" to milliseconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const at = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== at) return undefined;
    total += Number(m[1]) * UNITS[m[2]!]!;
  }
  return total;
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 && ms > 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
