// Whether a tail-shaped line is the engine's own tail of a `Failed to parse JSON part: {text}, JSON parse error:
// {e}` record (carriers.ts), judged by what CPython's json decoder raises on the text (issue 37 item 1, the fake
// tail then a forged record). The engine prints str(e) of the JSONDecodeError its decoder raised on exactly the text
// it printed before the tail: the message names the first error's position, and every later line the model prints
// sits after that position. A tail the model prints that names anything other than the error CPython raises on the
// text before it does not end the record.
//
// Upstream (the truth for the strings):
// - sgl-project/sglang python/sglang/srt/function_call/mistral_detector.py detect_and_parse @ a343daaf:
//   `function_call_arr = json.loads(json_array_str)`, on JSONDecodeError `logger.warning(f"Failed to parse JSON
//   part: {json_array_str}, JSON parse error: {str(e)}")` — the text printed is the text decoded (`loads` below).
// - sgl-project/sglang python/sglang/srt/function_call/llama32_detector.py detect_and_parse @ 11507615:
//   `decoder.raw_decode(action_text[idx:])`, on JSONDecodeError `Failed to parse JSON part: {action_text[idx:]},
//   JSON parse error: {str(e)}` (`raw_decode` below: no leading whitespace skipped, no `Extra data`). Older
//   llama32 (@ 01c3e438) printed `JSON parse error: {str(e)}` as its own record after `json.loads(part)`.
// - CPython Lib/json/decoder.py (v3.5 → v3.13, checked against the installed 3.13.0 source): JSONDecodeError
//   .__init__ (line 31-33 @ v3.13.0) `lineno = doc.count('\n', 0, pos) + 1`, `colno = pos - doc.rfind('\n', 0,
//   pos)`, str = `'%s: line %d column %d (char %d)' % (msg, lineno, colno, pos)`; `decode` (line 340-347) skips
//   whitespace, raw_decodes, raises `Extra data` at the first non-whitespace after the value; `raw_decode` (line
//   353-363) turns the scanner's StopIteration into `Expecting value` at its index; json/__init__.py loads (line
//   335) raises `Unexpected UTF-8 BOM (decode using utf-8-sig)` at 0. The scanner is Modules/_json.c (the C
//   accelerator every CPython build has): scan_once_unicode, _parse_object_unicode, _parse_array_unicode,
//   scanstring_unicode, _match_number_unicode; 3.13 added `Illegal trailing comma before end of object/array` at
//   the comma where older versions said `Expecting property name enclosed in double quotes` / `Expecting value` at
//   the closing bracket (both accepted). Positions are Python str indices (code points, not UTF-16 units).
//   test/fixtures/json-errors/ holds the real messages of CPython 3.6 → 3.13 on random texts (gen.py).
//
// What it cannot do: a model that computes the error CPython raises on its own text and prints exactly that tail
// still ends the record there (the real tail will name the same error: it is the same text's first error). That is
// why a log line alone never pages (confirm.ts). Cost: a text is decoded only on a tail-shaped line, and once its
// first error lies well inside the text the answer is kept (every later text extends it: same first error).

export type DecodeMode = 'loads' | 'raw_decode';

/** An error CPython may raise: its message and position (a UTF-16 index into the text). */
export interface JsonError {
  msg: string;
  pos: number;
}

/** CPython's outcome on a text: decoded (`end`), or the errors its versions raise (one each, same first error). */
export type Decoded = { ok: true; end: number } | { ok: false; errors: JsonError[] };

const Q = 0x22; // "
const BS = 0x5c; // \

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

const fail = (msg: string, pos: number): Decoded => ({ ok: false, errors: [{ msg, pos }] });

const ESCAPES = new Set([Q, BS, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]); // " \ / b f n r t

/** _json.c scanstring_unicode (strict): `end` is the index after the opening quote; the index after the closing. */
function scanString(s: string, end: number): number | Decoded {
  const len = s.length;
  const begin = end - 1;
  for (;;) {
    let c = 0;
    let next = end;
    for (; next < len; next++) {
      c = s.charCodeAt(next);
      if (c === Q || c === BS) break;
      if (c <= 0x1f) return fail('Invalid control character at', next);
    }
    if (next >= len) return fail('Unterminated string starting at', begin);
    if (c === Q) return next + 1;
    next++;
    if (next === len) return fail('Unterminated string starting at', begin);
    c = s.charCodeAt(next);
    if (c !== 0x75 /* u */) {
      end = next + 1;
      if (!ESCAPES.has(c)) return fail('Invalid \\escape', end - 2);
      continue;
    }
    next++;
    end = next + 4;
    if (end >= len) return fail('Invalid \\uXXXX escape', next - 1);
    let u = 0;
    for (; next < end; next++) {
      const d = s.charCodeAt(next);
      if (!isHex(d)) return fail('Invalid \\uXXXX escape', end - 5);
      u = u * 16 + parseInt(s[next]!, 16);
    }
    // A high surrogate followed by `\u`: the pair is read (its digits checked) when 6 more fit before the end.
    if (
      u >= 0xd800 &&
      u <= 0xdbff &&
      end + 6 < len &&
      s.charCodeAt(end) === BS &&
      s.charCodeAt(end + 1) === 0x75
    ) {
      end += 6;
      let u2 = 0;
      for (next = end - 4; next < end; next++) {
        const d = s.charCodeAt(next);
        if (!isHex(d)) return fail('Invalid \\uXXXX escape', end - 5);
        u2 = u2 * 16 + parseInt(s[next]!, 16);
      }
      if (!(u2 >= 0xdc00 && u2 <= 0xdfff)) end -= 6;
    }
  }
}

/** _json.c _match_number_unicode: the index after the number at `start`, or -1 (StopIteration at start). */
function matchNumber(s: string, start: number): number {
  const endIdx = s.length - 1;
  let idx = start;
  if (s.charCodeAt(idx) === 0x2d /* - */) {
    idx++;
    if (idx > endIdx) return -1;
  }
  const c = s.charCodeAt(idx);
  if (c >= 0x31 && c <= 0x39) {
    idx++;
    while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
  } else if (c === 0x30) idx++;
  else return -1;
  if (idx < endIdx && s.charCodeAt(idx) === 0x2e /* . */ && isDigit(s.charCodeAt(idx + 1))) {
    idx += 2;
    while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
  }
  if (idx < endIdx && (s.charCodeAt(idx) === 0x65 || s.charCodeAt(idx) === 0x45) /* e E */) {
    const eStart = idx;
    idx++;
    if (idx < endIdx && (s.charCodeAt(idx) === 0x2d || s.charCodeAt(idx) === 0x2b)) idx++;
    while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
    if (!isDigit(s.charCodeAt(idx - 1))) idx = eStart;
  }
  return idx;
}

/** A literal at idx (scan_once_unicode's `n t f N I -` cases), its end; -1 when none. */
function matchLiteral(s: string, idx: number): number {
  for (const w of ['null', 'true', 'false', 'NaN', 'Infinity', '-Infinity']) {
    // scan_once_unicode tests `idx + len(w) - 1 < length`: the whole word in the text.
    if (s.startsWith(w, idx)) return idx + w.length;
  }
  return -1;
}

function skipWs(s: string, idx: number): number {
  while (idx < s.length && isWs(s.charCodeAt(idx))) idx++;
  return idx;
}

const ARR = 0;
const OBJ = 1;
const PROPERTY = 'Expecting property name enclosed in double quotes';

/**
 * scan_once_unicode at `idx`, without recursion (a deep text must not blow our stack; CPython would raise
 * RecursionError there and print no tail, so what we answer past its depth matters to nobody).
 */
function scanOnce(s: string, idx: number): Decoded {
  const n = s.length;
  const stack: number[] = [];
  for (;;) {
    // A value at idx.
    if (idx >= n) return fail('Expecting value', idx);
    const c = s.charCodeAt(idx);
    let end: number;
    if (c === Q) {
      const r = scanString(s, idx + 1);
      if (typeof r !== 'number') return r;
      end = r;
    } else if (c === 0x7b /* { */) {
      idx = skipWs(s, idx + 1);
      if (idx < n && s.charCodeAt(idx) === 0x7d) end = idx + 1;
      else {
        const k = key(s, idx);
        if (typeof k !== 'number') return k;
        idx = k;
        stack.push(OBJ);
        continue;
      }
    } else if (c === 0x5b /* [ */) {
      idx = skipWs(s, idx + 1);
      if (idx < n && s.charCodeAt(idx) === 0x5d) end = idx + 1;
      else {
        stack.push(ARR);
        continue;
      }
    } else {
      end = matchLiteral(s, idx);
      if (end < 0) end = matchNumber(s, idx);
      if (end < 0) return fail('Expecting value', idx);
    }
    // The value ended: close what it ends, or find the next value.
    idx = end;
    for (;;) {
      const top = stack.at(-1);
      if (top === undefined) return { ok: true, end: idx };
      idx = skipWs(s, idx);
      const close = top === ARR ? 0x5d : 0x7d;
      if (idx < n && s.charCodeAt(idx) === close) {
        stack.pop();
        idx++;
        continue;
      }
      if (idx >= n || s.charCodeAt(idx) !== 0x2c /* , */) return fail("Expecting ',' delimiter", idx);
      const comma = idx;
      idx = skipWs(s, idx + 1);
      if (idx < n && s.charCodeAt(idx) === close) {
        // 3.13 names the comma; older versions fail on the bracket as on any other non-value.
        return {
          ok: false,
          errors: [
            { msg: `Illegal trailing comma before end of ${top === ARR ? 'array' : 'object'}`, pos: comma },
            { msg: top === ARR ? 'Expecting value' : PROPERTY, pos: idx },
          ],
        };
      }
      if (top === OBJ) {
        const k = key(s, idx);
        if (typeof k !== 'number') return k;
        idx = k;
      }
      break;
    }
  }
}

/** An object's `"key" :` at idx (whitespace skipped before it); the index of its value. */
function key(s: string, idx: number): number | Decoded {
  if (idx >= s.length || s.charCodeAt(idx) !== Q) return fail(PROPERTY, idx);
  const r = scanString(s, idx + 1);
  if (typeof r !== 'number') return r;
  idx = skipWs(s, r);
  if (idx >= s.length || s.charCodeAt(idx) !== 0x3a /* : */) return fail("Expecting ':' delimiter", idx);
  return skipWs(s, idx + 1);
}

/** What CPython's `json.loads(s)` (mode `loads`) or `JSONDecoder().raw_decode(s)` raises on s. */
export function decode(s: string, mode: DecodeMode): Decoded {
  if (mode === 'raw_decode') return scanOnce(s, 0);
  if (s.charCodeAt(0) === 0xfeff) return fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
  const r = scanOnce(s, skipWs(s, 0));
  if (!r.ok) return r;
  const end = skipWs(s, r.end);
  return end === s.length ? r : fail('Extra data', end);
}

/** A Python str index of UTF-16 index i of s (a surrogate pair is one code point). */
function pyIndex(s: string, i: number): number {
  let pairs = 0;
  for (let j = 0; j + 1 < i; j++) {
    const c = s.charCodeAt(j);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(j + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        j++;
      }
    }
  }
  return i - pairs;
}

/** str(JSONDecodeError(msg, s, pos)): `msg: line L column C (char N)`. */
export function errorText(s: string, e: JsonError): string {
  let lines = 1;
  for (let i = s.indexOf('\n'); i !== -1 && i < e.pos; i = s.indexOf('\n', i + 1)) lines++;
  const pos = pyIndex(s, e.pos);
  const nl = e.pos > 0 ? s.lastIndexOf('\n', e.pos - 1) : -1;
  const col = nl === -1 ? pos + 1 : pos - pyIndex(s, nl);
  return `${e.msg}: line ${lines} column ${col} (char ${pos})`;
}

/** The texts str(e) may be on s in mode (every version's), or none when it decodes. */
export function errorTexts(s: string, mode: DecodeMode): string[] {
  const r = decode(s, mode);
  return r.ok ? [] : r.errors.map((e) => errorText(s, e));
}

/**
 * An answer past this many UTF-16 units before the text's end holds for every longer text that starts with it: a
 * decision of the scanner looks at most a few characters ahead (`-Infinity`, `\uXXXX\uXXXX`), except an
 * unterminated string's, which is the end itself.
 */
const SETTLED = 16;

const SEP = ', JSON parse error: ';
const OWN_RECORD_TAIL = 'JSON parse error: ';

/**
 * The carried text of one open record and the checks of its tail-shaped lines. `add` every line of the record
 * (cheap: kept, not read); `fits` on a tail-shaped one.
 */
export class JsonErrorTail {
  private readonly parts: string[];
  private size: number;
  /** Per mode, the error texts once they hold for every longer text (see SETTLED). */
  private readonly settled = new Map<DecodeMode, readonly string[]>();
  /** Full decodes left (a bound: settled answers make later ones free, so a few are all a real record needs). */
  private decodes = 8;
  /** Texts built so far (each is O(size): with a settled answer none is, or 2,000 fake tails cost 0.2 s). */
  built = 0;

  /** `first`: the header line's text from where the carried text begins. */
  constructor(first: string) {
    this.parts = [first];
    this.size = first.length;
  }

  /** Bytes carried so far (the caller stops adding past its cap). */
  get length(): number {
    return this.size;
  }

  add(line: string): void {
    this.parts.push(line);
    this.size += line.length + 1;
  }

  /**
   * Whether `line` (tail-shaped; not added yet) ends the carried text with the error CPython raises on it:
   * `{rest of the text}, JSON parse error: {str(e)}`, or as its own record (`prefix JSON parse error: {str(e)}`,
   * the text being every line before). `userFrom`: the line is the header, its text starts there.
   */
  fits(line: string, userFrom?: number): boolean {
    const sep = line.lastIndexOf(SEP);
    if (sep !== -1) {
      const said = line.slice(sep + SEP.length).trimEnd();
      if (userFrom !== undefined) return sep >= userFrom && this.names(() => line.slice(userFrom, sep), said);
      return this.names(() => `${this.parts.join('\n')}\n${line.slice(0, sep)}`, said);
    }
    if (userFrom !== undefined) return false;
    const own = line.indexOf(OWN_RECORD_TAIL);
    if (own === -1) return false;
    return this.names(() => this.parts.join('\n'), line.slice(own + OWN_RECORD_TAIL.length).trimEnd());
  }

  /** Whether `said` is what CPython raises on the text (built only when no settled answer holds: it is O(size)). */
  private names(textOf: () => string, said: string): boolean {
    let fits = false;
    let text: string | undefined;
    for (const mode of ['loads', 'raw_decode'] as const) {
      let texts = this.settled.get(mode);
      if (texts === undefined) {
        if (this.decodes <= 0) continue;
        this.decodes--;
        const t = (text ??= (this.built++, textOf()));
        const r = decode(t, mode);
        texts = r.ok ? [] : r.errors.map((e) => errorText(t, e));
        const at = r.ok ? r.end : Math.max(...r.errors.map((e) => e.pos));
        const unterminated = !r.ok && r.errors.some((e) => e.msg.startsWith('Unterminated'));
        if (!unterminated && at + SETTLED <= t.length) this.settled.set(mode, texts);
      }
      if (texts.includes(said)) fits = true;
    }
    return fits;
  }
}
