// The hang check covers every kind the vocabulary marks as a completion. verdict.ts had its own copy of the
// predicate (chat and toolcall only), so a canary or structured probe hung past hangAfter was judged `ok`.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import { PROBE_KINDS, type ProbeKind } from '../../src/core/vocabulary.js';
import { reduce } from '../../src/core/reduce/reduce.js';
import { initialState, type ClassifierConfig, type TargetMemory } from '../../src/core/memory.js';

const completionKinds = (Object.keys(PROBE_KINDS) as ProbeKind[]).filter((k) => PROBE_KINDS[k].completion);

function hungTarget(kind: ProbeKind): TargetMemory {
  const cfg: ClassifierConfig = {
    detect: detectSchema.parse({}),
    hops: ['engine'],
    probes: { only: { kind } },
  };
  let now = 1_000_000;
  let s = initialState('t', now);
  const step = (sig: Parameters<typeof reduce>[1]) => (s = reduce(s, sig, now, cfg).state);
  // Two passing runs: the target is ok.
  for (let i = 0; i < 2; i++) {
    step({
      kind: 'probe',
      target: 't',
      probe: 'only',
      probeKind: kind,
      endpoint: 'engine',
      conn: 'fresh',
      result: 'ok',
      start: now,
      durationMs: 50,
      ttftMs: 20,
    });
    now += 1000;
  }
  expect(s.state).toBe('ok');
  // The next run hangs: ticks carry it in flight until past hangAfter (bounded: one tick per second).
  const startedAt = now;
  const inflight = [{ probe: 'only', endpoint: 'engine', conn: 'fresh' as const, startedAt }];
  const until = startedAt + cfg.detect.hangAfter + 1000;
  while (now < until) {
    now += 1000;
    step({ kind: 'tick', inflight });
  }
  return s;
}

describe('a hung completion of every completion kind wedges the target', () => {
  it('the vocabulary has the six completion kinds (canary, structured, longinput and conversation among them)', () => {
    expect([...completionKinds].sort()).toEqual([
      'canary',
      'chat',
      'conversation',
      'longinput',
      'structured',
      'toolcall',
    ]);
  });
  for (const kind of completionKinds) {
    it(`${kind}: in flight past hangAfter with nothing finished since → wedged/completions_hung`, () => {
      const s = hungTarget(kind);
      expect(s.state).toBe('wedged');
      expect(s.diagnosis).toBe('completions_hung');
    });
  }
  it('a health probe in flight is not a hung completion (stays ok)', () => {
    // Health alone: no completion is configured, so a hang cannot be judged from it.
    expect(hungTarget('health').state).toBe('ok');
  });
});
