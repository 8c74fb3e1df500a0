// The e2e's bootstrap-thread story after the operator restarts prefill: the wedge's own stuck requests fail their KV
// transfers as the restart lets them go (decode counts them), every probe passes again, and the target goes wedged
// → degraded. Before: the tail held kv_transfer_failing a whole failureWindow after it (the hold counted the wedge's
// failures), and the confirmed thread-death line, kept until ok, re-wedged the target with the old diagnosis on the
// next single wrong answer — a new page with no new evidence. A fixed engine must reach ok and stay unpaged.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({ confirmInterval: '1s', failureCount: 3, failureWindow: '60s' }),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, canary: { kind: 'canary' }, health: { kind: 'health' } },
};

const THREAD_DEATH =
  "Exception in thread Thread-3 (bootstrap_thread): AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?";

type Outcome = 'ok' | 'timeout' | 'wrong_output';

/** The e2e's shape up to the restart: healthy, the thread dies, confirmed wedge, prefill restarted and its tail. */
/** Prefill's NIXL bootstrap thread dies: its critical line, now. */
function threadDies(r: Run): void {
  r.log({
    severity: 'critical',
    rule: 'nixl_bootstrap_thread_dead',
    class: 'kv_bootstrap_dead',
    service: 'prefill',
    line: THREAD_DEATH,
    time: r.now,
  });
}

function restarted(): { r: Run; round: (chat?: Outcome, canary?: Outcome) => void } {
  const r = new Run(cfg);
  let failed = 0;
  const round = (chat: Outcome = 'ok', canary: Outcome = 'ok') => {
    r.round(chat);
    r.probe({ endpoint: 'router', probe: 'canary', probeKind: 'canary', conn: 'fresh', result: canary });
    r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health' });
    r.engine({ service: 'decode', kvTransferFailedTotal: failed, running: 0 }, 700);
  };
  for (let i = 0; i < 5; i++) round();
  threadDies(r);
  round('timeout', 'timeout');
  round('timeout', 'timeout');
  expect(r.verdict).toBe('wedged/kv_bootstrap_thread_dead');
  expect(r.s.confirmedCritical?.diagnosis).toBe('kv_bootstrap_thread_dead');
  // Prefill restarted: the requests stuck in the wedge fail their transfers at decode (5 of them, counted at the
  // next scrape), and every probe passes again.
  failed += 5;
  for (let i = 0; i < 3; i++) round();
  expect(r.s.state).toBe('degraded');
  return { r, round };
}

describe('after a restart fixed a confirmed wedge', () => {
  it("the wedge's KV tail does not hold the fixed target degraded a whole failureWindow", () => {
    const { r, round } = restarted();
    const tailAt = r.now;
    while (r.s.state !== 'ok' && r.now - tailAt < 90_000) round();
    expect(r.s.state).toBe('ok');
    // The fresh burst names kv_transfer_failing for failureWindow / 4 after it; the hold counts only failures after
    // the wedge ended. Before: 42.9 s, past the e2e's 30 s for the bootstrap-thread warning to end.
    expect(r.now - tailAt).toBeLessThan(25_000);
    expect(r.transitions()).toEqual([
      'ok/-',
      'wedged/kv_bootstrap_thread_dead',
      'degraded/kv_bootstrap_thread_dead',
      'ok/-',
    ]);
  });

  it('one wrong answer (or one failed run) while degraded does not re-wedge the target on the old line', () => {
    for (const [chat, canary] of [
      ['ok', 'wrong_output'],
      ['timeout', 'ok'],
    ] as const) {
      const { r, round } = restarted();
      const before = r.transitions().length;
      round(chat, canary);
      round();
      // No new evidence of a wedge: the line was spent when every completion passed past it.
      expect(r.transitions().slice(before), `${chat}/${canary}`).not.toContain(
        'wedged/kv_bootstrap_thread_dead',
      );
      expect(r.s.state, `${chat}/${canary}`).not.toBe('wedged');
      expect(r.s.confirmedCritical).toBeUndefined();
    }
  });
});

// A long-input probe runs every 10 m and does not count for recovery (vocabulary.ts): the verdict lets the target out
// of its wedge without it, and the hysteresis must spend the line by the same list, or a long-input pass from before
// the line keeps it on the degraded target until the next single failure re-wedges it with the old diagnosis.
describe('a long-input probe that passed before the confirmed line', () => {
  const withLong: ClassifierConfig = {
    ...cfg,
    probes: { ...cfg.probes, long: { kind: 'longinput' } },
  };
  const long = (r: Run, result: Outcome = 'ok') =>
    r.probe({ endpoint: 'router', probe: 'long', probeKind: 'longinput', conn: 'fresh', result });

  it('does not keep the spent line once the recovering probes pass, nor re-wedge on one failure', () => {
    const r = new Run(withLong);
    let failed = 0;
    const round = (chat: Outcome = 'ok', canary: Outcome = 'ok') => {
      r.round(chat);
      r.probe({ endpoint: 'router', probe: 'canary', probeKind: 'canary', conn: 'fresh', result: canary });
      r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health' });
      r.engine({ service: 'decode', kvTransferFailedTotal: failed, running: 0 }, 700);
    };
    for (let i = 0; i < 5; i++) round();
    long(r);
    const longPassedAt = r.now;
    round();
    threadDies(r);
    round('timeout', 'timeout');
    round('timeout', 'timeout');
    expect(r.verdict).toBe('wedged/kv_bootstrap_thread_dead');
    expect(r.s.confirmedCritical!.time).toBeGreaterThan(longPassedAt);
    // Restarted: the tail's transfer failures hold it degraded; the long-input probe has not run since.
    failed += 5;
    for (let i = 0; i < 3; i++) round();
    expect(r.s.state).toBe('degraded');
    expect(
      r.s.slots[Object.keys(r.s.slots).find((k) => r.s.slots[k]!.probeKind === 'longinput')!]!.last!.start,
    ).toBe(longPassedAt - 100);
    expect(r.s.confirmedCritical).toBeUndefined();
    const before = r.transitions().length;
    round('timeout');
    round();
    expect(r.transitions().slice(before)).not.toContain('wedged/kv_bootstrap_thread_dead');
    expect(r.s.state).not.toBe('wedged');
  });

  it('a target probed for completions only by long-input leaves the wedge when its passes come after the line', () => {
    const only: ClassifierConfig = {
      ...cfg,
      probes: { long: { kind: 'longinput' }, health: { kind: 'health' } },
    };
    const r = new Run(only);
    const round = (result: Outcome = 'ok') => {
      r.probe({ endpoint: 'router', probe: 'long', probeKind: 'longinput', conn: 'fresh', result });
      r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health' });
      r.engine({ service: 'decode', running: 0 }, 700);
    };
    for (let i = 0; i < 5; i++) round();
    threadDies(r);
    round('timeout');
    round('timeout');
    round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.confirmedCritical).toBeDefined();
    for (let i = 0; i < 5; i++) round();
    expect(r.s.state).not.toBe('wedged');
    expect(r.s.confirmedCritical).toBeUndefined();
  });
});
