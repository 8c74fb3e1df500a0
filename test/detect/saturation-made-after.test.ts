// Busy is not wedged only while the engine makes tokens after our hung request began (candidates/saturation.ts). A
// reading reports what was made since the reading before it: vLLM's first stats line after a hang averages the 10 s
// before it (vllm/v1/metrics/loggers.py LoggingStatLogger.log), tokens made before the hang. Read by its own time
// (lastTokensAt), that line made a hung engine with work stuck in it "saturated, tokens made 0 s ago" for three
// reading intervals, and candidates/failing.ts withholds completions_failing while saturation explains the failures.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig, SlotMemory } from '../../src/core/memory.js';
import { busyEngine } from '../../src/core/verdict/candidates/saturation.js';
import type { Hang } from '../../src/core/verdict/types.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: { chat: { kind: 'chat' } },
};

const STATS_MS = 10_000;

/** One vLLM stats line from decode: 4 running, 3 waiting, tokens made since the line before. */
const line = (r: Run) =>
  r.engine(
    { service: 'decode', source: 'log', running: 4, queued: 3, genThroughput: 100, progress: true },
    STATS_MS,
  );

const hang = (startedAt: number, now: number): Hang => ({
  run: { probe: 'chat', endpoint: 'router', conn: 'fresh', startedAt },
  ageMs: now - startedAt,
  afterCritical: false,
  hung: true,
  late: true,
});

describe('saturation counts only tokens known to be made after the hang began', () => {
  it('the first stats line after a hang is no saturation; the next one, tokens still flowing, is', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 5; i++) line(r);
    const startedAt = r.now + 1_000;
    // The line after the hang began reports the 10 s before it, most of them before the hang.
    line(r);
    expect(r.s.engines.decode!.progress!.lastTokensAt).toBeGreaterThan(startedAt);
    expect(busyEngine(r.s, r.now, cfg, [hang(startedAt, r.now)], [])).toBeUndefined();
    // A busy engine keeps making tokens: the line after that one reports only tokens made since the hang began.
    line(r);
    const busy = busyEngine(r.s, r.now, cfg, [hang(startedAt, r.now)], []);
    expect(busy?.ours).toBe(false);
    expect(busy?.text).toContain('is saturated');
  });
});

describe('a failing /metrics is excused only by stats lines that report tokens made since it began failing', () => {
  /** One scrape of decode under the load: 4 running, 3 waiting, the token counter moving (or the scrape failing). */
  const scrape = (r: Run, ok: boolean, advance: number) =>
    r.engine(
      ok ? { running: 4, queued: 3, generatedTokensTotal: Math.floor(r.now / 10) } : { scrapeOk: false },
      advance,
    );
  /** One stats line from decode, tokens made since the line before. */
  const statsLine = (r: Run, advance: number) =>
    r.engine(
      { service: 'decode', source: 'log', running: 4, queued: 3, genThroughput: 100, progress: true },
      advance,
    );
  /** One cycle of 10 s: two scrapes 5 s apart, a stats line 1 s after the second. */
  const cycle = (r: Run, ok: boolean) => {
    scrape(r, ok, 5_000);
    scrape(r, ok, 4_000);
    statsLine(r, 1_000);
  };

  /** A chat slot whose runs time out (the test settings' 1 s timeout), the last started at `start`. */
  const timingOut = (start: number): SlotMemory => ({
    probe: 'chat',
    probeKind: 'chat',
    endpoint: 'router',
    conn: 'fresh',
    failStreak: 2,
    failSince: start - 5_000,
    okStreak: 0,
    slowStreak: 0,
    leakStreak: 0,
    last: { result: 'timeout', start, durationMs: 1_000 },
  });

  it('the first stats line after the scrapes began failing reports the 10 s before it: no evidence that the engine serves since; the next one is', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 6; i++) cycle(r, true);
    // Our probe has waited in the load for a minute: the hang is older than every reading here.
    const startedAt = r.now - 60_000;
    // The scrapes fail from here on; the line after the first failure averages the 10 s before it.
    scrape(r, false, 5_000);
    const failingSince = r.now;
    statsLine(r, 1_000);
    const lineAt = r.now;
    scrape(r, false, 4_000);
    const p = r.s.engines.decode!.progress!;
    expect(p.failedScrapes).toBe(2);
    expect(p.lastTokensAt).toBeGreaterThan(failingSince);
    expect(p.madeAfter).toBeLessThan(failingSince);
    // Not "is saturated, our completions wait for a slot": the hang is excused only as the load's last readings'
    // (the drained-load grace, a few readings)…
    const hung = busyEngine(r.s, r.now, cfg, [hang(startedAt, r.now)], []);
    expect(hung?.text).toMatch(/^decode was saturated \d+ s ago/);
    // …and a timeout that began after that line is not excused at all.
    expect(busyEngine(r.s, r.now, cfg, [], [timingOut(lineAt + 2_000)])).toBeUndefined();
    // The next line reports only the 10 s since the one before, both after the failures began: it serves.
    scrape(r, false, 5_000);
    statsLine(r, 1_000);
    expect(r.s.engines.decode!.progress!.madeAfter).toBeGreaterThanOrEqual(failingSince);
    expect(busyEngine(r.s, r.now, cfg, [hang(startedAt, r.now)], [])?.text).toContain('decode is saturated');
    expect(busyEngine(r.s, r.now, cfg, [], [timingOut(r.now - 2_000)])?.text).toContain(
      'decode is saturated',
    );
  });
});

describe('a keep-alive slot held failing by passes over new connections is waiting, not erring (issue 38)', () => {
  it('llama-server saturated by others: our keep-alive pass on a new connection leaves no wedge behind', () => {
    // The real llama-server closes the connection after each streamed response, so a keep-alive slot's passes after
    // a timeout come over new connections: inconclusive for reuse (reduce/slots.ts), they keep its failure streak
    // with the last result `ok`. busyEngine read that slot as failing otherwise than by waiting, explained nothing,
    // and the saturated engine read wedged (bench:real-llama saturation, wedged/intermittent at 250 s).
    const r = new Run({ ...cfg, probes: { chat: { kind: 'chat', ttftObjective: 60_000 } } });
    const scrape = () =>
      r.engine({ running: 2, queued: 2, generatedTokensTotal: Math.floor(r.now / 10) }, 5_000);
    for (let i = 0; i < 4; i++) {
      r.round();
      scrape();
    }
    expect(r.s.state).toBe('ok');
    // Both slots of others' long streams: ours time out waiting, twice in a row.
    for (let i = 0; i < 2; i++) {
      scrape();
      r.round('timeout');
    }
    scrape();
    // The keep-alive run gets a slot as a stream ends: it passes, over a new connection (the server closed the last).
    r.probe({
      endpoint: 'router',
      conn: 'keepalive',
      result: 'ok',
      reusedConnection: false,
      durationMs: 15_000,
    });
    scrape();
    const keepalive = r.s.slots['chat|router|keepalive']!;
    expect(keepalive.last?.result).toBe('ok');
    expect(keepalive.failStreak).toBeGreaterThanOrEqual(2);
    expect(r.s.state).not.toBe('wedged');
    expect(r.verdict).toBe('degraded/engine_saturated');
  });
});
