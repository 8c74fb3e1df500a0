// Structured log records: one JSON object or one logfmt line per record. Rules run on the record's message, never
// on its other fields (a prompt in a `prompt` field is data, not a log line), and a message holding newlines (a
// traceback in one field, escaped) is unfolded into its lines, as the engine would have printed them.
//  - JSON: vLLM's logging config (docs/examples/others/logging_configuration.md, a python-json-logger formatter:
//    `message`, `levelname`, `asctime`), Dynamo's JSONL logs (`message`, `level`, `time`), structlog (`event`,
//    `level`, `timestamp`), Rust tracing-subscriber's json layer (`fields.message`, `level`, `timestamp`).
//  - logfmt: `time=… level=error msg="…"` (Go slog TextHandler, logrus, Rust tracing logfmt layers).

export type StructuredFormat = 'json' | 'logfmt';

export interface StructuredKeys {
  message: readonly string[];
  level: readonly string[];
  time: readonly string[];
}

export const DEFAULT_STRUCTURED_KEYS: StructuredKeys = {
  message: ['message', 'msg', 'event'],
  level: ['level', 'levelname'],
  time: ['time', 'timestamp', 'ts', 'asctime'],
};

// Fields that carry a record's traceback beside its message (python-json-logger `exc_info`, structlog
// `exception`, others `stack_trace`/`traceback`): appended to the message, line by line.
export const TRACE_KEYS = ['exc_info', 'exception', 'stack_trace', 'traceback', 'stack'];

export interface StructuredRecord {
  /** The message, unfolded into lines (a traceback field after it). */
  lines: string[];
  level?: string;
  /** The record's time as text (ISO 8601, or an epoch number made ISO). */
  time?: string;
}

/** Nested records unfolded at most this deep (a JSON message inside a JSON record inside a runtime's wrapper). */
const MAX_DEPTH = 3;

function pick(o: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const k of keys) {
    if (Object.hasOwn(o, k)) return o[k];
    // Dotted keys reach into nested objects (`fields.message` of tracing's json layer).
    if (k.includes('.')) {
      let v: unknown = o;
      for (const part of k.split('.')) {
        v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
      }
      if (v !== undefined) return v;
    }
  }
  // tracing's json layer nests the message under `fields`.
  const f = o.fields;
  if (f !== null && typeof f === 'object' && keys.includes('message')) {
    const m = (f as Record<string, unknown>).message;
    if (m !== undefined) return m;
  }
  return undefined;
}

/** A record's time field as text: a string as it is, an epoch number (seconds or milliseconds) made ISO. */
export function recordTimeText(v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) {
    // Epoch seconds (or milliseconds past 1e11: year 5138 in seconds).
    const ms = v > 1e11 ? v : v * 1000;
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  return undefined;
}

function fromObject(
  o: Record<string, unknown>,
  keys: StructuredKeys,
  depth: number,
): StructuredRecord | null {
  const msg = pick(o, keys.message);
  if (typeof msg !== 'string') return null;
  const out: StructuredRecord = { lines: [] };
  const level = pick(o, keys.level);
  if (typeof level === 'string') out.level = level;
  const time = recordTimeText(pick(o, keys.time));
  if (time !== undefined) out.time = time;
  // A JSON record escaped in the message (a wrapper around a JSON logger): its own message is the record's.
  const inner =
    msg.length > 1 && msg.charCodeAt(0) === 123 /* { */ && depth < MAX_DEPTH
      ? decodeJson(msg, keys, depth + 1)
      : null;
  if (inner) {
    out.lines = inner.lines;
    out.level ??= inner.level;
    if (inner.time !== undefined) out.time ??= inner.time;
  } else out.lines = splitLines(msg);
  for (const k of TRACE_KEYS) {
    const t = o[k];
    if (typeof t === 'string' && t !== '') out.lines.push(...splitLines(t));
  }
  return out;
}

const splitLines = (s: string): string[] => s.replace(/\r?\n$/, '').split(/\r?\n/);

/** A JSON object line's record; null when the line is no JSON object or has no message key. */
export function decodeJson(
  line: string,
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
  depth = 0,
): StructuredRecord | null {
  if (line.charCodeAt(0) !== 123 /* { */) return null;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return null;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
  return fromObject(o as Record<string, unknown>, keys, depth);
}

/**
 * The key=value pairs of a logfmt line (go-logfmt/logfmt's grammar: bare values end at a space, quoted ones take
 * `\"`, `\\`, `\n`, `\t` escapes). One pass, so linear in the line.
 */
export function logfmtPairs(line: string): Map<string, string> | null {
  const out = new Map<string, string>();
  let i = 0;
  const n = line.length;
  while (i < n) {
    while (i < n && line.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    const ks = i;
    while (i < n && line.charCodeAt(i) !== 61 /* = */ && line.charCodeAt(i) !== 32) i++;
    const key = line.slice(ks, i);
    if (key === '' || i >= n || line.charCodeAt(i) !== 61) {
      // A bare word: logfmt allows a key without a value; a line of prose has many and no pairs.
      if (key !== '') out.set(key, '');
      continue;
    }
    i++;
    if (line.charCodeAt(i) === 34 /* " */) {
      i++;
      let v = '';
      let closed = false;
      while (i < n) {
        const c = line[i]!;
        if (c === '\\' && i + 1 < n) {
          const e = line[i + 1]!;
          v += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        v += c;
        i++;
      }
      if (!closed) return null;
      out.set(key, v);
    } else {
      const vs = i;
      while (i < n && line.charCodeAt(i) !== 32) i++;
      out.set(key, line.slice(vs, i));
    }
  }
  return out;
}

/** A logfmt line's record; null when it is none (no message key among its pairs). */
export function decodeLogfmt(
  line: string,
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
): StructuredRecord | null {
  if (line.indexOf('=') < 0) return null;
  const pairs = logfmtPairs(line);
  if (pairs === null) return null;
  let msg: string | undefined;
  for (const k of keys.message) if ((msg = pairs.get(k)) !== undefined) break;
  if (msg === undefined) return null;
  const out: StructuredRecord = { lines: splitLines(msg) };
  for (const k of keys.level) {
    const v = pairs.get(k);
    if (v !== undefined) {
      out.level = v;
      break;
    }
  }
  for (const k of keys.time) {
    const v = pairs.get(k);
    if (v !== undefined && v !== '') {
      out.time = v;
      break;
    }
  }
  for (const k of TRACE_KEYS) {
    const t = pairs.get(k);
    if (t !== undefined && t !== '') out.lines.push(...splitLines(t));
  }
  return out;
}

// `auto`: a line is logfmt when it opens with a key=value pair and names a message key (so an engine's prose line
// with one `a=b` in it stays plain text).
const LOGFMT_START = /^[\w.-]{1,64}=/;

/** The record of a line in `format` (`auto`: JSON when it is a JSON object, logfmt when it reads as one). */
export function decodeStructured(
  line: string,
  format: StructuredFormat | 'auto',
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
): StructuredRecord | null {
  if (format === 'json') return decodeJson(line, keys);
  if (format === 'logfmt') return decodeLogfmt(line, keys);
  if (line.charCodeAt(0) === 123 /* { */) return decodeJson(line, keys);
  return LOGFMT_START.test(line) ? decodeLogfmt(line, keys) : null;
}
