// Value-level redaction: secrets come from the environment and files, so they can surface anywhere
// (an error message quoting a header, a debug timeline, a log line the engine wrote, a watched env file).
// Everything that leaves the process goes through this one layer: HTTP responses (an onSend hook in
// server/app.ts), the event journal (detect/journal.ts), the daemon's own log (logger.ts).

export const REDACTED = '<secret>';

/**
 * Credentials recognised by shape, for tokens the config never named (a log line quoting a client's header):
 * `Bearer <token>` / `Basic <base64>` as in an Authorization header, `key=value` pairs whose key says secret, and
 * the password of a URL's `user:password@`.
 *
 * Scanned by hand, not by regex: this runs synchronously over untrusted text (prompts echoed in engine logs, HTTP
 * bodies, bundle files), and the regex it replaces, `\b([A-Za-z0-9_-]*(?:token|…)…)`, restarted its greedy
 * prefix at every word boundary of a long `a-a-a-…` run — quadratic (`'a-'×16000` took 0.5–1.2 s). Here every
 * character is looked at a bounded number of times: a keyword is matched at a fixed length, a whitespace run
 * belongs to the one keyword before it, and a value run is measured once and reused by every keyword inside it.
 * `steps` (tests) counts the characters looked at, so linearity is asserted without a clock.
 */
export interface ScanStats {
  steps: number;
}

// A token has a digit somewhere ("Basic authentication" is prose, not a credential).
const TOKEN_MIN = 8;
// A value has a letter and a digit: SGLang's `#token: 123456` batch field is a count, and
// "bearerToken: environment variable … is not set" is prose.
const VALUE_MIN = 6;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isWord = (c: number) => isLetter(c) || isDigit(c) || c === 95;
// JS `\s`: the ASCII controls \t-\r, space, and the Unicode spaces.
const isSpace = (c: number) =>
  (c >= 9 && c <= 13) ||
  c === 32 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;
// `[A-Za-z0-9._~+/=-]`: the characters of an RFC 6750 b64token / RFC 7617 base64 credential.
const isTokenChar = (c: number) =>
  isLetter(c) ||
  isDigit(c) ||
  c === 46 ||
  c === 95 ||
  c === 126 ||
  c === 43 ||
  c === 47 ||
  c === 61 ||
  c === 45;
// `[^\s"'&,;}<]`: a value ends where a quote, a separator or markup does.
const isValueChar = (c: number) =>
  !isSpace(c) && c !== 34 && c !== 39 && c !== 38 && c !== 44 && c !== 59 && c !== 125 && c !== 60;
// The regex's `/i` without `/u` folds ASCII only.
const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);
const isQuote = (c: number) => c === 34 || c === 39;

/** ASCII case-insensitive `word` at `at` (`word` is lower case). */
function wordAt(text: string, at: number, word: string, st: ScanStats): boolean {
  if (at + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    st.steps++;
    if (lower(text.charCodeAt(at + k)) !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** The length of `api[_-]?key|token|secret|password|passwd` (case-insensitive) at `at`, or 0. */
function keywordAt(text: string, at: number, c: number, st: ScanStats): number {
  switch (c) {
    case 97: {
      if (!wordAt(text, at, 'api', st)) return 0;
      const mid = text.charCodeAt(at + 3);
      const k = mid === 95 || mid === 45 ? at + 4 : at + 3;
      return wordAt(text, k, 'key', st) ? k + 3 - at : 0;
    }
    case 116:
      return wordAt(text, at, 'token', st) ? 5 : 0;
    case 115:
      return wordAt(text, at, 'secret', st) ? 6 : 0;
    case 112:
      if (!wordAt(text, at, 'passw', st)) return 0;
      if (wordAt(text, at + 5, 'ord', st)) return 8;
      return wordAt(text, at + 5, 'd', st) ? 6 : 0;
    default:
      return 0;
  }
}

/** A maximal run of `member` characters; keywords inside one run ask about its suffixes. */
interface Run {
  start: number;
  end: number;
  lastLetter: number;
  lastDigit: number;
}

function measureRun(text: string, from: number, member: (c: number) => boolean, st: ScanStats): Run {
  const run: Run = { start: from, end: from, lastLetter: -1, lastDigit: -1 };
  let i = from;
  for (; i < text.length; i++) {
    st.steps++;
    const c = text.charCodeAt(i);
    if (!member(c)) break;
    if (isDigit(c)) run.lastDigit = i;
    else if (isLetter(c)) run.lastLetter = i;
  }
  run.end = i;
  return run;
}

function skipSpace(text: string, from: number, st: ScanStats): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) {
    st.steps++;
    i++;
  }
  return i;
}

/** `\b(Bearer|Basic)\s+<token with a digit, 8 or more>` → `$1$2<secret>`. */
function redactAuthSchemes(text: string, st: ScanStats, cutEnd: boolean): string {
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    st.steps++;
    const c = text.charCodeAt(i);
    // `\b` then `B`: the start of a word.
    if (c !== 66 || (i > 0 && isWord(text.charCodeAt(i - 1)))) {
      i++;
      continue;
    }
    st.steps += 6;
    const len = text.startsWith('Bearer', i) ? 6 : text.startsWith('Basic', i) ? 5 : 0;
    if (len === 0) {
      i++;
      continue;
    }
    const afterScheme = i + len;
    const valueAt = skipSpace(text, afterScheme, st);
    if (valueAt === afterScheme) {
      i = afterScheme;
      continue;
    }
    // Runs after a scheme and its whitespace are disjoint, so each is measured once.
    const run = measureRun(text, valueAt, isTokenChar, st);
    if (
      (run.end - valueAt >= TOKEN_MIN && run.lastDigit >= valueAt) ||
      (cutEnd && run.end === text.length && run.end > valueAt)
    ) {
      out += text.slice(copied, valueAt) + REDACTED;
      copied = run.end;
      i = run.end;
    } else {
      // A scheme word can start the run (`Bearer Bearer x…`), so look again from its start.
      i = valueAt;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** `…(api[_-]?key|token|secret|password|passwd)["']?\s*[=:]\s*["']?<value with a letter and a digit, 6 or more>`. */
function redactKeyValues(text: string, st: ScanStats, cutEnd: boolean): string {
  let out = '';
  let copied = 0;
  let run: Run | undefined;
  let i = 0;
  while (i < text.length) {
    st.steps++;
    const len = keywordAt(text, i, lower(text.charCodeAt(i)), st);
    if (len === 0) {
      i++;
      continue;
    }
    let j = i + len;
    if (j < text.length && isQuote(text.charCodeAt(j))) j++;
    j = skipSpace(text, j, st);
    const sep = j < text.length ? text.charCodeAt(j) : -1;
    if (sep !== 61 && sep !== 58) {
      i++;
      continue;
    }
    j = skipSpace(text, j + 1, st);
    if (j < text.length && isQuote(text.charCodeAt(j))) j++;
    // A keyword inside an earlier value (`token=token=…`) asks about a suffix of the same run.
    if (run === undefined || j < run.start || j > run.end) run = measureRun(text, j, isValueChar, st);
    if (
      (run.end - j >= VALUE_MIN && run.lastLetter >= j && run.lastDigit >= j) ||
      (cutEnd && run.end === text.length && run.end > j)
    ) {
      out += text.slice(copied, j) + REDACTED;
      copied = run.end;
      i = run.end;
    } else {
      i++;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

// `[^\s/?#@]`: the characters of a URL's userinfo (RFC 3986 §3.2.1) as far as it matters here.
const isUserinfoChar = (c: number) => !isSpace(c) && c !== 47 && c !== 63 && c !== 35 && c !== 64;

/**
 * `scheme://user:<password>@`: `check` refuses such URLs (issue 24 #11), but one in an engine's error text or a
 * log line would still carry the password. A userinfo run ends at `/`, so each run follows one `://` only.
 */
function redactUrlPasswords(text: string, st: ScanStats): string {
  let out = '';
  let copied = 0;
  let from = 0;
  for (;;) {
    const at = text.indexOf('://', from);
    if (at === -1) break;
    st.steps += at - from + 3;
    let i = at + 3;
    let colon = -1;
    while (i < text.length && isUserinfoChar(text.charCodeAt(i))) {
      st.steps++;
      if (colon === -1 && text.charCodeAt(i) === 58) colon = i;
      i++;
    }
    if (i < text.length && text.charCodeAt(i) === 64 && colon !== -1 && i > colon + 1) {
      out += text.slice(copied, colon + 1) + REDACTED;
      copied = i;
    }
    from = Math.max(i, at + 3);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The shapes, the two regexes' in the order they ran; `st` counts the characters looked at. `cutEnd`: the text was cut
 * at its end, so a credential value running into the cut is redacted whatever is left of it (its digit may be
 * in the part that was cut off).
 */
export function redactShapes(text: string, st: ScanStats = { steps: 0 }, cutEnd = false): string {
  return redactUrlPasswords(redactKeyValues(redactAuthSchemes(text, st, cutEnd), st, cutEnd), st);
}

/** Where a text was cut before it reached the redactor (a capped read, the newest bytes of a file). */
export interface Cut {
  /** The text starts in the middle of what was written. */
  start?: boolean;
  /** The text stops in the middle of what was written. */
  end?: boolean;
}

/** Fragments shorter than this are not redacted: three characters of a secret tell little, and match often. */
const FRAGMENT_MIN = 4;

export class Redactor {
  private secrets: string[] = [];
  private readonly sources = new Map<string, string[]>();
  private gen = 0;

  /** Changes whenever the secrets do: text redacted once and kept (the /metrics series) is stale after that. */
  get generation(): number {
    return this.gen;
  }

  /** Replaces the config's secrets (every config load). */
  set(secrets: Iterable<string>): void {
    this.setSource('config', secrets);
  }

  /** Replaces the secrets of one named source (the config, a watched env file, …); others are kept. */
  setSource(source: string, secrets: Iterable<string>): void {
    this.sources.set(source, [...secrets]);
    // Longest first, so a token that contains another is replaced whole.
    // Log lines are redacted after pino serialised them, so a secret holding `"` or `\` appears there
    // JSON-escaped: match that form too.
    const all = new Set<string>();
    for (const list of this.sources.values()) {
      for (const s of list) {
        all.add(s);
        all.add(JSON.stringify(s).slice(1, -1));
      }
    }
    this.secrets = [...all].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
    this.gen++;
  }

  /** Drops a named source's secrets. */
  dropSource(source: string): void {
    if (this.sources.delete(source)) this.setSource('config', this.sources.get('config') ?? []);
  }

  /**
   * Replaces every secret and credential shape in `text`. Where the text was cut (`cut`), a secret cut in two
   * leaves a fragment the whole-secret match cannot see (the 300-character error snippet showed 18 of a
   * token's 20 characters): a prefix of a secret at a cut end, or a suffix at a cut start, goes too.
   */
  redact(text: string, cut: Cut = {}): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    if (cut.end) out = this.redactFragment(out, 'end');
    if (cut.start) out = this.redactFragment(out, 'start');
    return redactShapes(out, { steps: 0 }, cut.end === true);
  }

  /**
   * Redacts, then clips to `max` characters: in this order, so the clip cannot cut a secret into a fragment
   * the redactor no longer recognises. Every place that shortens text for a message uses this.
   */
  clip(text: string, max: number, cut: Cut = {}): string {
    // Only as much as can reach the first `max` characters is looked at (a 16 MB body clipped to 200 costs
    // no more than 200 does): every secret starting there ends within `reach`, and a credential value running
    // past it counts as cut.
    const reach = max + Math.max(1024, this.secrets[0]?.length ?? 0);
    const cutHere = text.length > reach;
    return this.redact(cutHere ? text.slice(0, reach) : text, {
      ...cut,
      end: cut.end === true || cutHere,
    }).slice(0, max);
  }

  /** Whether a secret holds whitespace: it could then span the newline a chunk of text is cut after. */
  get hasSpacedSecret(): boolean {
    return this.secrets.some((x) => /\s/.test(x));
  }

  /** The longest fragment of a secret at the cut (a prefix at the end, a suffix at the start). */
  private redactFragment(text: string, at: 'start' | 'end'): string {
    let longest = 0;
    for (const s of this.secrets) {
      for (let k = Math.min(s.length - 1, text.length); k >= Math.max(FRAGMENT_MIN, longest + 1); k--) {
        const hit = at === 'end' ? text.endsWith(s.slice(0, k)) : text.startsWith(s.slice(s.length - k));
        if (hit) {
          longest = k;
          break;
        }
      }
    }
    if (longest === 0) return text;
    return at === 'end' ? text.slice(0, text.length - longest) + REDACTED : REDACTED + text.slice(longest);
  }
}

/**
 * `redact(text)`, a chunk of about `chunkChars` at a time with the event loop let through in between: an
 * 8 MB log window in an incident bundle is 60 ms or more of scanning in one piece, while the daemon must keep
 * probing. 64 KiB is under a millisecond of CPU (0.7 ms median on bench:adversarial row 2's `a-` prompt lines,
 * 256 KiB 2.7 ms): the redactor holds the loop little even where the host's load stretches its slices (issue 37,
 * item 9). Chunks end after a newline that no match can reach across (`safeCut`), so the result is the same
 * as redacting the whole; where a secret of the process-wide redactor (which holds the config's) contains
 * whitespace, the text is redacted whole rather than risk a different answer.
 */
export async function redactInChunks(
  text: string,
  redact: (text: string) => string,
  chunkChars = 64 * 1024,
): Promise<string> {
  if (text.length <= chunkChars || redactor.hasSpacedSecret) return redact(text);
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = chunkEnd(text, start, chunkChars);
    parts.push(redact(text.slice(start, end)));
    start = end;
    if (start < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return parts.join('');
}

/**
 * Where a chunk of `text` from `start` ends: after a newline near `start + size` that no shape can match
 * across, or the text's end. Only a whitespace run lets a match cross a newline (`Bearer\n<token>`,
 * `token:\n  <value>`), and only after a scheme word, a keyword, a quote, `=` or `:`.
 */
function chunkEnd(text: string, start: number, size: number): number {
  let nl = text.indexOf('\n', start + size);
  while (nl !== -1) {
    if (safeCut(text, nl)) return nl + 1;
    // Every newline of this whitespace run has the same left side: skip the run (no quadratic walk back).
    let j = nl + 1;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    nl = text.indexOf('\n', j);
  }
  return text.length;
}

const CUT_UNSAFE_WORDS = [
  'bearer',
  'basic',
  'apikey',
  'api_key',
  'api-key',
  'token',
  'secret',
  'password',
  'passwd',
];

/** Whether a cut after the newline at `nl` leaves every match on one side. */
function safeCut(text: string, nl: number): boolean {
  let i = nl;
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  if (i === 0) return true;
  const c = text.charCodeAt(i - 1);
  if (c === 61 || c === 58 || isQuote(c)) return false;
  if (!isLetter(c)) return true;
  const tail = text.slice(Math.max(0, i - 8), i).toLowerCase();
  return !CUT_UNSAFE_WORDS.some((w) => tail.endsWith(w));
}

/** One process-wide redactor, fed by every config load; the logger and HTTP outputs consult it. */
export const redactor = new Redactor();
