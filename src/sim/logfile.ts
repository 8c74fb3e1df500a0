// Append-only log file written line by line as things happen, so a tailer sees them at once.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Longest line the simulator writes; longer text is cut so a runaway value cannot bloat the file. */
const MAX_LINE = 16_384;

export class LogFile {
  private fd: number | undefined;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  write(lines: string | string[]): void {
    if (this.fd === undefined) return;
    const list = Array.isArray(lines) ? lines : [lines];
    writeSync(this.fd, list.map((l) => (l.length > MAX_LINE ? l.slice(0, MAX_LINE) : l) + '\n').join(''));
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
