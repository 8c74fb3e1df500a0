import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/sources/changes/diff.js';
import { FileWatch } from '../../src/sources/changes/watch.js';
import { createTargetMetrics } from '../../src/metrics.js';
import type { FileChangeSignal } from '../../src/core/signals.js';

describe('unifiedDiff', () => {
  it('writes hunks with context in unified format', () => {
    const a = [
      '#!/bin/sh',
      'export A=1',
      'export B=2',
      'x',
      'y',
      'z',
      'w',
      'v',
      'u',
      't',
      'python -m sglang.launch_server --tp 8',
      '',
    ].join('\n');
    const b = a.replace('--tp 8', '--tp 8 --disable-overlap-schedule').replace('export B=2\n', '');
    expect(unifiedDiff(a, b, '/opt/serve.sh')).toBe(
      [
        '--- a/opt/serve.sh',
        '+++ b/opt/serve.sh',
        '@@ -1,6 +1,5 @@',
        ' #!/bin/sh',
        ' export A=1',
        '-export B=2',
        ' x',
        ' y',
        ' z',
        '@@ -8,4 +7,4 @@',
        ' v',
        ' u',
        ' t',
        '-python -m sglang.launch_server --tp 8',
        '+python -m sglang.launch_server --tp 8 --disable-overlap-schedule',
        '',
      ].join('\n'),
    );
  });

  it('merges changes separated by up to 2×context unchanged lines into one hunk', () => {
    const a = 'a\n1\n2\n3\n4\n5\n6\nb\n';
    const d = unifiedDiff(a, a.replace('a\n', 'A\n').replace('b\n', 'B\n'), '/f');
    expect(d.match(/^@@/gm)).toHaveLength(1);
    expect(d).toContain('@@ -1,8 +1,8 @@');
  });

  it('is empty for equal texts, handles creation, and bounds its work and its size', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', '/f')).toBe('');
    expect(unifiedDiff('', 'x\n', '/f')).toBe('--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n');
    const big = (p: string) => Array.from({ length: 3000 }, (_, i) => `${p}${i}`).join('\n');
    expect(unifiedDiff(big('a'), big('b'), '/f')).toContain('too many changed lines to diff');
    const many = (p: string) =>
      Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? `${p}${i}` : `same${i}`)).join('\n');
    const d = unifiedDiff(many('a'), many('b'), '/f', { maxBytes: 2000 });
    expect(d.length).toBeLessThan(2100);
    expect(d).toContain('diff truncated');
  });
});

describe('FileWatch', () => {
  let dir: string;
  let w: FileWatch | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-changes-'))));
  afterEach(async () => {
    await w?.stop();
    w = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports hash, time and diff of each change, deletion and re-creation; sets the metric', async () => {
    const path = join(dir, 'serve.sh');
    writeFileSync(path, 'python -m sglang.launch_server --tp 8\n');
    const reg = new client.Registry();
    const got: FileChangeSignal[] = [];
    let now = 5_000_000;
    w = new FileWatch({
      target: 't',
      paths: [path, join(dir, 'missing.env')],
      metrics: createTargetMetrics(reg),
      logger: pino({ level: 'silent' }),
      onChange: (c) => got.push(c),
      intervalMs: 3_600_000,
      now: () => now,
    });
    await w.start();
    await w.check();
    expect(got).toEqual([]);
    const next = 'python -m sglang.launch_server --tp 8 --disable-overlap-schedule\n';
    writeFileSync(path, next);
    now += 1000;
    await w.check();
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      kind: 'file_change',
      target: 't',
      path,
      time: 5_001_000,
      hash: createHash('sha256').update(next).digest('hex'),
    });
    expect(got[0]!.diff).toContain('+python -m sglang.launch_server --tp 8 --disable-overlap-schedule');
    expect(await reg.metrics()).toContain(
      `wedgewatch_watched_file_change_timestamp_seconds{target="t",path="${path}"} 5001`,
    );
    unlinkSync(path);
    await w.check();
    expect(got[1]).toMatchObject({ hash: null, diff: `file deleted: ${path}\n` });
    writeFileSync(join(dir, 'missing.env'), 'A=1\n');
    await w.check();
    expect(got[2]).toMatchObject({ path: join(dir, 'missing.env') });
    // An env file: keys only, never values.
    expect(got[2]!.diff).toContain('+ A (added)');
    expect(got[2]!.diff).not.toContain('A=1');
    expect(w.files().map((f) => f.changedAt)).toEqual([5_001_000, 5_001_000]);
  });
});

describe('FileWatch on paths that are not regular files', () => {
  it('does not hang on /dev/zero or a FIFO, and reports them as not regular files', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ww-watch-special-'));
    const fifo = join(d, 'serve.fifo');
    execFileSync('mkfifo', [fifo]);
    const got: FileChangeSignal[] = [];
    const fw = new FileWatch({
      target: 't',
      paths: ['/dev/zero', fifo],
      metrics: createTargetMetrics(new client.Registry()),
      logger: pino({ level: 'silent' }),
      onChange: (c) => got.push(c),
      intervalMs: 3_600_000,
    });
    try {
      await fw.start();
      await fw.check();
      expect(fw.files().every((f) => f.hash?.startsWith('not-a-file:'))).toBe(true);
      expect(got).toEqual([]);
    } finally {
      await fw.stop();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
