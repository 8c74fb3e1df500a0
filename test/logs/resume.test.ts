// Where a file starts (src/sources/logs/tail/resume.ts) is decided without I/O: the store's records go in, and the
// offset, whether it is mid-line, the rotation, the skip and the store's changes come out.
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/sources/logs/tail/fingerprint.js';
import { startOffset, type ResumeInput } from '../../src/sources/logs/tail/resume.js';

const head = Buffer.from(
  '[2026-08-10 14:00:00 TP0] server started on 127.0.0.1:30000, a first line long enough\n',
);
const fp = { fp: fingerprint(head, head.length), fpLen: head.length };
const input = (over: Partial<ResumeInput>): ResumeInput => ({
  path: '/l/a.log',
  file: { size: 10_000, ino: 7, dev: 1 },
  head,
  saved: undefined,
  known: [],
  initial: true,
  from: 'end',
  maxCatchUpBytes: 1_000,
  stateLost: false,
  ...over,
});

describe('startOffset', () => {
  it('resumes the same file at its saved offset, bounded by the catch-up limit (mid-line, skip counted)', () => {
    const saved = { ino: 7, dev: 1, offset: 9_500, ...fp };
    expect(startOffset(input({ saved }))).toEqual({ offset: 9_500, midLine: false });
    expect(startOffset(input({ saved: { ...saved, offset: 2_000 } }))).toEqual({
      offset: 9_000,
      midLine: true,
      skipped: 7_000,
    });
  });

  it('a saved identity under another name is taken up (the store forgets it as past)', () => {
    const other = { ino: 7, dev: 1, offset: 9_800, ...fp, path: '/l/old.log', past: true };
    expect(startOffset(input({ known: [other] }))).toEqual({ offset: 9_800, midLine: false, forget: other });
  });

  it('another inode at a saved path was rotated while down: read from 0, the old record remembered', () => {
    const saved = { ino: 3, dev: 1, offset: 500, ...fp };
    expect(startOffset(input({ saved, file: { size: 800, ino: 7, dev: 1 } }))).toEqual({
      offset: 0,
      midLine: false,
      rotation: 'rename',
      remember: { ...saved, path: '/l/a.log' },
    });
  });

  it('from: end skips what a first start finds, unless the saved state was lost; a new file is read whole', () => {
    expect(startOffset(input({}))).toEqual({ offset: 10_000, midLine: false });
    expect(startOffset(input({ stateLost: true }))).toEqual({ offset: 9_000, midLine: true, skipped: 9_000 });
    expect(startOffset(input({ initial: false }))).toEqual({ offset: 0, midLine: false });
  });
});
