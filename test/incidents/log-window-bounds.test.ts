// The incident log windows' checkpoints (outputs/incidents/log-window.ts) stay within their bounds however long the
// daemon reads, on made-up times (no clock): at most CHECKPOINTS_KEPT a file, at most FILES_KEPT files a target. A
// window still starts exactly where the follower stood within the newest half, and never later than that before it.
import { describe, expect, it } from 'vitest';
import { CHECKPOINTS_KEPT, FILES_KEPT, LogWindows } from '../../src/outputs/incidents/log-window.js';

const T0 = 1_700_000_000_000;
/** One read a second, 100 bytes each: the follower stood at offset 100·k at T0 + k s. */
const at = (k: number) => T0 + k * 1000;
const exact = (from: number) => Math.max(0, Math.floor((from - T0) / 1000)) * 100;

describe('LogWindows checkpoints', () => {
  it('keeps at most CHECKPOINTS_KEPT a file after a day of reads, the newest half exact, older windows never later', () => {
    const w = new LogWindows();
    const file = '/var/log/prefill.log';
    const reads = 86_400; // a day at one a second
    for (let k = 0; k <= reads; k++) {
      w.noteRead('prefill', file, k * 100, at(k));
      if (k % 997 === 0) expect(w.kept(file).points).toBeLessThanOrEqual(CHECKPOINTS_KEPT);
    }
    expect(w.kept(file).points).toBeLessThanOrEqual(CHECKPOINTS_KEPT);
    expect(w.kept(file).points).toBeGreaterThan(CHECKPOINTS_KEPT / 2);
    // The newest half (8.5 minutes): where the follower stood, to the second.
    for (let s = 0; s < CHECKPOINTS_KEPT / 2 - 2; s += 7) {
      const from = at(reads - s) + 300;
      expect(w.startOffset(file, from)).toBe(exact(from));
    }
    // Older: never later than exact (the window only grows), and from the first read on, never before the file's start.
    for (let k = 0; k < reads; k += 1009) {
      const from = at(k) + 300;
      const got = w.startOffset(file, from);
      expect(got).toBeLessThanOrEqual(exact(from));
      expect(got).toBeGreaterThanOrEqual(0);
    }
    // Older checkpoints are spaced by their age, not dropped: a window an hour or twelve back starts at most a
    // sixteenth of its age early.
    for (const ago of [600, 3600, 12 * 3600]) {
      const from = at(reads - ago) + 300;
      expect(w.startOffset(file, from)).toBeGreaterThanOrEqual(exact(from - (ago * 1000) / 16));
    }
    expect(w.startOffset(file, T0 - 1)).toBe(0);
  });

  it('starts over when the file is truncated in place', () => {
    const w = new LogWindows();
    for (let k = 0; k < 3000; k++) w.noteRead('decode', 'd.log', k * 100, at(k));
    w.noteRead('decode', 'd.log', 10, at(3000));
    expect(w.kept('d.log').points).toBe(1);
    expect(w.startOffset('d.log', at(3000))).toBe(10);
    expect(w.startOffset('d.log', at(2999))).toBe(0);
  });

  it('remembers at most FILES_KEPT files, forgetting the one read longest ago', () => {
    const w = new LogWindows();
    // A glob source's new file for every pod, each read once; one file read all along.
    for (let i = 0; i < 5 * FILES_KEPT; i++) {
      w.noteRead('decode', `/var/log/pods/p${i}/decode.log`, 100, at(i));
      w.noteRead('prefill', 'prefill.log', i * 100, at(i));
      expect(w.kept('prefill.log').files).toBeLessThanOrEqual(FILES_KEPT);
    }
    expect(w.kept('prefill.log').files).toBe(FILES_KEPT);
    expect(w.startOffset('prefill.log', at(5 * FILES_KEPT - 1))).toBe((5 * FILES_KEPT - 1) * 100);
    expect(w.kept('/var/log/pods/p0/decode.log').points).toBe(0);
    expect(w.kept(`/var/log/pods/p${5 * FILES_KEPT - 1}/decode.log`).points).toBe(1);
    expect(w.files().length).toBe(FILES_KEPT);
  });
});
