// Issue 25: a log source kind is one file plus one row of LOG_SOURCE_KINDS. A throwaway kind registered in
// test scope goes through the same hooks as the shipped ones: its lines reach the rules, its skips and read
// errors are counted, and the watcher halts and stops it. The journal kind's skips are counted as files' are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { logSourceSchema, LOG_PACKS } from '../../src/config/schema.js';
import type { LogSourceContext, LogSourceKindDef } from '../../src/sources/logs/source.js';
import { LOG_SOURCE_KINDS, logSourceKind, type LogSourceKind } from '../../src/sources/logs/sources/index.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';
import { writeJournal } from './journal-file.js';
import { NUMBERED } from './wrapped-lines.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-kinds-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('log source kinds', () => {
  it('a config entry picks its kind by its key: path is a file, journal the journal', () => {
    expect(logSourceKind(source({ path: '/var/log/x.log' }), LOG_SOURCE_KINDS)).toBe('file');
    expect(logSourceKind(source({ path: '/var/log/*/x.log' }), LOG_SOURCE_KINDS)).toBe('file');
    const j = logSourceSchema.parse({ service: 'p', packs: [...LOG_PACKS], journal: { unit: 'a.service' } });
    expect(logSourceKind(j, LOG_SOURCE_KINDS)).toBe('journal');
    // The union is closed: a new kind fails to type-check anywhere it is not in the table.
    expectTypeOf<LogSourceKind>().toEqualTypeOf<'file' | 'journal'>();
  });

  it('a kind registered in test scope: lines reach the rules, skips and errors are counted, halt and stop are called', async () => {
    const calls: string[] = [];
    let ctx: LogSourceContext | undefined;
    // Selected by `path` (the schema requires path or journal); this table holds only the test kind.
    const fake: LogSourceKindDef = {
      key: 'path',
      state: 'log_offsets',
      create: (c) => {
        ctx = c;
        return {
          start: () => calls.push('start'),
          halt: () => calls.push('halt'),
          stop: () => calls.push('stop'),
        };
      },
    };
    const h = harness({
      sources: [source({ path: '/fake/source' })],
      stateDir: join(dir, 'state'),
      userRules: [NUMBERED],
      kinds: { fake },
    });
    await h.watcher.start();
    expect(calls).toEqual(['start']);
    expect(ctx?.src.path).toBe('/fake/source');

    const line = ctx!.hooks.lines('fake:one', 'origin');
    for (let n = 1; n <= 3; n++)
      line({ text: Buffer.from(`n=${n} from the fake`), time: 1_000 * n, stream: 'a' });
    ctx!.hooks.skipped('fake:one', 123, 4);
    ctx!.hooks.readError('missing', 'fake:one', 'gone for a moment');
    ctx!.hooks.tick(5_000);

    const numbered = h.events.filter((e) => e.rule === 'numbered');
    expect(numbered.map((e) => e.fields.n)).toEqual(['1', '2', '3']);
    expect(numbered[0]).toMatchObject({ service: 'decode', file: 'fake:one', time: 1_000 });
    expect(numbered[0]!.fields.origin).toBe('a');
    expect(await h.value('logLines', { service: 'decode' })).toBe(3);
    expect(await h.value('logSkippedBytes', { service: 'decode' })).toBe(123);
    expect(await h.value('logReadErrors', { reason: 'missing' })).toBe(1);
    expect(await h.value('logFollowerTick', { service: 'decode' })).toBe(5);

    await h.watcher.stop();
    expect(calls).toEqual(['start', 'halt', 'stop']);
  });

  it('an entry no row of the table selects is a read error of that source, the others start', async () => {
    const started: string[] = [];
    const only: LogSourceKindDef = {
      key: 'journal',
      state: 'journal_cursors',
      create: (c) => ({ start: () => started.push(c.src.service), stop: () => {} }),
    };
    const j = logSourceSchema.parse({ service: 'p', packs: [...LOG_PACKS], journal: { unit: 'a.service' } });
    const h = harness({
      sources: [source({ path: '/fake/x' }), j],
      stateDir: join(dir, 'state'),
      kinds: { only },
    });
    await h.watcher.start();
    expect(started).toEqual(['p']);
    expect(await h.value('logReadErrors', { service: 'decode', reason: 'io' })).toBe(1);
    await h.watcher.stop();
  });

  it('the journal kind counts the bytes its catch-up limit skips, as the file kind does', async () => {
    const file = join(dir, 'j', 'system.journal');
    const unit = 'sglang-prefill.service';
    writeJournal(
      file,
      Array.from({ length: 100 }, (_, i) => ({
        message: `n=${i + 1} prefill said something`,
        unit,
        time: Date.UTC(2026, 11, 1) + i * 1000,
      })),
    );
    const src = logSourceSchema.parse({
      service: 'prefill',
      from: 'start',
      maxCatchUpBytes: 30 * 27,
      journal: { unit, file, pollInterval: '100ms' },
    });
    const h = harness({
      sources: [src],
      stateDir: join(dir, 'state'),
      userRules: [NUMBERED],
      journal: { retryMs: 100 },
    });
    await h.watcher.start();
    try {
      await waitFor(() => h.events.some((e) => e.fields.n === '100'), {
        what: 'the newest entry',
        timeoutMs: 20_000,
      });
      // About 70 entries of ~27 message bytes were left unread (message bytes: the journal has no file offsets).
      const skipped = await h.value('logSkippedBytes', { service: 'prefill' });
      expect(skipped).toBeGreaterThan(60 * 27);
      expect(skipped).toBeLessThan(75 * 28);
    } finally {
      await h.watcher.stop();
    }
  });
});
