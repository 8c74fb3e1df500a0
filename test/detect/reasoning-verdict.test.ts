// reasoning_runaway through the reducer and the verdict, on a virtual clock: a canary that does not stop thinking
// degrades the target at once with its own label (not completions_failing, not wrong_output), never wedges it, and
// a leak and a runaway on one slot are told apart by the slot's last result.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, canary: { kind: 'canary' }, tools: { kind: 'toolcall' } },
};

const RUNAWAY = 'runaway reasoning on "Repeat exactly: ABC-DEFG": `</think>` 6 times in content';

describe('reasoning_runaway verdict', () => {
  it('degrades at once, holds while the canary loops, and recovers after passes; chat passing throughout', () => {
    const r = new Run(cfg);
    r.round();
    const canary = (result: ProbeResultSignal['result'], error?: string) =>
      r.probe({
        probe: 'canary',
        probeKind: 'canary',
        endpoint: 'router',
        result,
        ...(error ? { error } : {}),
      });
    canary('ok');
    expect(r.s.state).toBe('ok');
    canary('reasoning_runaway', RUNAWAY);
    expect(`${r.s.state}/${r.s.diagnosis}`).toBe('degraded/reasoning_runaway');
    expect(r.s.cause).toContain('canary on router/fresh: the model does not stop thinking');
    for (let i = 0; i < 5; i++) {
      r.round();
      canary('reasoning_runaway', RUNAWAY);
      expect(`${r.s.state}/${r.s.diagnosis}`).toBe('degraded/reasoning_runaway');
    }
    expect(r.transitions().some((t) => t.startsWith('wedged'))).toBe(false);
    canary('ok');
    r.round();
    canary('ok');
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('a leak on the tool matrix is toolcall_leak, a runaway on the canary reasoning_runaway: each its own', () => {
    const r = new Run(cfg);
    r.round();
    r.probe({ probe: 'tools', probeKind: 'toolcall', endpoint: 'router', result: 'toolcall_leak' });
    expect(r.s.diagnosis).toBe('toolcall_leak');
    const q = new Run(cfg);
    q.round();
    q.probe({ probe: 'canary', probeKind: 'canary', endpoint: 'router', result: 'reasoning_runaway' });
    expect(q.s.diagnosis).toBe('reasoning_runaway');
  });
});
