// Issue 16 item 4: log identity (inode + fingerprint) and offsets across rotations while the daemon is down,
// copytruncate under a glob, a truncate and regrow between two polls, and a restart after kill -9. Every
// case writes numbered lines and counts each one exactly: none lost, none read twice.
import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogWatcherOptions } from '../../src/sources/logs/watcher.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string;
const stops: (() => Promise<void>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-ident-'));
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  rmSync(dir, { recursive: true, force: true });
});

/** Numbered lines [from, to), each with a timestamp of its own and padding (engine lines are ~100 bytes). */
const lines = (from: number, to: number) => {
  let out = '';
  for (let i = from; i < to; i++) out += `[2026-02-19 16:32:51 TP0] seq=${i} ${'x'.repeat(60)}\n`;
  return out;
};

const SEQ = [
  { name: 'seq', severity: 'info' as const, class: 'custom' as const, match: 'seq=(?<seq>\\d+) ' },
];

async function watch(path: string, over: Partial<LogWatcherOptions> = {}) {
  const h = harness({
    sources: [source({ path, packs: [], from: 'start' })],
    userRules: SEQ,
    stateDir: join(dir, 'state'),
    ...over,
  });
  await h.watcher.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await h.watcher.stop();
  };
  stops.push(stop);
  return { ...h, stop };
}

/** Counts of each seq across runs. */
class Tally {
  readonly seen = new Map<number, number>();
  add(events: { fields: Record<string, string> }[]): void {
    for (const e of events) {
      const s = Number(e.fields.seq);
      this.seen.set(s, (this.seen.get(s) ?? 0) + 1);
    }
  }
  /** Lost and duplicated seqs of [0, n). */
  check(n: number): { lost: number[]; dup: number[]; extra: number[] } {
    const lost: number[] = [];
    const dup: number[] = [];
    for (let i = 0; i < n; i++) {
      const c = this.seen.get(i) ?? 0;
      if (c === 0) lost.push(i);
      if (c > 1) dup.push(i);
    }
    return { lost, dup, extra: [...this.seen.keys()].filter((s) => s >= n) };
  }
}

async function readAll(h: { events: unknown[] }, n: number, what: string) {
  await waitFor(() => h.events.length >= n, { what: () => `${what}: ${h.events.length} of ${n}` });
}

describe('log identity across rotations (issue 16 item 4)', () => {
  it('rename rotation while down: the renamed file is drained from the saved offset, then the new one', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, lines(0, 100));
    const tally = new Tally();
    const a = await watch(f);
    await readAll(a, 100, 'first run');
    await a.stop();
    tally.add(a.events);
    appendFileSync(f, lines(100, 150));
    renameSync(f, `${f}.1`);
    writeFileSync(f, lines(150, 200));
    const b = await watch(f);
    await readAll(b, 100, 'second run');
    tally.add(b.events);
    // The rotated part comes first: file order is event order.
    expect(b.events.slice(0, 50).map((e) => Number(e.fields.seq))).toEqual(
      Array.from({ length: 50 }, (_, i) => 100 + i),
    );
    expect(tally.check(200)).toEqual({ lost: [], dup: [], extra: [] });
    expect(await b.value('logRotations', { kind: 'rename' })).toBe(1);
  });

  it('copytruncate while down, the new content longer than the saved offset: copy drained, new file from 0', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, lines(0, 100));
    const tally = new Tally();
    const a = await watch(f);
    await readAll(a, 100, 'first run');
    await a.stop();
    tally.add(a.events);
    appendFileSync(f, lines(100, 150));
    copyFileSync(f, `${f}.1`);
    truncateSync(f, 0);
    appendFileSync(f, lines(150, 400));
    const b = await watch(f);
    await readAll(b, 300, 'second run');
    tally.add(b.events);
    expect(tally.check(400)).toEqual({ lost: [], dup: [], extra: [] });
  });

  it('glob + copytruncate while running: the copy is recognised as already read', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, lines(0, 100));
    const a = await watch(join(dir, 'app.log*'));
    await readAll(a, 100, 'before');
    copyFileSync(f, `${f}.1`);
    truncateSync(f, 0);
    appendFileSync(f, lines(100, 200));
    await readAll(a, 200, 'after');
    // A re-read of the copy would show by now: the truncate is noticed in the poll that opens the copy.
    await waitFor(async () => (await a.value('logRotations', { kind: 'truncate' })) === 1);
    const tally = new Tally();
    tally.add(a.events);
    await a.stop();
    expect(tally.check(200)).toEqual({ lost: [], dup: [], extra: [] });
  });

  it('glob + copytruncate while down: the copy resumes at the saved offset, not at 0', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, lines(0, 100));
    const tally = new Tally();
    const a = await watch(join(dir, 'app.log*'));
    await readAll(a, 100, 'first run');
    await a.stop();
    tally.add(a.events);
    appendFileSync(f, lines(100, 150));
    copyFileSync(f, `${f}.1`);
    truncateSync(f, 0);
    appendFileSync(f, lines(150, 200));
    const b = await watch(join(dir, 'app.log*'));
    await readAll(b, 100, 'second run');
    await b.stop();
    tally.add(b.events);
    expect(tally.check(200)).toEqual({ lost: [], dup: [], extra: [] });
  });

  it('a truncate and regrow past our position between two polls is read from 0', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, lines(0, 100));
    const a = await watch(f, { follow: { pollMs: 50 } });
    await readAll(a, 100, 'before');
    // Synchronous: no poll can run between the truncate and the regrow (> 49 KB, past our offset).
    truncateSync(f, 0);
    appendFileSync(f, lines(100, 1000));
    await readAll(a, 1000, 'after');
    await a.stop();
    const tally = new Tally();
    tally.add(a.events);
    expect(tally.check(1000)).toEqual({ lost: [], dup: [], extra: [] });
    expect(await a.value('logRotations', { kind: 'truncate' })).toBe(1);
  });
});

describe('a restart after kill -9 (issue 16 item 4)', () => {
  it('re-raises no journaled event and stamps re-read lines with their own time', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, '');
    const journaled: string[] = [];
    // Offsets saved once (at the first poll), never again: the state a kill -9 leaves a second later.
    const a = await watch(f, {
      follow: { pollMs: 50, saveEveryMs: 3_600_000 },
      onEvent: (e) => {
        a.events.push(e);
        if (e.ref) journaled.push(e.ref);
      },
    });
    await waitFor(() =>
      readFileSync(join(dir, 'state', 'log-offsets-t1.json'), 'utf8').includes('"offset":0'),
    );
    const saved = readFileSync(join(dir, 'state', 'log-offsets-t1.json'));
    appendFileSync(f, lines(0, 100));
    await readAll(a, 100, 'first run');
    await a.stop();
    writeFileSync(join(dir, 'state', 'log-offsets-t1.json'), saved);
    appendFileSync(f, lines(100, 150));
    const now = Date.now();
    const b = await watch(f, { journaled: () => journaled, now: () => now });
    await readAll(b, 50, 'second run');
    await b.stop();
    const tally = new Tally();
    tally.add(a.events);
    tally.add(b.events);
    expect(tally.check(150)).toEqual({ lost: [], dup: [], extra: [] });
    // Lines written while down carry their own time (local, as Python's asctime), not the time of reading.
    const own = new Date(2026, 1, 19, 16, 32, 51).getTime();
    expect(b.events.every((e) => e.time === own)).toBe(true);
    expect(await b.value('logLastEvent', { rule: 'seq' })).toBe(own / 1000);
  });

  it('saves no offset past a line whose event is not journaled yet', async () => {
    const f = join(dir, 'app.log');
    writeFileSync(f, '');
    let release!: () => void;
    const notYet = new Promise<void>((r) => (release = r));
    const a = await watch(f, { follow: { pollMs: 20, saveEveryMs: 20 }, durable: () => notYet });
    const text = lines(0, 1) + 'no event here\n';
    appendFileSync(f, text);
    await readAll(a, 1, 'the event');
    const saved = () =>
      (
        JSON.parse(readFileSync(join(dir, 'state', 'log-offsets-t1.json'), 'utf8')) as {
          files: Record<string, { offset: number; read?: number }>;
        }
      ).files[f];
    // Both lines processed and saved (`read`), yet a restart resumes at the line whose journal write is pending.
    await waitFor(() => saved()?.read === text.length, { what: 'a save after both lines' });
    expect(saved()!.offset).toBe(0);
    release();
    await waitFor(() => saved()?.offset === text.length, { what: 'the offset once the event is written' });
  });
});
