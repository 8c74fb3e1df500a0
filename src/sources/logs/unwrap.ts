// Between the file follower and the rule scanner for files a container runtime wrote (CRI, Docker JSON):
// takes the file's bytes, removes each line's wrapper, joins a line the runtime split into partial parts
// (per stream, up to maxLineBytes), and feeds the engine's own lines to the scanner. The offsets the
// follower saves stay file offsets: `committed` is just after the last line whose every part has been
// read, so a restart never re-reads a finished line and never starts in the middle of a split one.
import type { LineFormat } from './formats/index.js';

/** The scanner side: ChunkScanner has this shape, and so does Unwrapper (the follower's FileReader). */
export interface LineFeed {
  feed(buf: Buffer, n: number): void;
  flush(): void;
  /** Quiet for a while: raise multi-line matches whose header alone is decisive; keep any partial line. */
  settle(): void;
  reset(offset?: number): void;
  readonly hasPartial: boolean;
  readonly committed: number;
}

/** What the runtime recorded about one unwrapped line. */
export interface LineMeta {
  /** Offset of the line in the unwrapped stream the scanner sees (its match offsets). */
  at: number;
  /** File offset of the line's first part. */
  offset: number;
  /** Line number (1-based) of the first part in the file, counted from where reading began. */
  line?: number;
  /** The runtime's timestamp text of the first part ('' when the line was not wrapped), or Unix ms. */
  time: string | number;
  stream: string;
}

// Lines of metadata kept for match lookups: a multi-line rule spans at most 200 lines (config schema).
const META_KEEP = 4096;

/** Metadata of the last few thousand lines, looked up by the offset the scanner reports for a match. */
export class MetaRing {
  private metas: LineMeta[] = [];

  push(m: LineMeta): void {
    this.metas.push(m);
  }

  /** Called between feeds: drops old entries in bulk. */
  trim(): void {
    if (this.metas.length > 2 * META_KEEP) this.metas = this.metas.slice(-META_KEEP);
  }

  clear(): void {
    this.metas = [];
  }

  lookup(at: number): LineMeta | undefined {
    let lo = 0;
    let hi = this.metas.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = this.metas[mid]!;
      if (m.at === at) return m;
      if (m.at < at) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

interface Pending {
  parts: Buffer[];
  /** Bytes kept (at most maxLineBytes + 1, so the scanner still sees and reports an over-long line). */
  kept: number;
  offset: number;
  line: number;
  time: string;
}

export class Unwrapper implements LineFeed {
  private pos: number;
  private done: number;
  private carry: Buffer[] = [];
  private carryLen = 0;
  private carryKept = 0;
  private carryStart = 0;
  private readonly pending = new Map<string, Pending>();
  private out: Buffer[] = [];
  private unwrapped = 0;
  private readonly metas = new MetaRing();
  private rawLines = 0;
  /** A raw line longer than this is cut (its wrapper is at the start, so its text survives, truncated). */
  private readonly maxRaw: number;

  constructor(
    private readonly format: LineFormat,
    private readonly maxLineBytes: number,
    private readonly scanner: LineFeed,
    startOffset: number,
    /** A line that is not in the format (passed on as it is). */
    private readonly onMalformed?: (offset: number) => void,
  ) {
    this.pos = startOffset;
    this.done = startOffset;
    // Docker escapes can make a 16 KiB part ~6x longer on disk; leave room for that and the wrapper.
    this.maxRaw = maxLineBytes * 8 + 4096;
  }

  get committed(): number {
    return this.done;
  }

  /**
   * False: the runtime writes whole lines, and a split line is finished by its F part, however long that
   * takes; the follower's idle flush would cut it in two. Everything held is emitted when the file is let go.
   */
  get hasPartial(): boolean {
    return false;
  }

  /** Metadata of the unwrapped line at scanner offset `at` (the start of a line the scanner reported). */
  lookup(at: number): LineMeta | undefined {
    return this.metas.lookup(at);
  }

  feed(buf: Buffer, n: number): void {
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0 || nl >= n) break;
      if (this.carryLen > 0) {
        this.extendCarry(buf, start, nl);
        const raw = Buffer.concat(this.carry);
        const from = this.carryStart;
        this.carry = [];
        this.carryLen = 0;
        this.carryKept = 0;
        this.line(raw, from, this.pos + nl + 1);
      } else {
        this.line(
          buf.subarray(start, Math.min(nl, start + this.maxRaw)),
          this.pos + start,
          this.pos + nl + 1,
        );
      }
      start = nl + 1;
    }
    if (start < n) {
      if (this.carryLen === 0) this.carryStart = this.pos + start;
      this.extendCarry(buf, start, n);
    }
    this.pos += n;
    this.emit();
  }

  /** The file is being let go (or input ended): what is held is all there will be. */
  flush(): void {
    if (this.carryLen > 0) {
      const raw = Buffer.concat(this.carry);
      this.carry = [];
      this.carryLen = 0;
      this.carryKept = 0;
      this.line(raw, this.carryStart, this.pos);
    }
    const held = [...this.pending.entries()].sort((a, b) => a[1].offset - b[1].offset);
    this.pending.clear();
    for (const [stream, p] of held) this.push(Buffer.concat(p.parts), p.offset, p.line, p.time, stream);
    this.done = this.pos;
    this.emit();
    this.scanner.flush();
  }

  settle(): void {
    this.scanner.settle();
  }

  reset(offset = 0): void {
    this.pos = offset;
    this.done = offset;
    this.carry = [];
    this.carryLen = 0;
    this.carryKept = 0;
    this.pending.clear();
    this.rawLines = 0;
    this.out = [];
    this.unwrapped = 0;
    this.metas.clear();
    this.scanner.reset(0);
  }

  private extendCarry(buf: Buffer, from: number, to: number): void {
    const keep = Math.min(to - from, this.maxRaw - this.carryKept);
    // Copied: the follower reuses its read buffer.
    if (keep > 0) this.carry.push(Buffer.from(buf.subarray(from, from + keep)));
    this.carryKept += Math.max(keep, 0);
    this.carryLen += to - from;
  }

  /** One line of the file, [offset, end) including its newline. */
  private line(raw: Buffer, offset: number, end: number): void {
    const no = ++this.rawLines;
    const e = this.format.parse(raw);
    if (e === null) {
      this.onMalformed?.(offset);
      this.push(raw, offset, no, '', '');
    } else {
      const p = this.pending.get(e.stream);
      if (e.partial) {
        if (p) this.keep(p, e.text);
        else
          this.pending.set(
            e.stream,
            this.keep({ parts: [], kept: 0, offset, line: no, time: e.time }, e.text),
          );
      } else if (p) {
        this.pending.delete(e.stream);
        this.keep(p, e.text);
        this.push(Buffer.concat(p.parts), p.offset, p.line, p.time, e.stream);
      } else {
        this.push(e.text, offset, no, e.time, e.stream);
      }
    }
    // A line of another stream may still be unfinished: resuming must begin at its first part (its
    // finished neighbours after that point are then read again: the one case where a restart repeats).
    let first = end;
    for (const p of this.pending.values()) first = Math.min(first, p.offset);
    this.done = first;
  }

  private keep(p: Pending, text: Buffer): Pending {
    const room = this.maxLineBytes + 1 - p.kept;
    if (room > 0 && text.length > 0) {
      // Copied: `text` may point into the follower's read buffer.
      const part = Buffer.from(text.subarray(0, room));
      p.parts.push(part);
      p.kept += part.length;
    }
    return p;
  }

  private push(text: Buffer, offset: number, line: number, time: string, stream: string): void {
    const t = text.length > this.maxLineBytes + 1 ? text.subarray(0, this.maxLineBytes + 1) : text;
    this.metas.push({ at: this.unwrapped, offset, line, time, stream });
    // Copied if it points into the follower's buffer: it is used after this call returns.
    this.out.push(Buffer.from(t), NL);
    this.unwrapped += t.length + 1;
  }

  private emit(): void {
    if (this.out.length === 0) return;
    const chunk = Buffer.concat(this.out);
    this.out = [];
    this.scanner.feed(chunk, chunk.length);
    this.metas.trim();
  }
}

const NL = Buffer.from('\n');

/**
 * `format: auto`: holds the first bytes of a file until its first line is complete, lets `decide` pick
 * the reader from that line, then hands everything to it.
 */
export class AutoFeed implements LineFeed {
  private inner: LineFeed | null = null;
  private held: Buffer[] = [];
  private heldLen = 0;

  constructor(
    private readonly startOffset: number,
    private readonly decide: (firstLine: Buffer) => LineFeed,
    private readonly maxHeld = 1 << 20,
  ) {}

  get current(): LineFeed | null {
    return this.inner;
  }

  get committed(): number {
    return this.inner ? this.inner.committed : this.startOffset;
  }

  get hasPartial(): boolean {
    return this.inner ? this.inner.hasPartial : this.heldLen > 0;
  }

  feed(buf: Buffer, n: number): void {
    if (this.inner) return this.inner.feed(buf, n);
    this.held.push(Buffer.from(buf.subarray(0, n)));
    this.heldLen += n;
    const all = Buffer.concat(this.held);
    const nl = all.indexOf(10);
    if (nl < 0 && this.heldLen < this.maxHeld) return;
    this.start(all, nl < 0 ? all.length : nl);
  }

  flush(): void {
    if (!this.inner && this.heldLen > 0) this.start(Buffer.concat(this.held), this.heldLen);
    this.inner?.flush();
  }

  settle(): void {
    this.inner?.settle();
  }

  reset(offset = 0): void {
    if (this.inner) this.inner.reset(offset);
    this.held = [];
    this.heldLen = 0;
  }

  private start(all: Buffer, firstEnd: number): void {
    let first = all.subarray(0, firstEnd);
    if (first[first.length - 1] === 0x0d) first = first.subarray(0, -1);
    this.inner = this.decide(first);
    this.held = [];
    this.heldLen = 0;
    this.inner.feed(all, all.length);
  }
}
