// Acceptance (issue 37 item 7): a flood of log events cannot push the state history out of the journal. 2,500
// critical lines from one tool call once filled the 2,000-event ring, every transition was gone and the status
// page's strip showed `no_history`; the transitions and diagnosis changes now keep a ring of their own, in memory
// and when the ring is refilled from the file after a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/outputs/journal/journal.js';
import { buildStrip } from '../../src/outputs/server/status-strip.js';

const logger = pino({ level: 'silent' });
const T0 = Date.UTC(2026, 0, 2, 10, 0, 0);
const MIN = 60_000;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** ok → wedged at T0+1 min, then `n` critical log events, then wedged → ok at T0+10 min. */
function history(j: Journal, n: number): void {
  j.append({
    time: T0 + MIN,
    target: 't',
    type: 'transition',
    summary: 'ok → wedged',
    data: { from: 'ok', to: 'wedged', diagnosis: 'kv_bootstrap_thread_dead', cause: 'thread died' },
  });
  for (let i = 0; i < n; i++) {
    j.append({
      time: T0 + 2 * MIN + i,
      target: 't',
      type: 'critical_log',
      summary: 'bootstrap thread died',
      data: {
        rule: 'nixl_bootstrap_thread_dead',
        diagnosis: 'kv_bootstrap_thread_dead',
        service: 'decode',
        line: `x ${i}`,
      },
    });
  }
  j.append({
    time: T0 + 10 * MIN,
    target: 't',
    type: 'transition',
    summary: 'wedged → ok',
    data: { from: 'wedged', to: 'ok', diagnosis: null, cause: 'fine' },
  });
}

function strip(j: Journal) {
  return buildStrip({
    events: j.query({ target: 't', limit: Number.POSITIVE_INFINITY }),
    coveredFrom: j.oldestTime(),
    current: { state: 'ok', since: T0 + 10 * MIN },
    from: T0,
    to: T0 + 20 * MIN,
  }).segments.map((s) => [s.state, s.from - T0, s.to - T0]);
}

const DRAWN = [
  // Before the journal's first event nothing is known.
  ['no_history', 0, MIN],
  ['wedged', MIN, 10 * MIN],
  ['ok', 10 * MIN, 20 * MIN],
];

describe('the state history outlives a flood of log events (issue 37 item 7)', () => {
  it('in memory: 2,500 critical log events leave both transitions in the journal and on the strip', () => {
    const j = new Journal({ logger });
    history(j, 2500);
    const transitions = j.query({ type: 'transition', limit: Number.POSITIVE_INFINITY });
    expect(transitions.map((e) => e.summary)).toEqual(['ok → wedged', 'wedged → ok']);
    expect(strip(j)).toEqual(DRAWN);
    // The other events stay bounded by the ring, newest kept, in order.
    const all = j.query({ limit: Number.POSITIVE_INFINITY });
    expect(all.length).toBe(2000 + 2);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
  });

  it('after a restart: the ring refilled from the file keeps them too', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-journal-flood-'));
    const j = new Journal({ dir, logger });
    history(j, 2500);
    await j.flush();
    const again = new Journal({ dir, logger });
    expect(again.query({ type: 'transition' }).map((e) => e.summary)).toEqual(['ok → wedged', 'wedged → ok']);
    expect(strip(again)).toEqual(DRAWN);
  });
});
