// Acceptance (issue 24, finding 1), end to end: the daemon's runtime watching a live simulator. A tool call whose
// argument holds every built-in signature, printed by SGLang's tool-call parser (`Failed to parse JSON part: …`)
// into the prefill log, raises no event, confirms nothing, captures no bundle and remediates nothing; the
// engine's own traceback written after it is still raised.
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';
import { errorTexts } from '../../src/sources/logs/json-error-tail.js';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const VERBATIM = Object.values(RULE_FIXTURES).flat().join('\n');
const TEXT = `[{"name": "write_file", "arguments": {"content": "${VERBATIM}"}}]`;
// The engine's tail: str() of the error CPython's json.loads raises on the text (json-error-tail.test.ts).
const RECORD = `[2026-08-10 14:00:01 TP0] Failed to parse JSON part: ${TEXT}, JSON parse error: ${errorTexts(TEXT, 'loads')[0]}\n`;
const NIXL_DEATH = [
  'Exception in thread Thread-3 (bootstrap_thread):',
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  '',
].join('\n');

/** Every prefill log-event series and its count: a load-starved simulator may log a real transfer failure before. */
async function prefillEvents(): Promise<Map<string, number>> {
  const text = await h!.metrics.registry.metrics();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^(wedgewatch_log_events_total\{[^}]*service="prefill"[^}]*\}) (\d+)$/gm))
    out.set(m[1]!, Number(m[2]));
  return out;
}

async function linesRead(service: string): Promise<number> {
  const text = await h!.metrics.registry.metrics();
  const m = new RegExp(`wedgewatch_log_lines_total\\{target="sim",service="${service}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

it('a prompt in the tool-call parser echo: no event, no confirmation, no bundle, no remediation; a real traceback after it is raised', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ww-usertext-'));
  dirs.push(dir);
  const marker = join(dir, 'remediated');
  h = await startHarness({}, () => ({
    remediate: {
      command: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`],
      dryRun: false,
      after: '0s',
    },
  }));
  await h.waitHealthy();
  const before = await linesRead('prefill');
  const eventsBefore = await prefillEvents();
  const appendedAt = Date.now();
  appendFileSync(h.sim.logFiles.prefill, RECORD);
  const recordLines = RECORD.split('\n').length - 1;
  await waitFor(async () => (await linesRead('prefill')) >= before + recordLines, {
    timeoutMs: 10_000,
    what: 'the follower to read the record',
  });
  // Two probe rounds after the record: a critical line would have asked for a confirmation round by now.
  await waitFor(() => (h!.wd.state.slots['chat|router|fresh']?.last?.start ?? 0) > appendedAt + 2000, {
    timeoutMs: 15_000,
    what: 'two chat rounds after the record',
  });
  const journal = h.runtime.watchdog!.journal.query({ target: 'sim' });
  const types = journal.filter((e) => e.time >= appendedAt).map((e) => e.type);
  expect(types).not.toContain('critical_log');
  expect(types).not.toContain('confirm');
  expect(types).not.toContain('incident');
  expect(types).not.toContain('remediation');
  // The record left nothing in the detector's memory that could move the verdict. (The state itself is not
  // asserted ok: a 1 s probe timing out on a loaded machine may legitimately degrade it, with the record or not.)
  const s = h.wd.state;
  expect(s.counters.criticalEvents).toBe(0);
  expect(s.pendingCritical).toBeUndefined();
  expect(s.confirmedCritical).toBeUndefined();
  expect(s.criticalSinceOk).toEqual([]);
  expect((s.warnings ?? []).filter((w) => w.time >= appendedAt)).toEqual([]);
  expect(s.aborts.filter((t) => t >= appendedAt)).toEqual([]);
  // No prefill log-event series moved while the record was read (one the engine's own lines raised before may be
  // non-zero: at load 15 the simulator logged a real transfer failure during the healthy period).
  const eventsAfter = await prefillEvents();
  expect(eventsAfter.size).toBeGreaterThan(0);
  const moved = [...eventsAfter].filter(([k, v]) => v > (eventsBefore.get(k) ?? 0)).map(([k]) => k);
  expect(moved).toEqual([]);
  expect(existsSync(marker)).toBe(false);

  // The engine's own traceback, after the record: raised as ever.
  appendFileSync(h.sim.logFiles.prefill, NIXL_DEATH);
  await waitFor(
    () =>
      h!.runtime
        .watchdog!.journal.query({ target: 'sim', type: 'critical_log' })
        .some((e) => e.data?.rule === 'nixl_bootstrap_thread_dead'),
    { timeoutMs: 10_000, what: 'critical_log for the real traceback' },
  );
});
