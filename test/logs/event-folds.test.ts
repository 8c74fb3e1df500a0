// Acceptance (issue 37 item 7): one tool call's output holding 2,500 thread deaths (each its own incident) once made
// 2,500 critical events. A burst of one class from one source raises its first FOLD_FREE events now, the rest
// counted (wedgewatch_log_events_folded_total); a graver event and another class still go out on their own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventFolds, FOLD_FREE, FOLD_WINDOW_MS } from '../../src/sources/logs/fold.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

// Printed raw by a request-echo-free path (an unshielded continuation line is the shape: nothing tells it apart).
const DEATH = (n: number) =>
  [
    `Exception in thread Thread-${n} (bootstrap_thread):`,
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
    '    self.run()',
    "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  ].join('\n');
const SIGQUIT =
  '[2026-08-10 14:00:03 TP0] Received sigquit from a child process. It usually means the child failed.';

describe('event bursts fold per source and class (issue 37 item 7)', () => {
  it('2,500 thread deaths in one write: FOLD_FREE critical events, the rest folded and counted; another class still raised', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-folds-'));
    const file = join(dir, 'decode.log');
    const deaths = Array.from({ length: 2500 }, (_, i) => DEATH(i + 10)).join('\n');
    writeFileSync(file, `${deaths}\n${SIGQUIT}\n[2026-08-10 14:00:04 TP0] done\n`);
    const h = harness({ sources: [source({ path: file, from: 'start' })], stateDir: dir });
    await h.watcher.start();
    try {
      await waitFor(async () => (await h.value('logEventsFolded')) >= 2500 - FOLD_FREE, {
        what: 'the burst folded',
      });
      await waitFor(() => h.events.some((e) => e.rule === 'sglang_sigquit_from_child'), { what: 'sigquit' });
    } finally {
      await h.watcher.stop();
    }
    const deathEvents = h.events.filter((e) => e.class === 'thread_death' || e.rule.startsWith('nixl'));
    expect(FOLD_FREE).toBeLessThanOrEqual(32);
    expect(deathEvents.map((e) => e.rule)).toEqual(Array(FOLD_FREE).fill('nixl_bootstrap_thread_dead'));
    expect(await h.value('logEventsFolded', { class: deathEvents[0]!.class })).toBe(2500 - FOLD_FREE);
    expect(h.events.filter((e) => e.rule === 'sglang_sigquit_from_child')).toHaveLength(1);
  });

  it('folds within the window of the burst, by class, severity and loop; later ones start a new burst', () => {
    const f = new EventFolds(FOLD_WINDOW_MS, 2);
    const k = { class: 'thread_death', severity: 'critical', loop: false } as const;
    expect(f.admit(k, 1000)).toBe(0);
    expect(f.admit(k, 1000)).toBe(0);
    expect(f.admit(k, 1001)).toBe(1);
    expect(f.admit(k, 1000 + FOLD_WINDOW_MS - 1)).toBe(2);
    // A graver or other kind is its own event.
    expect(f.admit({ ...k, severity: 'warning' }, 1002)).toBe(0);
    expect(f.admit({ ...k, class: 'engine_error' }, 1002)).toBe(0);
    expect(f.admit({ ...k, loop: true }, 1002)).toBe(0);
    expect(f.admit(k, 1000 + FOLD_WINDOW_MS)).toBe(0);
  });
});
