// A streaming parser for the Prometheus text exposition format (0.0.4), enough to read engine /metrics: samples
// with labels (escaped values), comments skipped, NaN/±Inf, optional timestamps. It reads bytes as they arrive
// and holds at most one line (maxLineBytes) plus what it retains, so its memory is bounded by its limits, not by
// the body: an engine's labels can carry user-chosen text (a router's per-path series), and the old parser held
// the whole body, every line of it as a string and every label value as a rope of one-character strings (~70×
// the body, bench/scrape-memory.mjs). What is retained is fresh flat strings, never slices of a chunk.
//
// Nothing is retained that nobody reads: with `families`, only those families' samples; with `labels`, only those
// label names; each label value cut at maxLabelValueBytes; at most maxSeriesPerFamily series per family and
// maxSeries in all. Lines are still checked whether retained or not, so the caller can tell a body that is not
// exposition format (`bad` lines, or no sample at all) from one it merely did not keep.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  samples: Sample[];
  /** Lines that are not exposition format (skipped). */
  bad: number;
  /** Well-formed sample lines, retained or not. */
  lines: number;
  /** Well-formed sample lines not retained because a family or the whole scrape was at its series limit. */
  dropped: number;
  /** Lines over maxLineBytes, skipped unread. */
  overlong: number;
}

export interface ParseLimits {
  maxLineBytes: number;
  maxLabelValueBytes: number;
  maxLabels: number;
  maxSeriesPerFamily: number;
  maxSeries: number;
}

/**
 * Far above what engines print (a vLLM histogram line with its labels is ~300 bytes; SGLang's scheduler series
 * carry ≤ 8 labels; a data-parallel engine ≤ 64 ranks per family), far below what would cost memory.
 */
export const DEFAULT_LIMITS: ParseLimits = {
  maxLineBytes: 64 * 1024,
  maxLabelValueBytes: 1024,
  maxLabels: 64,
  maxSeriesPerFamily: 4096,
  maxSeries: 50_000,
};

export interface ParseOptions {
  /** Retain only these families (all when absent). */
  families?: ReadonlySet<string>;
  /** Retain only these label names (all when absent). */
  labels?: ReadonlySet<string>;
  limits?: Partial<ParseLimits>;
}

const NL = 0x0a;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0d;
const isAlpha = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isNameStart = (c: number | undefined) => c !== undefined && (isAlpha(c) || c === 0x3a);
const isNameChar = (c: number | undefined) => c !== undefined && (isAlpha(c) || isDigit(c) || c === 0x3a);
const isLabelStart = (c: number | undefined) => c !== undefined && isAlpha(c);
const isLabelChar = (c: number | undefined) => c !== undefined && (isAlpha(c) || isDigit(c));

export class PromTextParser {
  private readonly limits: ParseLimits;
  private readonly out: ParsedMetrics = { samples: [], bad: 0, lines: 0, dropped: 0, overlong: 0 };
  /** The line cut by a chunk boundary: one buffer of maxLineBytes, reused (a copy, so no chunk is retained). */
  private readonly carry: Buffer;
  private carried = 0;
  /** Inside a line over maxLineBytes: everything up to its newline is dropped. */
  private skipping = false;
  /** Family name → its interned name and how many series of it are retained. */
  private readonly family = new Map<string, { name: string; n: number }>();

  constructor(private readonly opts: ParseOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.carry = Buffer.allocUnsafe(this.limits.maxLineBytes);
  }

  /** Bytes of a cut line held until its newline arrives: never more than maxLineBytes. */
  get pending(): number {
    return this.carried;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NL, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.skipping) {
        if (nl === -1) return;
        this.skipping = false;
      } else if (this.carried + (end - start) > this.limits.maxLineBytes) {
        this.out.overlong++;
        this.carried = 0;
        this.skipping = nl === -1;
      } else if (nl === -1) {
        chunk.copy(this.carry, this.carried, start, end);
        this.carried += end - start;
        return;
      } else if (this.carried > 0) {
        chunk.copy(this.carry, this.carried, start, end);
        const n = this.carried + (end - start);
        this.line(this.carry.subarray(0, n), n);
        this.carried = 0;
      } else {
        this.line(chunk.subarray(start, end), end - start);
      }
      start = end + 1;
    }
  }

  end(): ParsedMetrics {
    if (this.carried > 0 && !this.skipping) this.line(this.carry.subarray(0, this.carried), this.carried);
    this.carried = 0;
    return this.out;
  }

  /** One line, b[0..len) (b is the line: nothing past it is read): checked whole, retained only when wanted. */
  private line(b: Buffer, len: number): void {
    let i = 0;
    // The next backslash at or after i, found once and reused: a scan per label would be quadratic in labels.
    let nextEscape = -1;
    while (i < len && isSpace(b[i])) i++;
    while (len > i && isSpace(b[len - 1])) len--;
    if (i === len || b[i] === 0x23 /* # */) return;
    if (!isNameStart(b[i])) return void this.out.bad++;
    const n0 = i;
    while (i < len && isNameChar(b[i])) i++;
    const rawName = b.toString('latin1', n0, i);
    const wanted = this.opts.families === undefined || this.opts.families.has(rawName);
    let labels: Record<string, string> | undefined = wanted ? {} : undefined;
    let count = 0;
    if (i < len && b[i] === 0x7b /* { */) {
      i++;
      for (;;) {
        while (i < len && isSpace(b[i])) i++;
        if (i < len && b[i] === 0x7d /* } */) {
          i++;
          break;
        }
        if (!isLabelStart(b[i])) return void this.out.bad++;
        const l0 = i;
        while (i < len && isLabelChar(b[i])) i++;
        const l1 = i;
        while (i < len && isSpace(b[i])) i++;
        if (b[i] !== 0x3d /* = */) return void this.out.bad++;
        i++;
        while (i < len && isSpace(b[i])) i++;
        if (b[i] !== 0x22 /* " */) return void this.out.bad++;
        const v0 = ++i;
        let escaped = false;
        // The closing quote is the first one not escaped; indexOf is a native scan (values can be long).
        for (;;) {
          const q = b.indexOf(0x22, i);
          if (q === -1 || q >= len) return void this.out.bad++;
          if (nextEscape !== Infinity && nextEscape < i) {
            nextEscape = b.indexOf(0x5c, i);
            if (nextEscape === -1) nextEscape = Infinity;
          }
          if (nextEscape > q) {
            i = q;
            break;
          }
          escaped = true;
          i = nextEscape + 2;
        }
        const v1 = i++;
        if (++count > this.limits.maxLabels) labels = undefined;
        if (labels !== undefined) {
          const key = b.toString('latin1', l0, l1);
          if (key !== '__proto__' && (this.opts.labels === undefined || this.opts.labels.has(key))) {
            labels[key] = labelValue(b, v0, v1, escaped, this.limits.maxLabelValueBytes);
          }
        }
        while (i < len && isSpace(b[i])) i++;
        if (b[i] === 0x2c /* , */) i++;
        else if (b[i] !== 0x7d) return void this.out.bad++;
      }
    }
    // The value, then an optional timestamp, separated by blanks.
    const tokens = b
      .toString('latin1', i, len)
      .trim()
      .split(/[ \t]+/);
    if (tokens.length > 2 || tokens[0] === '' || (i < len && !isSpace(b[i]))) return void this.out.bad++;
    const value = parseValue(tokens[0]!);
    if (value === undefined) return void this.out.bad++;
    if (tokens[1] !== undefined && !/^-?\d+$/.test(tokens[1])) return void this.out.bad++;
    this.out.lines++;
    if (!wanted) return;
    if (labels === undefined) return void this.out.dropped++;
    let fam = this.family.get(rawName);
    if (fam === undefined) {
      fam = { name: rawName, n: 0 };
      this.family.set(rawName, fam);
    }
    if (fam.n >= this.limits.maxSeriesPerFamily || this.out.samples.length >= this.limits.maxSeries) {
      return void this.out.dropped++;
    }
    fam.n++;
    this.out.samples.push({ name: fam.name, labels, value });
  }
}

/** A label value, unescaped (\\ \" \n), cut at `max` bytes (never inside an escape). */
function labelValue(b: Buffer, v0: number, v1: number, escaped: boolean, max: number): string {
  let end = Math.min(v1, v0 + max);
  if (!escaped) return b.toString('utf8', v0, end);
  // An odd run of backslashes at the cut would leave half an escape.
  let k = end;
  while (k > v0 && b[k - 1] === 0x5c) k--;
  if ((end - k) % 2 === 1) end--;
  return b.toString('utf8', v0, end).replace(/\\([\s\S])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** Go's strconv.ParseFloat spellings Prometheus accepts, besides what Number() reads. */
function parseValue(v: string): number | undefined {
  const lower = v.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === '+inf' || lower === 'inf' || lower === '+infinity' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  const n = Number(v);
  return Number.isNaN(n) ? undefined : n;
}

/** The whole text at once (tests, fixtures): the streaming parser over one chunk. */
export function parsePrometheusText(text: string, opts: ParseOptions = {}): ParsedMetrics {
  const p = new PromTextParser(opts);
  p.push(Buffer.from(text, 'utf8'));
  return p.end();
}

/** A body is exposition format when every line is and it holds at least one sample. */
export function notExposition(p: ParsedMetrics): string | undefined {
  if (p.bad > 0) return `not Prometheus text format: ${p.bad} malformed line(s)`;
  if (p.lines === 0) return 'not Prometheus text format: no samples';
  return undefined;
}
