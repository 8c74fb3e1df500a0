// Issue 37 item 1: a critical log line confirmed by probes needs evidence that the engine is not serving. On a busy
// engine (first tokens in 6–9 s, every completion still finishing in 14–17 s, the engine's own decode batches
// making tokens) "no first token within confirmAfter" is queueing: a thread-death line (a prompt's fake one, or any)
// must not reach wedged (and so no bundle, no remediation) by confirmation alone. A real death, after which nothing
// moves, is still confirmed confirmAfter after the engine last moved. Virtual clock, the example config's cadence.
import { describe, expect, it } from 'vitest';
import type { EngineSignal, LogEventSignal } from '../../src/core/signals.js';
import { isCompletion } from '../../src/core/vocabulary.js';
import { exampleTarget, healthy, rng, VirtualDeployment, type RunInfo } from './virtual-deployment.js';

const THREAD_DEATH = [
  'Exception in thread Thread-7 (bootstrap_thread):',
  'Traceback (most recent call last):',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
].join('\n');

const tracebackAt = (time: number): LogEventSignal => ({
  kind: 'log',
  target: 'dsv4-pd',
  service: 'prefill',
  rule: 'nixl_bootstrap_thread_died',
  class: 'kv_bootstrap_dead',
  severity: 'critical',
  line: THREAD_DEATH,
  file: '/var/log/sglang/prefill.log',
  offset: 0,
  time,
  fields: { thread: 'bootstrap_thread' },
});

/** A loaded engine: every completion's first token in 6–9 s, its end in 14–17 s (health and serverinfo fast). */
const busy = (seed: number) => {
  const r = rng(seed);
  return (run: RunInfo) =>
    isCompletion(run.probe.kind) ? { ms: 14_000 + r() * 3000, ttftMs: 6000 + r() * 3000 } : healthy(run);
};

const target = exampleTarget();
const d = target.detect;
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

/** The decode engine's own batch lines: tokens made every `everyMs` while `moving()` (a busy SGLang decode). */
function runWithEngine(v: VirtualDeployment, until: number, moving: () => boolean, everyMs = 2000): void {
  while (v.now < until) {
    v.runUntil(Math.min(until, v.now + everyMs));
    if (!moving()) continue;
    const sig: EngineSignal = {
      kind: 'engine',
      target: target.name,
      service: 'decode',
      source: 'log',
      time: v.now,
      running: 48,
      queued: 20,
      genThroughput: 900,
      progress: true,
    };
    v.feed(sig);
  }
}

const events = (v: VirtualDeployment, type: string) =>
  v.steps.flatMap((s) => s.events.filter((e) => e.type === type));

describe('confirmation on a busy engine (issue 37 item 1)', () => {
  it.each(SEEDS)(
    'a thread-death line on a busy engine that still serves is never confirmed: no wedged (seed %i)',
    (seed) => {
      const v = new VirtualDeployment(target, busy(seed), seed);
      runWithEngine(v, v.t0 + 3 * 60_000 + rng(seed * 31)() * 15_000, () => true);
      expect(v.s.state).not.toBe('wedged');
      v.feed(tracebackAt(v.now));
      const line = v.now;
      runWithEngine(v, line + 2 * 60_000, () => true);
      expect(events(v, 'critical_log')).toHaveLength(1);
      expect(events(v, 'critical_confirmed')).toEqual([]);
      expect(v.transitions().filter((t) => t.startsWith('wedged'))).toEqual([]);
    },
  );

  it.each(SEEDS)(
    'the same engine whose thread really died (nothing moves after the last runs finish) is wedged/kv_bootstrap_thread_dead confirmAfter after it last served (seed %i)',
    (seed) => {
      let deadAt = Infinity;
      const serve = busy(seed);
      const v = new VirtualDeployment(
        target,
        (run) => (isCompletion(run.probe.kind) && run.start >= deadAt ? 'hang' : serve(run)),
        seed,
      );
      runWithEngine(v, v.t0 + 3 * 60_000 + rng(seed * 31)() * 15_000, () => true);
      deadAt = v.now;
      v.feed(tracebackAt(v.now));
      // The runs already past the dead thread finish (their tokens and answers are the engine's last moves); the
      // engine's batches stop with them.
      const lastServing = () => v.s.servingAt ?? 0;
      const wedgedAt = v.runUntilTrue(() => v.s.state === 'wedged', deadAt + 60_000);
      expect(wedgedAt).toBeDefined();
      expect(v.s.diagnosis).toBe('kv_bootstrap_thread_dead');
      expect(events(v, 'critical_confirmed')).toHaveLength(1);
      expect(wedgedAt! - Math.max(deadAt, lastServing())).toBeLessThanOrEqual(d.confirmAfter + 1000);
    },
  );
});
