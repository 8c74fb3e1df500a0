// Structured log records: one JSON object or one logfmt line per record. Rules run on the record's message, never
// on its other fields (a prompt in a `prompt` field is data, not a log line), and a message holding newlines (a
// traceback in one field, escaped) is unfolded into its lines, as the engine would have printed them.
//
// The message is the logger's own field, and each logger has exactly one (issue 37): a record naming two of the
// candidate keys, or one of them twice, is ambiguous — an attribute the engine logged beside its message (a user's
// `message` beside slog's `msg`, a request body) could be the one read — so it opens no rule and is counted.
//
// | logger (format)                                  | message          | level       | time               |
// |--------------------------------------------------|------------------|-------------|--------------------|
// | python-json-logger (vLLM's JSON logging config)  | `message`        | `levelname` | `asctime`          |
// | structlog JSONRenderer                            | `event`          | `level`     | `timestamp`        |
// | Go slog JSONHandler / TextHandler (Ollama, EAIGW) | `msg`            | `level`     | `time`             |
// | Rust tracing-subscriber json (Dynamo, TGI, smg)   | `fields.message` | `level`     | `timestamp`        |
// | tracing json with flatten_event (smg), Dynamo JSONL| `message`       | `level`     | `timestamp`/`time` |
// | logfmt (slog text, logrus)                        | `msg`            | `level`     | `time`             |
//
// A record whose message is itself a JSON object is unfolded only when the record has no level (a wrapper around a
// JSON logger's line, such as a shipper's `{"msg": "<record>", "stream": "stderr"}`): a logger's record always has a
// level, and a JSON message inside one is data it logged (a request body). vLLM writes its process prefix in front
// of a JSON record (`(EngineCore_DP0 pid=N) {"message": …}`, vllm/utils decorate_logs): the prefix is kept in front
// of each line of the message, as in vLLM's text logs, so the rules and the process key read it.

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
  /** The message, unfolded into lines (a traceback field after it); empty for an ambiguous record. */
  lines: string[];
  /** Which format decoded it (`auto` decides per line). */
  format: StructuredFormat;
  /**
   * The record names more than one message key, or one twice: no message can be trusted to be the logger's, so no
   * rule reads it (the scanner counts it as a decode error of its format).
   */
  ambiguous?: 'keys' | 'duplicate';
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
      const v = dotted(o, k);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

function dotted(o: Record<string, unknown>, key: string): unknown {
  let v: unknown = o;
  for (const part of key.split('.')) {
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  }
  return v;
}

/** tracing's json layer nests the message under `fields` (`fields.message`), a candidate beside the keys. */
const TRACING_MESSAGE = 'fields.message';

/**
 * The message keys of a record that are present (tracing's `fields.message` too, when `message` is one of them);
 * the message is the record's only when there is exactly one.
 */
function messageKeys(o: Record<string, unknown>, keys: readonly string[]): string[] {
  const found: string[] = [];
  for (const k of keys) {
    if (Object.hasOwn(o, k) || (k.includes('.') && dotted(o, k) !== undefined)) found.push(k);
  }
  if (keys.includes('message') && !keys.includes(TRACING_MESSAGE) && dotted(o, TRACING_MESSAGE) !== undefined)
    found.push(TRACING_MESSAGE);
  return found;
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
  const present = messageKeys(o, keys.message);
  if (present.length === 0) return null;
  if (present.length > 1) return ambiguousRecord('json', 'keys');
  const msg = present[0] === TRACING_MESSAGE ? dotted(o, TRACING_MESSAGE) : pick(o, present);
  if (typeof msg !== 'string') return null;
  const out: StructuredRecord = { lines: [], format: 'json' };
  const level = pick(o, keys.level);
  if (typeof level === 'string') out.level = level;
  const time = recordTimeText(pick(o, keys.time));
  if (time !== undefined) out.time = time;
  // A JSON record escaped in the message of a wrapper (no level of its own: not a logger's record) is the record.
  const inner =
    level === undefined && msg.length > 1 && msg.charCodeAt(0) === 123 /* { */ && depth < MAX_DEPTH
      ? decodeJson(msg, keys, depth + 1)
      : null;
  if (inner?.ambiguous !== undefined) return inner;
  if (inner) {
    out.lines = inner.lines;
    if (inner.level !== undefined) out.level = inner.level;
    if (inner.time !== undefined) out.time ??= inner.time;
  } else out.lines = splitLines(msg);
  for (const k of TRACE_KEYS) {
    const t = o[k];
    if (typeof t === 'string' && t !== '') out.lines.push(...splitLines(t));
  }
  return out;
}

const ambiguousRecord = (format: StructuredFormat, why: 'keys' | 'duplicate'): StructuredRecord => ({
  lines: [],
  format,
  ambiguous: why,
});

/**
 * Whether one of `keys` is a key of the top-level object of the JSON text `line` more than once (JSON.parse keeps
 * the last, so a logged attribute of the same name after the logger's own would be read). One pass, linear.
 */
export function duplicateKey(line: string, keys: readonly string[]): boolean {
  const seen = new Set<string>();
  let depth = 0;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === 34 /* " */) {
      const start = i + 1;
      i++;
      while (i < n) {
        const d = line.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else if (d === 34) break;
        else i++;
      }
      const end = i;
      i++;
      if (depth !== 1) continue;
      let j = i;
      while (j < n && (line.charCodeAt(j) === 32 || line.charCodeAt(j) === 9)) j++;
      if (line.charCodeAt(j) !== 58 /* : */) continue;
      const raw = line.slice(start, end);
      const key = raw.includes('\\') ? safeUnescape(raw) : raw;
      if (!keys.includes(key)) continue;
      if (seen.has(key)) return true;
      seen.add(key);
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
    i++;
  }
  return false;
}

/** Whether some key's quoted name occurs twice in the line (a native search; duplicateKey then decides). */
function mayRepeat(line: string, keys: readonly string[]): boolean {
  for (const k of keys) {
    const q = `"${k}"`;
    const at = line.indexOf(q);
    if (at >= 0 && line.indexOf(q, at + q.length) >= 0) return true;
  }
  return false;
}

function safeUnescape(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
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
  const rec = fromObject(o as Record<string, unknown>, keys, depth);
  if (
    rec !== null &&
    rec.ambiguous === undefined &&
    mayRepeat(line, keys.message) &&
    duplicateKey(line, keys.message)
  )
    return ambiguousRecord('json', 'duplicate');
  return rec;
}

// vLLM's process prefix (vllm/utils decorate_logs: `(EngineCore_DP0 pid=N) `, `(APIServer pid=N) `) in front of a
// JSON record, and a compose service prefix before that (`docker compose logs`).
const PROCESS_PREFIX = /^(?:[\w.-]{1,64} +\| )?\([\w.-]{1,64} pid=\d{1,10}\) (?=\{)/;

/** A JSON record behind vLLM's process prefix; the prefix is put back in front of each line of its message. */
export function decodePrefixedJson(
  line: string,
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
): StructuredRecord | null {
  const m = PROCESS_PREFIX.exec(line);
  if (m === null) return null;
  const rec = decodeJson(line.slice(m[0].length), keys);
  if (rec === null || rec.ambiguous !== undefined) return rec;
  rec.lines = rec.lines.map((l) => m[0] + l);
  return rec;
}

/**
 * The key=value pairs of a logfmt line (go-logfmt/logfmt's grammar: bare values end at a space, quoted ones take
 * `\"`, `\\`, `\n`, `\t` escapes). One pass, so linear in the line.
 */
export function logfmtPairs(line: string, repeated?: Set<string>): Map<string, string> | null {
  const out = new Map<string, string>();
  let i = 0;
  const n = line.length;
  const set = (k: string, v: string) => {
    if (repeated !== undefined && out.has(k)) repeated.add(k);
    out.set(k, v);
  };
  while (i < n) {
    while (i < n && line.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    const ks = i;
    while (i < n && line.charCodeAt(i) !== 61 /* = */ && line.charCodeAt(i) !== 32) i++;
    const key = line.slice(ks, i);
    if (key === '' || i >= n || line.charCodeAt(i) !== 61) {
      // A bare word: logfmt allows a key without a value; a line of prose has many and no pairs.
      if (key !== '') set(key, '');
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
      set(key, v);
    } else {
      const vs = i;
      while (i < n && line.charCodeAt(i) !== 32) i++;
      set(key, line.slice(vs, i));
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
  const repeated = new Set<string>();
  const pairs = logfmtPairs(line, repeated);
  if (pairs === null) return null;
  const present = keys.message.filter((k) => pairs.has(k));
  if (present.length === 0) return null;
  if (present.length > 1) return ambiguousRecord('logfmt', 'keys');
  if (repeated.has(present[0]!)) return ambiguousRecord('logfmt', 'duplicate');
  const out: StructuredRecord = { lines: splitLines(pairs.get(present[0]!)!), format: 'logfmt' };
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

/**
 * The record of a line in `format` (`auto`: JSON when it is a JSON object, behind vLLM's process prefix or not,
 * logfmt when it reads as one).
 */
export function decodeStructured(
  line: string,
  format: StructuredFormat | 'auto',
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
): StructuredRecord | null {
  const c = line.charCodeAt(0);
  if (format === 'json') return c === 123 /* { */ ? decodeJson(line, keys) : decodePrefixedJson(line, keys);
  if (format === 'logfmt') return decodeLogfmt(line, keys);
  if (c === 123) return decodeJson(line, keys);
  if (c === 40 /* ( */ || line.includes(' | ')) {
    const rec = decodePrefixedJson(line, keys);
    if (rec !== null) return rec;
  }
  return LOGFMT_START.test(line) ? decodeLogfmt(line, keys) : null;
}
