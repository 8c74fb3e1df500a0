// Issue 27: a chain head (`Subprocess … crashed`, logged before the dying scheduler's traceback) waits for the
// traceback that names its root cause. While it waits its event is nowhere (not raised, not journaled), so the
// saved read position must not pass its line: a kill -9 then restart reads it again and raises it.
import { copyFileSync, appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultPacks } from '../../src/config/log-engines.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import type { LogWatcherOptions } from '../../src/sources/logs/watcher.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string;
const stops: (() => Promise<void>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-held-'));
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  rmSync(dir, { recursive: true, force: true });
});

const BEFORE = '[2026-08-10 14:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 8, #cached-token: 0\n';
const HEAD =
  '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=3417555) crashed with exit code -3. Triggering SIGQUIT for cleanup...\n';
// Lines of no rule after the head, fewer than ROOT_CAUSE_WAIT_LINES (50): the head keeps waiting.
const QUIET = Array.from({ length: 5 }, (_, i) => `[2026-08-10 14:00:01 TP1] Load weight step ${i}\n`).join(
  '',
);
const TRACEBACK = [
  '[2026-08-10 14:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):',
  '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
  '    scheduler.event_loop_overlap()',
  'torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
  // The next record ends the traceback's (a blank line could still lead to a chained one).
  '[2026-08-10 14:00:02] SIGQUIT received. signum=None, frame=None. It usually means one child failed.',
  '',
].join('\n');

const statePath = () => join(dir, 'state', 'log-offsets-t1.json');
/** Where the lines were processed to, in the last save (`read` when past `offset`). */
const processed = (f: string) => saved(f) && (saved(f)!.read ?? saved(f)!.offset);
const saved = (f: string) =>
  (
    JSON.parse(readFileSync(statePath(), 'utf8')) as {
      files: Record<string, { offset: number; read?: number }>;
    }
  ).files[f];

async function watch(path: string, over: Partial<LogWatcherOptions> = {}) {
  const h = harness({
    sources: [source({ path, service: 'prefill', packs: ['sglang'], from: 'start' })],
    stateDir: join(dir, 'state'),
    // No idle settle within the test: the head waits for its traceback as it would with lines still coming.
    follow: { pollMs: 20, saveEveryMs: 20, idleFlushMs: 3_600_000, retireQuietMs: 3_600_000 },
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

describe('a held chain head and the saved offset (issue 27)', () => {
  it('the saved offset stays at the waiting head, and moves on once its event is out', async () => {
    const f = join(dir, 'prefill.log');
    writeFileSync(f, '');
    const a = await watch(f);
    appendFileSync(f, BEFORE + HEAD + QUIET);
    const all = (BEFORE + HEAD + QUIET).length;
    // Every line read and processed (`read`), the head's event not raised yet: a restart must resume at the head.
    await waitFor(() => processed(f) === all, {
      what: () => `a save after the quiet lines: ${JSON.stringify(saved(f))}`,
    });
    expect(a.events).toEqual([]);
    expect(saved(f)!.offset).toBe(BEFORE.length);
    appendFileSync(f, TRACEBACK);
    await waitFor(() => a.events.length === 1, { what: 'the chain head with its root cause' });
    expect(a.events[0]!.rule).toBe('sglang_subprocess_crashed');
    expect(a.events[0]!.incident?.rootCause?.exception).toBe('torch.AcceleratorError');
    const end = all + TRACEBACK.length;
    await waitFor(() => saved(f)?.offset === end && saved(f)?.read === undefined, {
      what: () => `the offset past everything once the event is out: ${JSON.stringify(saved(f))}`,
    });
  });

  it('a kill -9 while the head waits: the restart reads it again and raises it with its root cause', async () => {
    const f = join(dir, 'prefill.log');
    writeFileSync(f, '');
    const a = await watch(f);
    appendFileSync(f, BEFORE + HEAD + QUIET);
    const all = (BEFORE + HEAD + QUIET).length;
    await waitFor(() => processed(f) === all, { what: 'a save after the quiet lines' });
    // The state a kill -9 leaves: the last save while the head waited. (Stopping `a` releases the head; its
    // event is what a killed daemon never raised, so it is not counted.)
    const killed = join(dir, 'killed.json');
    copyFileSync(statePath(), killed);
    await a.stop();
    copyFileSync(killed, statePath());
    appendFileSync(f, TRACEBACK);
    const b = await watch(f);
    await waitFor(() => b.events.length >= 1, { what: 'the chain head raised by the restarted watcher' });
    expect(b.events.map((e) => e.rule)).toEqual(['sglang_subprocess_crashed']);
    expect(b.events[0]!.offset).toBe(BEFORE.length);
    expect(b.events[0]!.incident?.rootCause).toMatchObject({
      exception: 'torch.AcceleratorError',
      message: 'CUDA error: an illegal memory access was encountered',
    });
    // The quiet lines were read again after the head: nothing else raised, nothing lost.
    await waitFor(() => saved(f)?.offset === all + TRACEBACK.length, {
      what: 'the restarted watcher saved its end',
    });
    expect(b.events).toHaveLength(1);
  });
});

describe('ChunkScanner.heldFrom (issue 27)', () => {
  const scanner = () =>
    new ChunkScanner(compileRuleSet(['sglang'], []), 65_536, {
      match: (m) => matched.push(m.rule.name),
      engine: () => {},
      truncated: () => {},
    });
  let matched: string[] = [];
  beforeEach(() => {
    matched = [];
  });
  const feed = (s: ChunkScanner, text: string) => {
    const b = Buffer.from(text);
    s.feed(b, b.length);
  };

  it('an open traceback record holds from its header until it closes', () => {
    const s = scanner();
    feed(s, BEFORE);
    expect(s.heldFrom).toBeUndefined();
    const [header, ...rest] = TRACEBACK.split('\n');
    feed(s, `${header}\n${rest[0]}\n`);
    expect(matched).toEqual([]);
    expect(s.heldFrom).toBe(BEFORE.length);
    feed(s, rest.slice(1).join('\n'));
    expect(matched).toEqual(['sglang_scheduler_exception']);
    expect(s.heldFrom).toBeUndefined();
  });

  it('a waiting chain head holds from its line; the lines after it are read and the hold stays', () => {
    const s = scanner();
    feed(s, BEFORE + HEAD + QUIET);
    expect(matched).toEqual([]);
    expect(s.committed).toBe((BEFORE + HEAD + QUIET).length);
    expect(s.heldFrom).toBe(BEFORE.length);
    s.settle();
    expect(matched).toEqual(['sglang_subprocess_crashed']);
    expect(s.heldFrom).toBeUndefined();
  });

  it('a member held for a record another header won is let go: the hold does not pin the read position', () => {
    // Two `follows` rules (the NIXL bootstrap thread's and Python's thread death) open on one header, each its own
    // incident; the member inside the traceback was held for the second, which the NIXL record's exception line
    // then took with it (with an SGLang source's default packs). Found in review: the offset stayed at the member's line for the daemon's life.
    const s = new ChunkScanner(compileRuleSet(defaultPacks('sglang'), []), 65_536, {
      match: (m) => matched.push(m.rule.name),
      engine: () => {},
      truncated: () => {},
    });
    const head = [
      'Exception in thread Thread-3 (bootstrap_thread):',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner',
      '',
    ].join('\n');
    const member =
      'Transfer thread failed because of boom. Prefill instance with bootstrap_port=8998 is dead\n';
    const exception = "AssertionError: First message should be b'NixlMsgGuard', got b'x'\n";
    const after = Array.from(
      { length: 300 },
      (_, i) => `[2026-08-10 14:00:01 TP1] Load weight step ${i}\n`,
    ).join('');
    feed(s, head + member + exception + after);
    s.settle();
    expect(matched).toContain('nixl_bootstrap_thread_dead');
    expect(s.heldFrom).toBeUndefined();
  });
});
