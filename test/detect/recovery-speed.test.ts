// Recovery as fast as the evidence allows (issue 38): a slow slot that passed once after the fault is enough for
// itself; intermittency counts the runs of the last INTERMITTENT_SPAN_MS only; remediation waits while the evidence
// already shows a recovery, and that wait burns no hourly cap. All on the virtual clock (./run.ts).
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { INTERMITTENT_SPAN_MS } from '../../src/core/verdict/candidates/pattern.js';
import { remediateSchema } from '../../src/config/schema.js';
import { decide, newLedger } from '../../src/outputs/remediate/policy.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, st: { kind: 'structured' } },
};

/** The example's cadence: chat every 15 s on both connection kinds, the structured probe every 5 m. */
function chatRound(r: Run, result: ProbeResultSignal['result'] = 'ok') {
  r.probe({ endpoint: 'router', conn: 'fresh', result }, 7_500);
  r.probe(
    { endpoint: 'router', conn: 'keepalive', result, reusedConnection: true, primedConnection: true },
    7_500,
  );
}
const structured = (r: Run, result: ProbeResultSignal['result'] = 'ok') =>
  r.probe({ probe: 'st', probeKind: 'structured', endpoint: 'router', result }, 100);

describe('recovery speed', () => {
  it('a structured probe every 5 m that failed in the wedge needs one pass after it, not two', () => {
    const r = new Run(cfg);
    structured(r);
    chatRound(r);
    expect(r.s.state).toBe('ok');
    // The wedge: chat fails, the structured probe fails its two runs during it.
    for (let i = 0; i < 4; i++) chatRound(r, 'timeout');
    structured(r, 'timeout');
    structured(r, 'timeout');
    expect(r.s.state).toBe('wedged');
    // Restarted: chat passes at once, the structured probe runs again only later.
    for (let i = 0; i < 3; i++) chatRound(r);
    expect(r.s.state).not.toBe('ok'); // the structured slot's last run failed: not clean yet
    structured(r);
    expect(r.s.state).toBe('ok'); // one pass after the fault is enough for its own slot
  });

  it('one lucky pass mid-wedge still moves nothing: a fast completion slot must pass recoverAfter times', () => {
    const r = new Run({ ...cfg, probes: { chat: { kind: 'chat' } } });
    chatRound(r);
    chatRound(r, 'timeout');
    chatRound(r, 'timeout');
    expect(r.s.state).toBe('wedged');
    chatRound(r);
    expect(r.s.state).toBe('wedged');
    chatRound(r);
    expect(r.s.state).toBe('ok');
  });

  it("a slow slot's failures from a fault long over do not leave the target intermittent after a clean restart", () => {
    const r = new Run(cfg);
    structured(r);
    chatRound(r);
    // An earlier fault, half an hour ago: the structured slot failed once then.
    structured(r, 'timeout');
    for (let i = 0; i < 6; i++) {
      // 5 minutes of healthy chat between structured runs
      for (let j = 0; j < 20; j++) chatRound(r);
      structured(r);
    }
    expect(r.s.state).toBe('ok');
    // The last fault: one structured failure, then a clean restart.
    structured(r, 'timeout');
    structured(r, 'timeout');
    for (let i = 0; i < 4; i++) chatRound(r);
    structured(r);
    const win = r.s.slots['st|router|fresh']!.recent!;
    // Both episodes are still in the 10-run window; only the recent one is within the time bound.
    expect(win.filter((x) => x === 1).length).toBe(3);
    expect(r.now - r.s.slots['st|router|fresh']!.recentAt![0]!).toBeGreaterThan(INTERMITTENT_SPAN_MS);
    expect(r.s.state).toBe('ok');
    expect(r.s.diagnosis).toBeNull();
  });

  it('failures that come and go within the time bound are still intermittent', () => {
    const r = new Run({ ...cfg, probes: { chat: { kind: 'chat' } } });
    chatRound(r);
    for (let i = 0; i < 3; i++) {
      r.probe({ endpoint: 'router', conn: 'fresh', result: 'timeout' }, 7_500);
      r.probe({ endpoint: 'router', conn: 'fresh' }, 7_500);
    }
    expect(r.s.diagnosis).toBe('intermittent');
  });
});

describe('remediation on a recovering engine', () => {
  const rc = remediateSchema.parse({ command: ['true'], after: '30s', cooldown: '15m', maxPerHour: 1 });

  it('waits while the verdict is already better than the held state, burning no run of the hourly cap', () => {
    const ledger = newLedger();
    const since = 1_000_000;
    const now = since + 60_000;
    // Held wedged by hysteresis, the last evaluation ok: the engine has recovered.
    expect(decide(ledger, { state: 'wedged', since, verdict: 'ok' }, now, rc, false)).toEqual({
      kind: 'wait',
    });
    expect(decide(ledger, { state: 'wedged', since, verdict: 'degraded' }, now, rc, false)).toEqual({
      kind: 'wait',
    });
    expect(ledger.runs).toEqual([]);
    // The real wedge that follows is acted on: the cap was not burnt.
    const again = now + 120_000;
    expect(
      decide(ledger, { state: 'wedged', since: again - 60_000, verdict: 'wedged' }, again, rc, false),
    ).toEqual({
      kind: 'run',
    });
  });

  it('the reducer keeps the verdict beside the held state: wedged, held, while the first passes come in', () => {
    const r = new Run({ ...cfg, probes: { chat: { kind: 'chat' } } });
    chatRound(r);
    chatRound(r, 'timeout');
    chatRound(r, 'timeout');
    expect(r.s).toMatchObject({ state: 'wedged', verdict: 'wedged' });
    chatRound(r);
    expect(r.s).toMatchObject({ state: 'wedged', verdict: 'ok' });
    expect(decide(newLedger(), { ...r.s, since: r.s.since - 600_000 }, r.now, rc, false)).toEqual({
      kind: 'wait',
    });
  });
});
