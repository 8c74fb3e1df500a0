// Writers of container-runtime log files for the tests: numbered engine lines, wrapped as the kubelet's
// runtime (CRI) or Docker's json-file driver writes them, long lines split into partial parts.
import { ruleSchema, type RuleConfig } from '../../src/config/schema.js';

/** A user rule that matches every numbered line and captures its number. */
export const NUMBERED: RuleConfig = ruleSchema.parse({
  name: 'numbered',
  severity: 'info',
  match: String.raw`^n=(?<n>\d+)(?: |$)`,
});

/** Engine line `n` (every 7th is longer than `long`, so the runtime splits it). */
export function engineLine(n: number, long = 0): string {
  const pad = long > 0 && n % 7 === 0 ? ` ${'x'.repeat(long)}` : '';
  return `n=${n} é "quoted" \\ tab\t${pad}`;
}

export function criTime(ms: number): string {
  // RFC3339Nano as containerd writes it (nanoseconds, Z).
  return new Date(ms).toISOString().replace('Z', '123456Z');
}

/** CRI lines for one engine line: split into parts of at most `part` bytes, all but the last tagged P. */
export function cri(text: string, ms: number, stream = 'stdout', part = 16 * 1024): string {
  const parts: string[] = [];
  const b = Buffer.from(text, 'utf8');
  for (let i = 0; i < b.length || parts.length === 0; i += part) {
    parts.push(b.subarray(i, i + part).toString('latin1'));
  }
  return parts
    .map((p, i) => `${criTime(ms)} ${stream} ${i === parts.length - 1 ? 'F' : 'P'} ${p}\n`)
    .join('');
}

/** Bytes of a CRI file (parts may cut UTF-8 characters: built as latin1 from the UTF-8 bytes). */
export function criBytes(text: string, ms: number, stream = 'stdout', part = 16 * 1024): Buffer {
  return Buffer.from(cri(text, ms, stream, part), 'latin1');
}

/** Docker json-file lines for one engine line: partial entries (no trailing \n) of at most `part` chars. */
export function dockerBytes(text: string, ms: number, stream = 'stderr', part = 16 * 1024): Buffer {
  const out: string[] = [];
  for (let i = 0; i < text.length || out.length === 0; i += part) {
    const last = i + part >= text.length;
    const log = text.slice(i, i + part) + (last ? '\n' : '');
    out.push(`${JSON.stringify({ log, stream, time: new Date(ms).toISOString() })}\n`);
  }
  return Buffer.from(out.join(''), 'utf8');
}
