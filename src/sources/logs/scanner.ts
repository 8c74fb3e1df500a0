// Turns the bytes of one file into lines and rule matches, fast. Chunks are decoded as latin1 (one char
// per byte: cheap, and string offsets are byte offsets); newline splitting happens on bytes, so a UTF-8
// character split across two reads is whole again before any line is decoded as UTF-8. Only lines the
// prefilter flags (and lines inside an open multi-line rule) are decoded and matched.
import { batchLineClose, isBatchLine } from './batch-lines.js';
import {
  ENGINE_LINE_MARKERS,
  ENGINE_LINE_OWN,
  ENGINE_LINE_PARSERS,
  ENGINE_LINE_PARSERS_AT,
  ENGINE_LINE_RANK,
  parseSglangHeadAt,
  type EngineLine,
} from './engine-lines.js';
import type { EngineLineKind } from './packs/index.js';
import type { CarrierCut } from './carriers.js';
import { echoAfterPrefix, isRequestEcho } from './request-echo.js';
import type { RuleSet } from './rules/compile.js';
import { LineMatcher, type MatcherOptions, type RuleMatch } from './rules/matcher.js';
import {
  decodeStructured,
  DEFAULT_STRUCTURED_KEYS,
  type StructuredFormat,
  type StructuredKeys,
} from './formats/structured.js';
import {
  emptyView,
  jsonView,
  viewKeys,
  viewTime,
  type JsonView,
  type ViewKeys,
} from './formats/json-view.js';

export interface ScanSink {
  match(m: RuleMatch): void;
  /** A match folded into an incident already raised, or a repeat of one request's line: counted, no event. */
  member?(m: RuleMatch): void;
  /** The last periodic engine line of each kind and rank in a chunk (gauges keep the last value). */
  engine(line: EngineLine): void;
  /** A line longer than the limit was cut (called once per such line). */
  truncated(): void;
  /** A line not in the declared structured format (json, logfmt): matched as plain text. */
  decodeError?(format: StructuredFormat): void;
  /** A carrier record of user text was cut off at a cap (carriers.ts); the lines after it are scanned. */
  carrierCut?(carrier: string, cap: CarrierCut): void;
}

/** How a source's lines carry their records (formats/structured.ts); `auto` decides line by line. */
export interface StructuredOptions {
  format: StructuredFormat | 'auto';
  keys?: StructuredKeys;
}

export class ChunkScanner {
  /** Complete lines seen. */
  lines = 0;
  // The incomplete last line, as bytes (at most maxLineBytes of it), and its full length so far.
  // Kept as a Buffer: joining it to the next chunk as a string made every chunk a cons string, which
  // V8 then searched ten times slower.
  private carry: Buffer = Buffer.alloc(0);
  private carryLen = 0;
  /** File offset of the first byte of the incomplete line. */
  private carryStart: number;
  private readonly matcher: LineMatcher;
  private readonly markers: [string, EngineLineKind][];
  /** Ranks seen printing each marker: a chunk's backward search stops once it has found them all. */
  private readonly ranks = new Map<string, Set<string>>();
  /** Lines may be JSON records: their messages are looked at in place (formats/json-view.ts). */
  private readonly jsonKeys: ViewKeys | undefined;
  private readonly view: JsonView = emptyView();
  /**
   * File offsets of this chunk's lines that a carrier record holds (the matcher's `shielded`): user text, so no
   * engine line is read from them (issue 37 item 4). Refilled per chunk; empty unless a carrier was open.
   */
  private readonly shieldedAt = new Set<number>();

  constructor(
    readonly set: RuleSet,
    private readonly maxLineBytes: number,
    private readonly sink: ScanSink,
    startOffset = 0,
    /** Every periodic engine line, not only the last per rank of each chunk (replay's verdict timeline). */
    private readonly everyEngineLine = false,
    /** The matcher's clock and windows (rules/matcher.ts MatcherOptions); members go to the sink's `member`. */
    matcherOptions: MatcherOptions = {},
    /** Lines are structured records (JSON, logfmt): rules run on their messages. */
    private readonly structured?: StructuredOptions,
  ) {
    this.matcher = new LineMatcher(set, {
      ...matcherOptions,
      ...(sink.member ? { onMember: (m: RuleMatch) => sink.member!(m) } : {}),
      ...(sink.carrierCut ? { onCarrierCut: (c: string, cap: CarrierCut) => sink.carrierCut!(c, cap) } : {}),
    });
    this.carryStart = startOffset;
    if (structured !== undefined && structured.format !== 'logfmt') {
      this.jsonKeys = viewKeys(structured.keys ?? DEFAULT_STRUCTURED_KEYS);
    }
    this.markers = set.engineLines.flatMap((k) =>
      ENGINE_LINE_MARKERS[k].map((m): [string, EngineLineKind] => [m, k]),
    );
  }

  /** Offset just after the last complete line: where a restart must resume. */
  get committed(): number {
    return this.carryStart;
  }

  get hasPartial(): boolean {
    return this.carryLen > 0;
  }

  /** Offset of the first line whose event the matcher still holds (rules/matcher.ts `heldFrom`), else undefined. */
  get heldFrom(): number | undefined {
    return this.matcher.heldFrom;
  }

  /** Forget everything (the file was truncated in place): the next byte fed is at `offset`. */
  reset(offset = 0): void {
    this.carry = Buffer.alloc(0);
    this.carryLen = 0;
    this.carryStart = offset;
    this.matcher.reset();
  }

  /** Feeds `buf[0, n)`, the bytes that follow everything fed so far. */
  feed(buf: Buffer, n: number): void {
    this.shieldedAt.clear();
    let start = 0;
    if (this.carryLen > 0) {
      const nl = buf.indexOf(10);
      if (nl < 0 || nl >= n) {
        this.extendCarry(buf, 0, n);
        return;
      }
      this.extendCarry(buf, 0, nl);
      this.endCarriedLine(1);
      start = nl + 1;
    }
    const last = n > start ? buf.lastIndexOf(10, n - 1) : -1;
    if (last >= start) {
      const s = buf.toString('latin1', start, last + 1);
      if (this.everyEngineLine && this.set.skipBatchLines && this.markers.length > 0) {
        // One walk over the lines does both (the timeline needs nearly every batch line's position).
        this.scanWithEngineLines(s, s.length - 1, this.carryStart);
      } else {
        this.scan(s, s.length - 1, this.carryStart);
        if (this.markers.length > 0) this.engineLines(buf, start, last, s);
      }
      this.carryStart += last + 1 - start;
      start = last + 1;
    }
    if (start < n) this.extendCarry(buf, start, n);
  }

  /** Emits the incomplete last line as if it had ended (after an idle time, or at end of input). */
  flush(): void {
    if (this.carryLen > 0) this.endCarriedLine(0);
    this.matcher.finish((m) => this.sink.match(m));
  }

  /** Quiet for a while: raise multi-line matches whose header alone is decisive, keep the partial line. */
  settle(): void {
    this.matcher.finish((m) => this.sink.match(m));
  }

  private extendCarry(buf: Buffer, from: number, to: number): void {
    const room = this.maxLineBytes - this.carry.length;
    const before = this.carryLen;
    if (room > 0 && to > from) {
      // Copied: the caller reuses its read buffer.
      this.carry = Buffer.concat([this.carry, buf.subarray(from, Math.min(to, from + room))]);
    }
    this.carryLen += to - from;
    if (before <= this.maxLineBytes && this.carryLen > this.maxLineBytes) this.sink.truncated();
  }

  /** The carried line is complete; `extra` bytes (its newline) follow it in the file. */
  private endCarriedLine(extra: number): void {
    const text = this.carry.toString('latin1');
    this.lines++;
    const shielded = this.emitLine(text, this.carryStart, this.carryLen > this.maxLineBytes);
    const view = this.viewOf(text, 0, text.length);
    for (const [marker, kind] of this.markers) {
      if (!shielded && text.includes(marker)) {
        const v = view ? this.engineOfView(text, view, kind) : ENGINE_LINE_PARSERS[kind](text);
        if (v) this.sink.engine(v);
      }
    }
    this.carryStart += this.carryLen + extra;
    this.carry = Buffer.alloc(0);
    this.carryLen = 0;
  }

  /**
   * Matches one line (`cut`: the scanner cut it at maxLineBytes, so its end is not the line's); returns whether it
   * is no engine's own record to read gauges from (then noted in `shieldedAt`): a carrier record holds it, or it is
   * a structured record whose message is ambiguous.
   */
  private emitLine(latin1: string, offset: number, cut = false): boolean {
    if (this.matchOne(latin1, offset, cut) && !this.matcher.shielded) return false;
    this.shieldedAt.add(offset);
    return true;
  }

  /** Gives the line to the matcher; false when it did not (an ambiguous structured record). */
  private matchOne(latin1: string, offset: number, cut: boolean): boolean {
    let line = Buffer.from(latin1, 'latin1').toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const st = this.structured;
    if (st !== undefined) {
      const rec = decodeStructured(line, st.format, st.keys ?? DEFAULT_STRUCTURED_KEYS);
      if (rec?.ambiguous !== undefined) {
        // Two message keys, or one twice (issue 37): no message is surely the logger's, so no rule reads any;
        // counted as a line its format could not read; no gauge is read from it either (held as shielded).
        this.sink.decodeError?.(rec.format);
        return false;
      }
      if (rec !== null) {
        // The message's lines, as the engine would have printed them: the first is the logger's record.
        const time = rec.time;
        // A request echo's message is the user's text, all of it: only its head line is matched (and guarded).
        const n = isRequestEcho(rec.lines[0]!) ? 1 : rec.lines.length;
        for (let i = 0; i < n; i++) {
          this.matcher.match(
            rec.lines[i]!,
            offset,
            this.emit,
            this.lines,
            { head: i === 0, ...(time !== undefined ? { time } : {}) },
            cut && i === n - 1,
          );
        }
        return true;
      }
      // Not a record in the declared format: matched as plain text, and counted (never dropped).
      if (st.format !== 'auto') this.sink.decodeError?.(st.format);
    }
    this.matcher.match(line, offset, this.emit, this.lines, undefined, cut);
    return true;
  }

  private readonly emit = (m: RuleMatch): void => this.sink.match(m);

  /**
   * The view of s[p, end) when the source's lines may be JSON records and this one's message can be read in place
   * (valid until the next call). The prefilter, batch lines and engine lines then look at the message, as they
   * look at a plain line: a record's wrapper around it (keys, level, time) is no text of the engine's. A line the
   * prefilter passes is decoded in full by emitLine, so what rules see does not depend on the view.
   */
  private viewOf(s: string, p: number, end: number): JsonView | null {
    const keys = this.jsonKeys;
    if (keys === undefined || s.charCodeAt(p) !== 123 /* { */) return null;
    return jsonView(s, p, end, keys, this.view);
  }

  /**
   * An engine line read from a record's message; a message without a stamp of its own takes the record's time. `head`:
   * where the timeline walk found its batch header (the view is read again in place, so the same position).
   */
  private engineOfView(s: string, v: JsonView, kind: EngineLineKind, head?: number): EngineLine | undefined {
    const e =
      head !== undefined
        ? parseSglangHeadAt(s, v.from, v.to, head)
        : ENGINE_LINE_PARSERS_AT[kind](s, v.from, v.to);
    if (e !== undefined && e.stamp === undefined) {
      const t = viewTime(s, v);
      if (t !== undefined) e.stamp = t;
    }
    return e;
  }

  /** Scans s[0, last] (complete lines; s[last] is '\n'); `base` is the file offset of s[0]. */
  private scan(s: string, last: number, base: number): void {
    if (this.set.skipBatchLines) return this.scanSkippingBatchLines(s, last, base);
    const max = this.maxLineBytes;
    const pre = this.set.prefilter;
    const every = this.set.everyLine || pre === null;
    const nextHit = (from: number): number => {
      if (every) return -1;
      pre!.lastIndex = from;
      const m = pre!.exec(s);
      return m ? m.index : Infinity;
    };
    let hit = every ? -1 : nextHit(0);
    let p = 0;
    while (p <= last) {
      if (!every && !this.matcher.hasPending) {
        // Jump to the line holding the next candidate, counting the lines skipped on the way.
        const target = hit > last ? last + 1 : s.lastIndexOf('\n', hit - 1) + 1;
        if (target > p) p = this.count(s, p, target);
        if (p > last) break;
      }
      const nl = s.indexOf('\n', p);
      this.lines++;
      if (nl - p > max) {
        this.sink.truncated();
        this.emitLine(s.slice(p, p + max), base + p, true);
      } else {
        this.emitLine(s.slice(p, nl), base + p);
      }
      p = nl + 1;
      if (!every && hit < p) hit = nextHit(p);
    }
  }

  /** A line s[p, nl) is scanned: counted, and cut at maxLineBytes (counted as truncated); returns where it ends. */
  private lineAt(p: number, nl: number): number {
    this.lines++;
    if (nl - p <= this.maxLineBytes) return nl;
    this.sink.truncated();
    return p + this.maxLineBytes;
  }

  /** Like scan, for rule sets that cannot match a batch line: those are recognised by their prefix and skipped. */
  private scanSkippingBatchLines(s: string, last: number, base: number): void {
    const pre = this.set.linePrefilter!;
    const echoes = this.set.skipRequestEchoes;
    // The matcher's hasPending, read again only after it was given a line (nothing else changes it).
    let pending = this.matcher.hasPending;
    let p = 0;
    while (p <= last) {
      const nl = s.indexOf('\n', p);
      const end = this.lineAt(p, nl);
      // The engine's text: the line, or a JSON record's message (viewOf).
      const v = this.jsonKeys === undefined ? null : this.viewOf(s, p, end);
      const vp = v === null ? p : v.from;
      const ve = v === null ? end : v.to;
      // A multi-line rule in progress must see every line (it counts them against `within`).
      if (
        pending ||
        (!isBatchLine(s, vp, ve) && !(echoes && echoAfterPrefix(s, p, end)) && pre.test(s.slice(vp, ve)))
      ) {
        this.emitLine(s.slice(p, end), base + p, end !== nl);
        pending = this.matcher.hasPending;
      }
      p = nl + 1;
    }
  }

  /**
   * scanSkippingBatchLines plus the engine lines the verdict timeline needs (see everyLineOf): a batch line is
   * known by its prefix on the walk the rules make anyway, so its stamp and rank are read there; other lines
   * are searched for the markers, each marker's next occurrence remembered so no search runs past it twice.
   */
  private scanWithEngineLines(s: string, last: number, base: number): void {
    const pre = this.set.linePrefilter!;
    const markers = this.markers;
    const echoes = this.set.skipRequestEchoes;
    // The matcher's hasPending, read again only after it was given a line (nothing else changes it).
    let pending = this.matcher.hasPending;
    // Each marker's next occurrence; a typed array, whose map never changes (the array `map` made deoptimized this
    // function once per process: a second compile of the scanner's largest function).
    const next = new Int32Array(markers.length);
    for (let k = 0; k < markers.length; k++) next[k] = s.indexOf(markers[k]![0]);
    const found: Found[] = [];
    const batch = new SecondRanks(found);
    const json = this.jsonKeys !== undefined;
    let p = 0;
    while (p <= last) {
      const nl = s.indexOf('\n', p);
      const end = this.lineAt(p, nl);
      // The engine's text: the line, or a JSON record's message (viewOf; `record` is then the line's start).
      let vp = p;
      let ve = end;
      let vnl = nl;
      let record = -1;
      const v = json ? this.viewOf(s, p, end) : null;
      if (v !== null) {
        vp = v.from;
        ve = vnl = v.to;
        record = p;
      }
      const close = batchLineClose(s, vp, ve);
      // Matched first: whether a carrier holds the line decides whether its engine line counts.
      let shielded = false;
      if (pending || (close < 0 && !(echoes && echoAfterPrefix(s, p, end)) && pre.test(s.slice(vp, ve)))) {
        shielded = this.emitLine(s.slice(p, end), base + p, end !== nl);
        pending = this.matcher.hasPending;
      }
      if (shielded) {
        // User text: no engine line (issue 37 item 4).
      } else if (close >= 0) {
        // Found at the batch header (`] ` + 2), which a plain line's parse starts from (parseSglangHeadAt).
        if (sglangStampAt(s, vp)) batch.add(s, vp, close, record);
        else found.push([close + 2, 'sglang_batch', record, true]);
      } else {
        for (let k = 0; k < markers.length; k++) {
          if (next[k]! >= 0 && next[k]! < vp) next[k] = s.indexOf(markers[k]![0], vp);
          if (next[k]! >= 0 && next[k]! < vnl) found.push([next[k]!, markers[k]![1], record]);
        }
      }
      p = nl + 1;
    }
    batch.flush();
    found.sort((a, b) => a[0] - b[0]);
    for (const [at, kind, record, head] of found) {
      if (record >= 0) {
        // A record's message: read again in place (the view of a kept line; most batch lines are thinned away).
        const end = s.indexOf('\n', record);
        if (end - record > this.maxLineBytes) continue;
        const view = this.viewOf(s, record, end);
        const v = view ? this.engineOfView(s, view, kind, head === true ? at : undefined) : undefined;
        if (v) this.sink.engine(v);
        continue;
      }
      const from = s.lastIndexOf('\n', at) + 1;
      const end = s.indexOf('\n', at);
      if (end - from > this.maxLineBytes) continue;
      // A batch line's header is where the walk found it (batchLineClose + 2); a marker found elsewhere in a line
      // (after a compose prefix, or quoted by a request echo) is judged by the parser (batchHeaderAt).
      const v =
        head === true ? parseSglangHeadAt(s, from, end, at) : ENGINE_LINE_PARSERS_AT[kind](s, from, end);
      if (v) this.sink.engine(v);
    }
  }

  /** Counts the lines in s[from, to) (to is a line start), noting over-long ones; returns `to`. */
  private count(s: string, from: number, to: number): number {
    const max = this.maxLineBytes;
    let p = from;
    let n = 0;
    while (p < to) {
      const nl = s.indexOf('\n', p);
      if (nl - p > max) this.sink.truncated();
      n++;
      p = nl + 1;
    }
    this.lines += n;
    return to;
  }

  /** `s` is buf[start, last] as latin1 (what scan() read). */
  private engineLines(buf: Buffer, start: number, last: number, s: string): void {
    // Gauges keep only the last value, so only the last line of each kind and rank in the chunk matters;
    // lines are applied in file order so a later line's fields win. Searched backwards on the Buffer (V8's
    // String#lastIndexOf is a naive scan, Buffer#lastIndexOf is not), reading only each line's prefix for its
    // rank, until every rank seen so far has been found (or MAX_RANK_WALK lines were looked at).
    const found: Found[] = [];
    if (this.everyEngineLine) {
      for (const [marker, kind] of this.markers) everyLineOf(s, start, marker, kind, found);
      return this.emitEngineLines(buf, start, found);
    }
    for (const [marker, kind] of this.markers) {
      const known = this.ranks.get(marker) ?? new Set<string>();
      const seen = new Set<string>();
      let at = buf.lastIndexOf(marker, last, 'latin1');
      // The first line of the kind is always taken; other ranks are looked for in the chunk's tail only (ranks
      // print in step, so their last lines sit close together; one missed keeps its value until the next chunk).
      const floor = Math.max(start, at - RANK_WINDOW);
      for (let steps = 0; at >= start && steps < MAX_RANK_WALK; steps++) {
        const from = Math.max(start, buf.lastIndexOf(10, at) + 1);
        const end = buf.indexOf(10, at);
        // A JSON record's rank is in its message's prefix.
        const view = this.jsonKeys === undefined ? null : this.viewOf(s, from - start, end - start);
        const rankFrom = view ? start + view.from : from;
        // Only the engine's own line stands for its rank: a request echo quoting a batch line, or a line a carrier
        // holds, after the rank's real line must not hide it (issue 37 item 4).
        const own =
          ENGINE_LINE_OWN[kind](s, rankFrom - start, view ? view.to : end - start, at - start) &&
          !this.shieldedAt.has(this.carryStart + from - start);
        const rank = own ? ENGINE_LINE_RANK[kind](buf, rankFrom, Math.min(at, rankFrom + 256)) : undefined;
        if (rank !== undefined && !seen.has(rank)) {
          seen.add(rank);
          found.push([at, kind, -1]);
          if (known.size > 0 && seen.size >= known.size && [...known].every((r) => seen.has(r))) break;
        }
        at = from - 1 >= floor ? buf.lastIndexOf(marker, from - 1, 'latin1') : -1;
        if (at < floor) break;
      }
      for (const r of seen) if (known.size < MAX_RANKS) known.add(r);
      this.ranks.set(marker, known);
    }
    this.emitEngineLines(buf, start, found);
  }

  private emitEngineLines(buf: Buffer, start: number, found: Found[]): void {
    found.sort((a, b) => a[0] - b[0]);
    for (const [at, kind] of found) {
      const from = Math.max(start, buf.lastIndexOf(10, at) + 1);
      const end = buf.indexOf(10, at);
      if (end - from > this.maxLineBytes) continue;
      if (this.shieldedAt.size > 0 && this.shieldedAt.has(this.carryStart + from - start)) continue;
      const text = buf.toString('latin1', from, end);
      const view = this.viewOf(text, 0, text.length);
      const v = view ? this.engineOfView(text, view, kind) : ENGINE_LINE_PARSERS[kind](text);
      if (v) this.sink.engine(v);
    }
  }
}

/**
 * Every line of one kind in the chunk text `s` (which starts at buffer offset `base`), for the verdict timeline,
 * less the SGLang batch lines a later line of the same rank and the same second supersedes: the timeline runs
 * on the lines' own stamps, which have one-second resolution, and a batch line always reports progress, so the
 * last line of a rank in a second says all the others do. Decided by position (stamp and rank) before any line
 * is parsed: a busy engine prints tens of batch lines a second, and parsing and reducing each one made replay
 * twenty times slower. vLLM prints its stats line every 10 s and its progress differs line by line: all kept.
 * Searched on the string: one Buffer#indexOf per line costs more than the line's whole handling here.
 */
function everyLineOf(s: string, base: number, marker: string, kind: EngineLineKind, found: Found[]): void {
  const seconds = kind === 'sglang_batch' ? new SecondRanks(found, base) : undefined;
  for (let a = s.indexOf(marker); a >= 0;) {
    const from = s.lastIndexOf('\n', a) + 1;
    // A plain line whose marker is not where the engine prints it (a request echo quoting one) is no engine line,
    // and must not supersede the rank's real line of its second. JSON records are read from their message later.
    const own = s.charCodeAt(from) === 123 /* { */ || ENGINE_LINE_OWN[kind](s, from, s.indexOf('\n', a), a);
    if (!own) {
      // skipped
    } else if (seconds && sglangStampAt(s, from)) seconds.add(s, from, a - 1);
    else found.push([base + a, kind, -1]);
    const nl = s.indexOf('\n', a);
    a = nl < 0 ? -1 : s.indexOf(marker, nl);
  }
  seconds?.flush();
}

/**
 * The last SGLang batch line of each rank and kind (Prefill or Decode) within each second, for lines fed in file
 * order; `close` is the `]` that ends the line's prefix (the kind's name follows it).
 */
class SecondRanks {
  // The current second's line start (-1: none yet) and the last line of each rank and kind in it.
  private second = -1;
  private readonly pending = new Map<number, number>();
  /** The JSON record each pending line is the message of (scanWithEngineLines' `record`), when not -1. */
  private readonly records = new Map<number, number>();

  constructor(
    private readonly found: Found[],
    private readonly base = 0,
  ) {}

  add(s: string, from: number, close: number, record = -1): void {
    if (this.second < 0 || !sameSecond(s, this.second, from)) {
      this.flush();
      this.second = from;
    }
    // `Decode` or `Prefill` after `] `: one letter tells them apart.
    const key = sglangRankAt(s, from, close + 1) * 2 + (s.charCodeAt(close + 2) === 68 /* D */ ? 0 : 1);
    this.pending.set(key, this.base + close + 2);
    if (record >= 0 || this.records.size > 0) this.records.set(key, record);
  }

  flush(): void {
    if (this.records.size === 0) {
      for (const at of this.pending.values()) this.found.push([at, 'sglang_batch', -1, true]);
    } else {
      for (const [key, at] of this.pending)
        this.found.push([at, 'sglang_batch', this.records.get(key) ?? -1, true]);
    }
    this.pending.clear();
    this.records.clear();
  }
}

/**
 * An engine line to parse: where its kind was seen, the start of the JSON record holding it (-1: a plain line), and
 * whether `at` is an SGLang batch header already found where the engine's logger prints it (batchLineClose + 2).
 */
type Found = [at: number, kind: EngineLineKind, record: number, head?: boolean];

/** Whether s[from] starts SGLang's `[YYYY-MM-DD HH:MM:SS` prefix (the second is s[from+1, from+20)). */
function sglangStampAt(s: string, from: number): boolean {
  return (
    s.charCodeAt(from) === 91 /* [ */ &&
    s.charCodeAt(from + 5) === 45 /* - */ &&
    s.charCodeAt(from + 8) === 45 &&
    s.charCodeAt(from + 11) === 32 &&
    s.charCodeAt(from + 14) === 58 /* : */ &&
    s.charCodeAt(from + 17) === 58
  );
}

function sameSecond(s: string, a: number, b: number): boolean {
  for (let i = 19; i >= 1; i--) if (s.charCodeAt(a + i) !== s.charCodeAt(b + i)) return false;
  return true;
}

/** The DP rank in the `[time DP1 TP1 EP1]` prefix at s[from], before `end`; 0 without one. */
function sglangRankAt(s: string, from: number, end: number): number {
  for (let i = from + 20; i < end - 3; i++) {
    const c = s.charCodeAt(i);
    if (c === 93 /* ] */) break;
    if (c === 32 && s.charCodeAt(i + 1) === 68 /* D */ && s.charCodeAt(i + 2) === 80 /* P */) {
      let n = 0;
      for (let j = i + 3; s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57; j++)
        n = n * 10 + s.charCodeAt(j) - 48;
      return n;
    }
  }
  return 0;
}

/** Distinct ranks remembered per marker (DP sizes stay far below this). */
const MAX_RANKS = 64;
/** Lines a chunk's backward search looks at, at most, before giving up on finding more ranks. */
const MAX_RANK_WALK = 64;
/** Bytes before a chunk's last engine line of a kind in which the other ranks' last lines are looked for. */
const RANK_WINDOW = 2048;
