// The classifier on answer-checking probes: a wrong answer degrades at once (wrong_output); a structured-output
// probe that hangs while chat passes is structured_output_stalled; both recover after passes.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/state/memory.js';
import type { ProbeKind, ProbeResultSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

type Result = ProbeResultSignal['result'];

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: {
    chat: { kind: 'chat' },
    canary: { kind: 'canary' },
    json: { kind: 'structured' },
  },
};

/** Each probe on the router's fresh connection, a second after the previous one, its 50 ms run ending now. */
function answer(r: Run, probe: string, probeKind: ProbeKind, result: Result, error?: string): void {
  r.probe(
    { probe, probeKind, endpoint: 'router', result, start: r.now + 1000 - 50, ...(error ? { error } : {}) },
    1000,
  );
}

/** Chat, canary and structured probes, one each. */
function round(r: Run, canary: Result = 'ok', json: Result = 'ok'): void {
  answer(r, 'chat', 'chat', 'ok');
  answer(
    r,
    'canary',
    'canary',
    canary,
    canary === 'wrong_output' ? 'expected "7748", got "7749"' : undefined,
  );
  answer(r, 'json', 'structured', json);
}

describe('wrong_output', () => {
  it('one wrong answer degrades the target at once, with the answer in the cause', () => {
    const r = new Run(cfg);
    round(r);
    expect(r.verdict).toBe('ok/null');
    answer(r, 'canary', 'canary', 'wrong_output', 'wrong answer: expected "7748", got "7749"');
    expect(r.verdict).toBe('degraded/wrong_output');
    expect(r.s.cause).toContain('expected "7748", got "7749"');
  });

  it('outranks a slow or leaking probe and stays while answers stay wrong', () => {
    const r = new Run(cfg);
    round(r);
    answer(r, 'chat', 'chat', 'toolcall_leak');
    answer(r, 'canary', 'canary', 'wrong_output');
    answer(r, 'canary', 'canary', 'wrong_output');
    expect(r.verdict).toBe('degraded/wrong_output');
    expect(r.s.slots['canary|router|fresh']!.wrongStreak).toBe(2);
  });

  it('is a finished completion: it neither wedges the target nor counts toward a wedge', () => {
    const r = new Run(cfg);
    round(r);
    for (let i = 0; i < 5; i++) round(r, 'wrong_output');
    expect(r.s.state).toBe('degraded');
    expect(r.s.slots['canary|router|fresh']!.failStreak).toBe(0);
  });

  it('recovers to ok after recoverAfter passing rounds, not after one', () => {
    const r = new Run(cfg);
    round(r);
    round(r, 'wrong_output');
    round(r);
    expect(r.verdict).toBe('degraded/wrong_output');
    round(r);
    expect(r.verdict).toBe('ok/null');
  });
});

describe('structured_output_stalled', () => {
  it('structured probes timing out while chat and canary pass → degraded/structured_output_stalled', () => {
    const r = new Run(cfg);
    round(r);
    round(r, 'ok', 'timeout');
    expect(r.s.state).toBe('ok'); // one timeout is not yet a failing slot (wedgeAfter 2)
    round(r, 'ok', 'timeout');
    expect(r.verdict).toBe('degraded/structured_output_stalled');
    expect(r.s.cause).toContain('completions without a response_format pass');
    round(r);
    round(r);
    expect(r.verdict).toBe('ok/null');
  });

  it('everything failing is a wedge, not a grammar problem', () => {
    const r = new Run(cfg);
    round(r);
    for (let i = 0; i < 2; i++) {
      answer(r, 'chat', 'chat', 'timeout');
      answer(r, 'canary', 'canary', 'timeout');
      answer(r, 'json', 'structured', 'timeout');
    }
    expect(r.s.state).toBe('wedged');
  });

  it('structured output that breaks its schema is wrong_output', () => {
    const r = new Run(cfg);
    round(r);
    round(r, 'ok', 'wrong_output');
    expect(r.verdict).toBe('degraded/wrong_output');
  });
});
