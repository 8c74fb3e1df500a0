// Issue 24 finding 17: a corrupt offsets file with the default `from: end` skipped everything written while the
// daemon was down, with one warning line (20 of 20 markers lost). Now the generation before the newest is kept and
// loaded instead; with none usable the files are read from their start (bounded by maxCatchUpBytes); either way
// the daemon says so at error level and counts it.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { previousOf } from '../../src/lib/state-store.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { harness, source } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-corrupt-offsets-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const MARK = (n: number) =>
  `[2026-02-19 16:32:51 TP0] Prefill bootstrap failed for request rank=0 req.rid='m${n}' req.bootstrap_room=${n} with exception KVTransferError(bootstrap_room=${n}): Aborted by AbortReq.\n`;
const OFFSETS = () => join(dir, 'log-offsets-t1.json');

function run() {
  const { logger, lines } = capturingLogger('warn');
  const h = harness({
    sources: [source({ path: join(dir, 'prefill.log'), service: 'prefill' })],
    stateDir: dir,
    logger,
  });
  return { ...h, lines };
}

/** Two runs that each read one line and stop (each stop saves): the offsets file has a newest and a previous generation. */
async function twoRuns(): Promise<void> {
  writeFileSync(join(dir, 'prefill.log'), 'old history, before the first start\n');
  for (const n of [1, 2]) {
    const h = run();
    await h.watcher.start();
    appendFileSync(join(dir, 'prefill.log'), MARK(n));
    await waitFor(() => h.events.length === 1, { what: `run ${n}'s line` });
    await h.watcher.stop();
  }
}

/** While down: 20 markers written, and the newest offsets file torn (its last save cut mid-write). */
function downtime(): void {
  for (let n = 100; n < 120; n++) appendFileSync(join(dir, 'prefill.log'), MARK(n));
  const text = readFileSync(OFFSETS(), 'utf8');
  writeFileSync(OFFSETS(), text.slice(0, Math.floor(text.length / 2)));
}

const markers = (events: { fields: Record<string, string> }[]) =>
  events.map((e) => e.fields.rid).filter((r) => r !== undefined && /^m1\d\d$/.test(r));

it('a torn offsets file: the previous generation is loaded, the 20 lines written while down are all read, logged and counted', async () => {
  await twoRuns();
  downtime();
  const h = run();
  await h.watcher.start();
  try {
    await waitFor(() => markers(h.events).length === 20, {
      what: () => `the 20 markers (got ${markers(h.events).length})`,
    });
    // Resumed from the generation before: run 2's line is read again (as after a kill -9), nothing older.
    expect(h.events.map((e) => e.fields.rid).filter((r) => r === 'm1')).toEqual([]);
    expect(await h.value('stateLoadErrors', { store: 'log_offsets', recovery: 'previous' })).toBe(1);
    const errors = h.lines
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 50);
    expect(errors.map((e) => e.msg).join('\n')).toMatch(
      /saved state unusable: corrupt .*log-offsets-t1\.json.*previous generation/,
    );
  } finally {
    await h.watcher.stop();
  }
});

it('no usable generation at all: files are read from their start (bounded), so the 20 markers are still read', async () => {
  await twoRuns();
  downtime();
  writeFileSync(previousOf(OFFSETS()), '{"version": 1, "files": [');
  const h = run();
  await h.watcher.start();
  try {
    await waitFor(() => markers(h.events).length === 20, {
      what: () => `the 20 markers (got ${markers(h.events).length})`,
    });
    expect(await h.value('stateLoadErrors', { store: 'log_offsets', recovery: 'lost' })).toBe(1);
    expect(h.lines.join('')).toMatch(/no usable previous generation.*read from their start/);
  } finally {
    await h.watcher.stop();
  }
});

it('the previous generation is the one before the newest, whole, and a first start is no recovery', async () => {
  const first = run();
  await first.watcher.start();
  await first.watcher.stop();
  expect(await first.value('stateLoadErrors')).toBe(0);
  await twoRuns();
  const newest = JSON.parse(readFileSync(OFFSETS(), 'utf8')) as { files: Record<string, { offset: number }> };
  const previous = JSON.parse(readFileSync(previousOf(OFFSETS()), 'utf8')) as typeof newest;
  const f = join(dir, 'prefill.log');
  expect(previous.files[f]!.offset).toBeLessThan(newest.files[f]!.offset);
});
