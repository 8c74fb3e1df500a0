// Busy is not wedged only for the engine that is busy (candidates/saturation.ts stalledBeside): a target with several
// engines — an SGLang PD pair behind its router, two replicas behind one — can have one saturated by others' load
// while another holds work and makes no progress at all. Before, the saturated engine explained every hang of the
// target as "waiting for a slot": a prefill whose bootstrap thread died beside a busy decode read degraded/
// engine_saturated until the gauge stall clock (stallAfter, 60 s) caught up, and one whose /metrics stopped answering
// never paged. On the virtual clock with the example config's probes and cadence, engines scraped every 5 s.
import { describe, expect, it } from 'vitest';
import type { EngineSignal } from '../../src/core/signals.js';
import { exampleTarget, healthy, VirtualDeployment } from './virtual-deployment.js';
import { isCompletion } from '../../src/core/vocabulary.js';

const SCRAPE_MS = 5_000;
const SEEDS = [1, 2, 3, 4, 5, 6];

/** What one engine reports at one scrape (undefined: the scrape fails). */
type Reading = Partial<EngineSignal> | undefined;

/** A healthy engine between probes: nothing running or waiting, its counters moving with our probes' tokens. */
const idle = (now: number): Reading => ({
  running: 0,
  queued: 0,
  generatedTokensTotal: Math.floor(now / 1000) * 16,
  finishedTotal: Math.floor(now / 1000),
});

/** Saturated by others' long generations: every slot held, a queue, tokens flowing. */
const saturated = (now: number): Reading => ({
  running: 4,
  queued: 20,
  generatedTokensTotal: Math.floor(now / 10),
  finishedTotal: Math.floor(now / 1000),
});

/** Holding `work` with counters frozen where they were at `at`: no token made since. */
const frozen = (at: number, work: Partial<EngineSignal>): Reading => ({
  running: 0,
  queued: 0,
  ...work,
  generatedTokensTotal: Math.floor(at / 1000) * 16,
  finishedTotal: Math.floor(at / 1000),
});

/**
 * The example target (PD: router, prefill, decode) with its completions hanging from the fault on, and engines
 * `services` scraped every 5 s; `reading(service, now, faultAt)` says what each reports from the fault on (idle
 * before it). A router, when listed, reports our requests in flight. The labels from the fault on, with when each
 * was first seen (s after the fault) and the cause it had then.
 */
function run(
  services: readonly string[],
  reading: (service: string, now: number, faultAt: number) => Reading,
  seed: number,
  minutes: number,
) {
  let faultAt = Infinity;
  const v = new VirtualDeployment(
    exampleTarget(),
    (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
    seed,
  );
  const scrape = (until: number) =>
    v.scrapeUntil(
      until,
      services,
      (service, now): Reading =>
        service === 'router'
          ? { routerInflight: now < faultAt ? 0 : 3 }
          : now < faultAt
            ? idle(now)
            : reading(service, now, faultAt),
      SCRAPE_MS,
    );
  scrape(v.t0 + 10 * 60_000);
  expect(v.s.state).toBe('ok');
  faultAt = v.now + 2_000 * seed;
  scrape(faultAt + minutes * 60_000);
  const seen: Array<{ label: string; s: number; cause: string }> = [];
  for (const step of v.steps) {
    if (step.at < faultAt) continue;
    const label = `${step.state.state}/${step.state.diagnosis ?? '-'}`;
    if (seen.at(-1)?.label !== label)
      seen.push({ label, s: (step.at - faultAt) / 1000, cause: step.state.cause ?? '' });
  }
  return seen;
}

const PD = ['router', 'prefill', 'decode'];
const firstWedge = (seen: ReturnType<typeof run>) => seen.find((x) => x.label.startsWith('wedged'));

describe('a saturated engine does not hide a stall on another engine of the target', () => {
  it.each(SEEDS)(
    "PD: decode saturated by others, prefill holding queued work with no token (its bootstrap thread died) while our probe hangs: wedged/engine_stalled naming both, before the gauge stall clock's 60 s (seed %i)",
    (seed) => {
      const seen = run(
        PD,
        (service, now, faultAt) => (service === 'decode' ? saturated(now) : frozen(faultAt, { queued: 3 })),
        seed,
        3,
      );
      const wedge = firstWedge(seen);
      expect(wedge?.label).toBe('wedged/engine_stalled');
      // hangAfter (20 s) for the hang, plus hangAfter and three scrapes for the prefill's own stall.
      expect(wedge!.s).toBeLessThan(60);
      expect(wedge!.cause).toMatch(/decode is saturated: 4 running and 20 waiting/);
      expect(wedge!.cause).toMatch(
        /but prefill: no progress for \d+ s .*its gauges hold 0 running and 3 queued/,
      );
      // Once wedged, the load never explains it away again while the fault holds.
      expect(seen.slice(seen.indexOf(wedge!)).map((x) => x.label)).not.toContain('degraded/engine_saturated');
    },
  );

  it.each(SEEDS)(
    'PD: decode saturated, prefill frozen so that its /metrics stops answering: wedged as a half-failed pair, never engine_saturated only (seed %i)',
    (seed) => {
      const seen = run(
        PD,
        (service, now, faultAt) =>
          service === 'decode'
            ? saturated(now)
            : now < faultAt + 10_000
              ? frozen(faultAt, { queued: 3 })
              : undefined,
        seed,
        3,
      );
      const wedge = firstWedge(seen);
      expect(wedge?.label).toBe('wedged/pd_pair_half_failed');
      expect(wedge!.cause).toMatch(/prefill is down \(its \/metrics scrape fails\) and decode is up/);
    },
  );

  it.each(SEEDS)(
    'PD: decode saturated, prefill healthy (bootstrapping what decode will admit, making tokens): degraded/engine_saturated for 10 minutes, no wedge (seed %i)',
    (seed) => {
      const seen = run(
        PD,
        (service, now) =>
          service === 'decode'
            ? saturated(now)
            : { running: 1, queued: 0, preallocQueue: 4, generatedTokensTotal: Math.floor(now / 1000) * 16 },
        seed,
        10,
      );
      const labels = seen.map((x) => x.label);
      expect(labels).toContain('degraded/engine_saturated');
      expect(labels.filter((x) => x.startsWith('wedged'))).toEqual([]);
      expect(seen.at(-1)!.label).toBe('degraded/engine_saturated');
    },
  );

  it.each(SEEDS)(
    'two replicas behind a router, one saturated, one frozen (gauges unchanging, work queued, no token): wedged/engine_stalled naming both (seed %i)',
    (seed) => {
      const seen = run(
        ['router', 'replica-a', 'replica-b'],
        (service, now, faultAt) =>
          service === 'replica-a' ? saturated(now) : frozen(faultAt, { running: 2, queued: 3 }),
        seed,
        3,
      );
      const wedge = firstWedge(seen);
      expect(wedge?.label).toBe('wedged/engine_stalled');
      expect(wedge!.s).toBeLessThan(60);
      expect(wedge!.cause).toMatch(/replica-a is saturated/);
      expect(wedge!.cause).toMatch(/but replica-b: no progress/);
    },
  );
});
