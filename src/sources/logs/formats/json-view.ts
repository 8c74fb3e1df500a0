// Where a JSON record's message lies in the chunk text, found without JSON.parse, for the scanner's prefilter and
// engine lines. Most lines of a JSON log are records no rule can match (an engine's batch lines, access lines): the
// scanner only needs to know which of them to decode, and where their message is. A flat object whose strings hold
// no escape has its message verbatim in the line, so the line's own bytes are looked at in place; any other line
// (nesting, escapes, a traceback field, no message, not JSON) gets no view and is handled as before: decoded with
// JSON.parse (formats/structured.ts) when the prefilter passes it. A view never decides what a rule sees: a line the
// prefilter passes is always decoded in full.
import { recordTimeText, TRACE_KEYS, type StructuredKeys } from './structured.js';

/** The message of the line, as offsets into the chunk text, and the record's time. */
export interface JsonView {
  /** s[from, to) is the message (no escape in it: the decoded message, as latin1 bytes). */
  from: number;
  to: number;
  /** s[timeFrom, timeTo) is the record's time value: 1 a string's text, 2 a number, 0 none or another kind. */
  timeFrom: number;
  timeTo: number;
  timeKind: 0 | 1 | 2;
}

/** The record's time as decodeJson gives it (structured.ts recordTimeText), if it has one: read only when asked. */
export function viewTime(s: string, v: JsonView): string | undefined {
  // The chunk text is latin1: the field's UTF-8 bytes, decoded here.
  if (v.timeKind === 1)
    return recordTimeText(Buffer.from(s.slice(v.timeFrom, v.timeTo), 'latin1').toString('utf8'));
  if (v.timeKind === 2) return recordTimeText(Number(s.slice(v.timeFrom, v.timeTo)));
  return undefined;
}

export const emptyView = (): JsonView => ({ from: 0, to: 0, timeFrom: 0, timeTo: 0, timeKind: 0 });

/** Keys as the chunk text holds them (latin1: one char per UTF-8 byte), by priority. */
export interface ViewKeys {
  message: readonly string[];
  time: readonly string[];
  /** Every key the view looks for, by length, with its rank among the message and time keys (-1: not one). */
  byLength: (KeyRole[] | undefined)[];
}

interface KeyRole {
  key: string;
  message: number;
  time: number;
  trace: boolean;
}

const asBytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

export function viewKeys(keys: StructuredKeys): ViewKeys {
  const message = keys.message.map(asBytes);
  const time = keys.time.map(asBytes);
  const byLength: (KeyRole[] | undefined)[] = [];
  for (const key of new Set([...message, ...time, ...TRACE_KEYS])) {
    (byLength[key.length] ??= []).push({
      key,
      message: message.indexOf(key),
      time: time.indexOf(key),
      trace: TRACE_KEYS.includes(key),
    });
  }
  // Dense: a sparse array is a dictionary (each lookup a hash probe).
  for (let i = 0; i < byLength.length; i++) byLength[i] ??= undefined;
  return { message, time, byLength };
}

const QUOTE = 34;

/**
 * The run of characters that are neither a backslash nor a control character, from lastIndex: it ends at the first
 * one, and at the latest at the line's own newline, so it never runs past the line it starts in. (Sticky and greedy:
 * V8 runs it as one tight loop, a fifth faster than searching for the first such character.)
 */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for (JSON forbids them raw)
const PLAIN_RUN = /[^\x00-\x1f\\]*/y;

/** Index of the `"` closing the string whose first char is s[i], or -1 (the line holds no escape: see jsonView). */
function stringEnd(s: string, i: number, end: number): number {
  const q = s.indexOf('"', i);
  return q >= 0 && q < end ? q : -1;
}

const isWs = (c: number) => c === 32 || c === 9 || c === 13 || c === 10;
const isDigit = (c: number) => c >= 48 && c <= 57;

/** End of the JSON number starting at s[i] (its grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?), or -1. */
function numberEnd(s: string, i: number, end: number): number {
  if (s.charCodeAt(i) === 45 /* - */) i++;
  if (i >= end || !isDigit(s.charCodeAt(i))) return -1;
  if (s.charCodeAt(i) === 48) i++;
  else while (i < end && isDigit(s.charCodeAt(i))) i++;
  if (i < end && s.charCodeAt(i) === 46 /* . */) {
    i++;
    if (i >= end || !isDigit(s.charCodeAt(i))) return -1;
    while (i < end && isDigit(s.charCodeAt(i))) i++;
  }
  const e = s.charCodeAt(i);
  if (i < end && (e === 101 || e === 69) /* e E */) {
    i++;
    const sign = s.charCodeAt(i);
    if (sign === 43 || sign === 45) i++;
    if (i >= end || !isDigit(s.charCodeAt(i))) return -1;
    while (i < end && isDigit(s.charCodeAt(i))) i++;
  }
  return i;
}

/** The role of the key s[from, to), if it is one the view looks for. */
function roleOf(keys: ViewKeys, s: string, from: number, to: number): KeyRole | undefined {
  const roles = keys.byLength[to - from];
  if (roles === undefined) return undefined;
  for (let k = 0; k < roles.length; k++) if (s.startsWith(roles[k]!.key, from)) return roles[k];
  return undefined;
}

/**
 * The view of the line s[p, end) when it is one flat JSON object (strings without escapes or control characters,
 * numbers, true/false/null; nothing nested) with a string message that does not itself open an object, and no
 * traceback field: exactly the lines whose decoded record (decodeJson) is that message alone. Null otherwise.
 * A second message key (another candidate, or the same twice) gives no view: decodeJson calls such a record
 * ambiguous. Time keys resolve by their priority, as decodeJson's pick does. `out` is filled and returned (one object per scanner: no garbage per line).
 */
export function jsonView(s: string, p: number, end: number, keys: ViewKeys, out: JsonView): JsonView | null {
  let i = p;
  if (s.charCodeAt(i) !== 123 /* { */) return null;
  // No escape and no control character in the line (a CRLF line's `\r` aside): its strings are their own text. One
  // native search instead of a look at each character of every string.
  // (`test`, not `exec`: no match array per line; lastIndex is then the first such character.)
  PLAIN_RUN.lastIndex = p;
  PLAIN_RUN.test(s);
  const np = PLAIN_RUN.lastIndex;
  if (np < end && !(np === end - 1 && s.charCodeAt(np) === 13)) return null;
  i++;
  let msgRank = keys.message.length;
  let msgFrom = -1;
  let msgTo = -1;
  let msgIsString = false;
  let timeRank = keys.time.length;
  let timeFrom = -1;
  let timeTo = -1;
  let timeKind = 0; // 1 string, 2 number, 3 other
  let first = true;
  for (;;) {
    while (i < end && isWs(s.charCodeAt(i))) i++;
    if (i >= end) return null;
    if (first && s.charCodeAt(i) === 125 /* } */) {
      i++;
      break;
    }
    first = false;
    if (s.charCodeAt(i) !== QUOTE) return null;
    const keyFrom = i + 1;
    const keyTo = stringEnd(s, keyFrom, end);
    if (keyTo < 0) return null;
    i = keyTo + 1;
    while (i < end && isWs(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) !== 58 /* : */) return null;
    i++;
    while (i < end && isWs(s.charCodeAt(i))) i++;
    if (i >= end) return null;
    const c = s.charCodeAt(i);
    const valueFrom = i;
    let kind: number;
    if (c === QUOTE) {
      const to = stringEnd(s, i + 1, end);
      if (to < 0) return null;
      i = to + 1;
      kind = 1;
    } else if (c === 45 || isDigit(c)) {
      i = numberEnd(s, i, end);
      if (i < 0) return null;
      kind = 2;
    } else if (s.startsWith('true', i) || s.startsWith('null', i)) {
      i += 4;
      kind = 3;
    } else if (s.startsWith('false', i)) {
      i += 5;
      kind = 3;
    } else return null; // nested, or no JSON
    if (i > end) return null;
    const role = roleOf(keys, s, keyFrom, keyTo);
    // A traceback field is appended to the message's lines (structured.ts fromObject): decoded in full.
    if (role?.trace === true) return null;
    const m = role === undefined ? -1 : role.message;
    // A second message key, or one twice: the record is ambiguous (formats/structured.ts), decoded in full to say so.
    if (m >= 0 && msgFrom >= 0) return null;
    if (m >= 0 && m <= msgRank) {
      msgRank = m;
      msgIsString = kind === 1;
      msgFrom = kind === 1 ? valueFrom + 1 : valueFrom;
      msgTo = kind === 1 ? i - 1 : i;
    }
    const t = role === undefined ? -1 : role.time;
    if (t >= 0 && t <= timeRank) {
      timeRank = t;
      timeKind = kind;
      timeFrom = kind === 1 ? valueFrom + 1 : valueFrom;
      timeTo = kind === 1 ? i - 1 : i;
    }
    while (i < end && isWs(s.charCodeAt(i))) i++;
    if (i >= end) return null;
    const sep = s.charCodeAt(i);
    i++;
    if (sep === 44 /* , */) continue;
    if (sep === 125 /* } */) break;
    return null;
  }
  while (i < end && isWs(s.charCodeAt(i))) i++;
  if (i !== end) return null;
  // No message, or not a string: decodeJson gives no record (the line is matched as plain text, and counted).
  if (msgFrom < 0 || !msgIsString) return null;
  // A message opening an object may be a record of its own (unfolded by decodeJson).
  if (msgTo - msgFrom > 1 && s.charCodeAt(msgFrom) === 123) return null;
  out.from = msgFrom;
  out.to = msgTo;
  out.timeFrom = timeFrom;
  out.timeTo = timeTo;
  out.timeKind = timeKind === 1 || timeKind === 2 ? timeKind : 0;
  return out;
}
