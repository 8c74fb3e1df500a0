// Busy is not wedged only while the engine makes tokens after our hung request began (candidates/saturation.ts). A
// reading reports what was made since the reading before it: vLLM's first stats line after a hang averages the 10 s
// before it (vllm/v1/metrics/loggers.py LoggingStatLogger.log), tokens made before the hang. Read by its own time
// (lastTokensAt), that line made a hung engine with work stuck in it "saturated, tokens made 0 s ago" for three
// reading intervals, and candidates/failing.ts withholds completions_failing while saturation explains the failures.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
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
