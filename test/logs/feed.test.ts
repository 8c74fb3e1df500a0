// One feed (src/sources/logs/feed.ts) for the daemon and replay: the same log gives the same LogEventSignal in
// both, a user rule's event marked as the user's (it ranks below every built-in one) and a request's loop as a
// loop. Replay once built its own signal without either.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_PACKS, ruleSchema } from '../../src/config/schema.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import type { LogEventSignal } from '../../src/core/signals.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ABORT = (n: number) =>
  `[2026-02-19 16:32:51 TP0] Prefill bootstrap failed for request rank=0 req.rid='r${n}' req.bootstrap_room=${n} with exception KVTransferError(bootstrap_room=${n}): Aborted by AbortReq.\n`;
const USER = ruleSchema.parse({
  name: 'disk_full',
  severity: 'critical',
  class: 'thread_death',
  match: String.raw`No space left on device`,
});

/** What the detector reads of a log event (the time is the daemon's read time or replay's log clock). */
const seen = (e: LogEventSignal) => ({
  rule: e.rule,
  class: e.class,
  user: e.user,
  severity: e.severity,
  line: e.line,
  offset: e.offset,
  fields: e.fields,
  loop: e.loop,
});

describe('one feed for the daemon and replay', () => {
  it('a user rule is the user’s and a loop is a loop in both', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-feed-'));
    const file = join(dir, 'decode.log');
    writeFileSync(file, `${ABORT(1).repeat(22)}[2026-02-19 16:32:52 TP0] OSError: No space left on device\n`);
    const h = harness({
      sources: [source({ path: file, from: 'start' })],
      userRules: [USER],
      stateDir: dir,
    });
    await h.watcher.start();
    try {
      await waitFor(() => h.events.length === 3, { what: 'first, loop and user events' });
    } finally {
      await h.watcher.stop();
    }
    const replayed = replayFiles({
      files: [file],
      service: 'decode',
      packs: [...LOG_PACKS],
      userRules: [USER],
      timeline: true,
    }).signals!.filter((s): s is LogEventSignal => s.kind === 'log');
    expect(h.events.map(seen)).toEqual(replayed.map(seen));
    expect(replayed.map((e) => [e.rule, e.user === true, e.loop !== undefined])).toEqual([
      ['sglang_prefill_bootstrap_aborted', false, false],
      ['sglang_prefill_bootstrap_aborted', false, true],
      ['disk_full', true, false],
    ]);
  });
});
