// The classifier on answer-checking probes: a wrong answer degrades at once (wrong_output); a structured-output
// probe that hangs while chat passes is structured_output_stalled; both recover after passes.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import { reduce } from '../../src/detect/state/reduce.js';
import { initialState, type ClassifierConfig, type TargetState } from '../../src/detect/state/memory.js';
import type { ProbeKind, ProbeResultSignal } from '../../src/signals.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: {
    chat: { kind: 'chat' },
    canary: { kind: 'canary' },
    json: { kind: 'structured' },
  },
};

class Run {
  now = 1_000_000;
  s: TargetState = initialState('t', this.now);
  probe(probe: string, kind: ProbeKind, result: ProbeResultSignal['result'], error?: string): void {
    this.now += 1000;
    const sig: ProbeResultSignal = {
      kind: 'probe',
      target: 't',
      probe,
      probeKind: kind,
      endpoint: 'router',
      conn: 'fresh',
      result,
      start: this.now - 50,
      durationMs: 50,
      ...(error ? { error } : {}),
    };
    this.s = reduce(this.s, sig, this.now, cfg).state;
  }
  round(canary: ProbeResultSignal['result'] = 'ok', json: ProbeResultSignal['result'] = 'ok'): void {
    this.probe('chat', 'chat', 'ok');
    this.probe(
      'canary',
      'canary',
      canary,
      canary === 'wrong_output' ? 'expected "7748", got "7749"' : undefined,
    );
    this.probe('json', 'structured', json);
  }
  get verdict() {
    return `${this.s.state}/${this.s.diagnosis}`;
  }
}

describe('wrong_output', () => {
  it('one wrong answer degrades the target at once, with the answer in the cause', () => {
    const r = new Run();
    r.round();
    expect(r.verdict).toBe('ok/null');
    r.probe('canary', 'canary', 'wrong_output', 'wrong answer: expected "7748", got "7749"');
    expect(r.verdict).toBe('degraded/wrong_output');
    expect(r.s.cause).toContain('expected "7748", got "7749"');
  });

  it('outranks a slow or leaking probe and stays while answers stay wrong', () => {
    const r = new Run();
    r.round();
    r.probe('chat', 'chat', 'toolcall_leak');
    r.probe('canary', 'canary', 'wrong_output');
    r.probe('canary', 'canary', 'wrong_output');
    expect(r.verdict).toBe('degraded/wrong_output');
    expect(r.s.slots['canary|router|fresh']!.wrongStreak).toBe(2);
  });

  it('is a finished completion: it neither wedges the target nor counts toward a wedge', () => {
    const r = new Run();
    r.round();
    for (let i = 0; i < 5; i++) r.round('wrong_output');
    expect(r.s.state).toBe('degraded');
    expect(r.s.slots['canary|router|fresh']!.failStreak).toBe(0);
  });

  it('recovers to ok after recoverAfter passing rounds, not after one', () => {
    const r = new Run();
    r.round();
    r.round('wrong_output');
    r.round();
    expect(r.verdict).toBe('degraded/wrong_output');
    r.round();
    expect(r.verdict).toBe('ok/null');
  });
});

describe('structured_output_stalled', () => {
  it('structured probes timing out while chat and canary pass → degraded/structured_output_stalled', () => {
    const r = new Run();
    r.round();
    r.round('ok', 'timeout');
    expect(r.s.state).toBe('ok'); // one timeout is not yet a failing slot (wedgeAfter 2)
    r.round('ok', 'timeout');
    expect(r.verdict).toBe('degraded/structured_output_stalled');
    expect(r.s.cause).toContain('completions without a response_format pass');
    r.round();
    r.round();
    expect(r.verdict).toBe('ok/null');
  });

  it('everything failing is a wedge, not a grammar problem', () => {
    const r = new Run();
    r.round();
    for (let i = 0; i < 2; i++) {
      r.probe('chat', 'chat', 'timeout');
      r.probe('canary', 'canary', 'timeout');
      r.probe('json', 'structured', 'timeout');
    }
    expect(r.s.state).toBe('wedged');
  });

  it('structured output that breaks its schema is wrong_output', () => {
    const r = new Run();
    r.round();
    r.round('ok', 'wrong_output');
    expect(r.verdict).toBe('degraded/wrong_output');
  });
});
