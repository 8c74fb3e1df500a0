import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logSourceSchema, LOG_PACKS, type LogSourceConfig } from '../../src/config/schema.js';
import { waitFor } from '../helpers/wait.js';
import { harness } from './helpers.js';
import { writeJournal, type TestEntry } from './journal-file.js';
import { NUMBERED } from './wrapped-lines.js';

let dir: string;
const stops: (() => Promise<void>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-journal-'));
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 11, 1, 5, 0, 0);
const UNIT = 'sglang-prefill.service';

function numbered(from: number, to: number, unit = UNIT): TestEntry[] {
  return Array.from({ length: to - from + 1 }, (_, i) => ({
    message: `n=${from + i} prefill said something`,
    unit,
    time: T0 + (from + i) * 1000,
  }));
}

function journalSource(journal: Record<string, unknown>): LogSourceConfig {
  return logSourceSchema.parse({ service: 'prefill', packs: [...LOG_PACKS], from: 'start', journal });
}

async function start(src: LogSourceConfig, journalctl?: string) {
  const h = harness({
    sources: [src],
    stateDir: join(dir, 'state'),
    userRules: [NUMBERED],
    journal: { retryMs: 100, ...(journalctl ? { journalctl } : {}) },
  });
  await h.watcher.start();
  stops.push(() => h.watcher.stop());
  return h;
}

type H = Awaited<ReturnType<typeof start>>;

/** Each numbered line seen, by number, across the runs given. */
function tally(runs: H[]): Map<number, number> {
  const c = new Map<number, number>();
  for (const h of runs) {
    for (const e of h.events)
      if (e.rule === 'numbered') c.set(Number(e.fields.n), (c.get(Number(e.fields.n)) ?? 0) + 1);
  }
  return c;
}

function exact(runs: H[], total: number) {
  const c = tally(runs);
  const lost: number[] = [];
  const duplicated: number[] = [];
  for (let n = 1; n <= total; n++) {
    if (!c.has(n)) lost.push(n);
    else if (c.get(n)! > 1) duplicated.push(n);
  }
  return { lost, duplicated, extra: [...c.keys()].filter((n) => n < 1 || n > total) };
}

const TRACEBACK = [
  'Exception in thread Thread-5 (bootstrap_thread):',
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
  '    self.run()',
  'RuntimeError: NIXL bootstrap failed',
];

describe.each([
  ['a journal file, polled (journalctl --file)', (f: string) => ({ file: f, pollInterval: '100ms' })],
  [
    'a journal directory, followed (journalctl --directory --follow)',
    (f: string) => ({ directory: join(f, '..') }),
  ],
])('journal source: %s', (_name, where) => {
  it('resumes by cursor across a restart: entries written while down are read once, none twice', async () => {
    const file = join(dir, 'j', 'system.journal');
    writeJournal(file, [...numbered(1, 40), ...numbered(1, 5, 'other.service')]);
    const src = journalSource({ unit: UNIT, ...where(file) });

    const a = await start(src);
    await waitFor(() => tally([a]).size === 40, { what: 'the first 40 entries', timeoutMs: 20_000 });
    writeJournal(file, numbered(41, 70));
    await waitFor(() => tally([a]).size === 70, { what: 'entries written while running', timeoutMs: 20_000 });
    await a.watcher.stop();

    // Down: entries arrive, among them a traceback the thread-exception rule spans several entries for.
    writeJournal(file, [
      ...numbered(71, 100),
      ...TRACEBACK.map((message, i) => ({ message, unit: UNIT, time: T0 + 200_000 + i })),
      ...numbered(101, 120),
    ]);
    const b = await start(src);
    await waitFor(() => tally([b]).size === 50, { what: 'entries written while down', timeoutMs: 20_000 });
    writeJournal(file, numbered(121, 130));
    await waitFor(() => tally([a, b]).size === 130, { what: 'all 130', timeoutMs: 20_000 });

    expect(exact([a, b], 130)).toEqual({ lost: [], duplicated: [], extra: [] });
    // Nothing from the run before the restart was read again.
    expect(Math.min(...tally([b]).keys())).toBe(71);
    const tb = b.events.filter((e) => e.rule === 'python_thread_exception');
    expect(tb).toHaveLength(1);
    expect(tb[0]!.fields).toMatchObject({
      thread: 'Thread-5',
      target: 'bootstrap_thread',
      exception: 'RuntimeError',
    });
    // journald's receive time is the event time; the unit is kept as a field.
    const e71 = b.events.find((e) => e.fields.n === '71')!;
    expect(e71.time).toBe(T0 + 71_000);
    expect(e71.fields.unit).toBe(UNIT);
    expect(await b.value('logReadErrors')).toBe(0);
  });
});

describe('journal source idle', () => {
  it('a chain head waiting for its traceback is raised once the journal goes quiet (issue 27)', async () => {
    const file = join(dir, 'j', 'system.journal');
    const src = journalSource({ unit: UNIT, file, pollInterval: '100ms' });
    writeJournal(file, [
      {
        message:
          '[2026-12-01 05:00:01] Subprocess scheduler_0 (pid=7) crashed with exit code -9. Triggering SIGQUIT for cleanup...',
        unit: UNIT,
        time: T0 + 1000,
      },
    ]);
    const h = await start(src);
    // No entry follows: the event must not wait for one.
    await waitFor(() => h.events.some((e) => e.rule === 'sglang_subprocess_crashed'), {
      what: 'the chain head after the journal went quiet',
      timeoutMs: 20_000,
    });
    expect(h.events.filter((e) => e.rule === 'sglang_subprocess_crashed')).toHaveLength(1);
  });
});

describe('journal source errors', () => {
  it('journalctl missing is an error metric and a retry; once it is there, entries flow', async () => {
    const file = join(dir, 'j', 'system.journal');
    writeJournal(file, numbered(1, 10));
    const bin = join(dir, 'bin-journalctl');
    const h = await start(journalSource({ unit: UNIT, file, pollInterval: '100ms' }), bin);
    await waitFor(async () => (await h.value('logReadErrors', { reason: 'missing' })) === 1, {
      what: 'a missing-journalctl error',
    });
    expect(h.events).toHaveLength(0);
    symlinkSync('/usr/bin/journalctl', bin);
    await waitFor(() => tally([h]).size === 10, { what: 'entries after the retry', timeoutMs: 20_000 });
    expect(exact([h], 10)).toEqual({ lost: [], duplicated: [], extra: [] });
  });

  it('an unreadable journal is an error metric, not a crash', async () => {
    const h = await start(
      journalSource({ unit: UNIT, file: join(dir, 'nope.journal'), pollInterval: '100ms' }),
    );
    await waitFor(async () => (await h.value('logReadErrors', { reason: 'unreadable' })) >= 1, {
      what: 'an unreadable-journal error',
    });
  });

  it('bounds the catch-up: a backlog over maxCatchUpBytes keeps its newest entries', async () => {
    const file = join(dir, 'j', 'system.journal');
    writeJournal(file, numbered(1, 100));
    // Each message is "n=NN prefill said something" (~27 bytes): 30 entries' worth.
    const src = logSourceSchema.parse({
      service: 'prefill',
      from: 'start',
      maxCatchUpBytes: 30 * 27,
      journal: { unit: UNIT, file, pollInterval: '100ms' },
    });
    const h = await start(src);
    await waitFor(() => tally([h]).has(100), { what: 'the newest entry', timeoutMs: 20_000 });
    const seen = [...tally([h]).keys()].sort((x, y) => x - y);
    expect(seen.length).toBeGreaterThanOrEqual(29);
    expect(seen.length).toBeLessThanOrEqual(31);
    expect(seen.at(-1)).toBe(100);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => 101 - seen.length + i));
  });
});
