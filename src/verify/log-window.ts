// Reads what engine log files gained since a mark: the lines written during a step's window. Reads in bounded
// chunks and cuts over-long lines, so a log flood costs time, not memory. A file that shrank was truncated or
// replaced: it is read from its start.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

const CHUNK = 64 * 1024;
const MAX_LINE = 16 * 1024;

export class LogWindow {
  private readonly offsets = new Map<string, number>();
  private readonly partial = new Map<string, string>();

  constructor(readonly paths: readonly string[]) {}

  /** Starts the window at each file's current end (a missing file starts at 0 when it appears). */
  mark(): this {
    for (const p of this.paths) {
      this.offsets.set(p, sizeOf(p) ?? 0);
      this.partial.set(p, '');
    }
    return this;
  }

  /** Calls onLine for every complete line appended since the mark or the previous read. */
  read(onLine: (line: string, path: string) => void): void {
    for (const p of this.paths) {
      const size = sizeOf(p);
      if (size === undefined) continue;
      let off = this.offsets.get(p) ?? 0;
      let carry = this.partial.get(p) ?? '';
      if (size < off) {
        off = 0;
        carry = '';
      }
      if (size === off) continue;
      const fd = openSync(p, 'r');
      try {
        const buf = Buffer.allocUnsafe(CHUNK);
        while (off < size) {
          const n = readSync(fd, buf, 0, Math.min(CHUNK, size - off), off);
          if (n <= 0) break;
          off += n;
          const text = carry + buf.toString('utf8', 0, n);
          const parts = text.split('\n');
          carry = parts.pop() ?? '';
          if (carry.length > MAX_LINE) carry = carry.slice(0, MAX_LINE);
          for (const l of parts) onLine(l.length > MAX_LINE ? l.slice(0, MAX_LINE) : l, p);
        }
      } finally {
        closeSync(fd);
      }
      this.offsets.set(p, off);
      this.partial.set(p, carry);
    }
  }
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
