// Acceptance: a writer at 5,000 lines/s for 10 s renames, copytruncates, deletes and recreates its log
// (docs/decisions.md#log-following-our-own-follower-not-the-npm-tail-package-issue-4). Nothing may be lost at
// rename and delete, at most the one writer batch that was still unread at copytruncate (copytruncate itself
// destroys it), and nothing may be read twice.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string | undefined;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface WriterReport {
  total: number;
  beforeTruncate: [number, number];
}

it('loses no line at rename and delete, at most one batch at copytruncate, duplicates none', async () => {
  dir = mkdtempSync(join(tmpdir(), 'ww-rotate-'));
  const file = join(dir, 'decode.log');
  writeFileSync(file, '');
  const h = harness({
    sources: [source({ path: file, packs: [] })],
    userRules: [{ name: 'seq', severity: 'info', class: 'custom', match: 'seq=(?<seq>\\d+)' }],
    stateDir: dir,
    follow: { pollMs: 100, retireQuietMs: 2000 },
  });
  await h.watcher.start();
  stop = () => h.watcher.stop();

  const writer = spawn(
    process.execPath,
    [join(import.meta.dirname, '../fixtures/logs/writer.mjs'), file, '5000', '10'],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  let out = '';
  writer.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // Before copytruncate the writer waits until the follower has read everything written so far (then writes its
  // one batch and truncates): the batch at risk is one batch however loaded the machine is.
  const seenSoFar = new Set<number>();
  let countedSoFar = 0;
  writer.on('message', (m: { caughtUpTo: number }) => {
    void waitFor(
      () => {
        for (; countedSoFar < h.events.length; countedSoFar++)
          seenSoFar.add(Number(h.events[countedSoFar]!.fields.seq));
        for (let s = 0; s < m.caughtUpTo; s++) if (!seenSoFar.has(s)) return false;
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 20, what: `the follower to read the first ${m.caughtUpTo} lines` },
    ).then(
      () => writer.send('go'),
      () => writer.kill('SIGKILL'),
    );
  });
  const code = await new Promise<number | null>((r) => writer.on('exit', r));
  expect(code).toBe(0);
  const report = JSON.parse(out) as WriterReport;
  expect(report.total).toBe(50_000);

  const seen = new Map<number, number>();
  let counted = 0;
  const tally = () => {
    for (; counted < h.events.length; counted++) {
      const s = Number(h.events[counted]!.fields.seq);
      seen.set(s, (seen.get(s) ?? 0) + 1);
    }
  };
  const [tFirst, tLast] = report.beforeTruncate;
  const missingOutsideTruncate = () => {
    const miss: number[] = [];
    for (let s = 0; s < report.total; s++) if (!seen.has(s) && (s < tFirst || s > tLast)) miss.push(s);
    return miss;
  };
  await waitFor(
    () => {
      tally();
      return missingOutsideTruncate().length === 0;
    },
    { timeoutMs: 15_000, what: 'every line outside the copytruncate batch' },
  ).catch((err: Error) => {
    const miss = missingOutsideTruncate();
    throw new Error(`${err.message}: ${miss.length} missing, first ${miss.slice(0, 10).join(',')}`);
  });
  const dups = [...seen].filter(([, n]) => n > 1).map(([s]) => s);
  expect(dups).toEqual([]);
  expect(await h.value('logRotations', { kind: 'rename' })).toBe(1);
  expect(await h.value('logRotations', { kind: 'truncate' })).toBe(1);
  expect(await h.value('logRotations', { kind: 'recreate' })).toBe(1);
  const lostAtTruncate =
    tLast - tFirst + 1 - [...seen.keys()].filter((s) => s >= tFirst && s <= tLast).length;
  console.log(
    `rotation: ${seen.size}/${report.total} seen, lost at copytruncate ${lostAtTruncate} of a ${tLast - tFirst + 1}-line batch`,
  );
});
