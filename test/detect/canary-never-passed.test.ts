// A canary that never answered right since start says so (issue 38): `canary_never_passed`, not a silent
// `wrong_output`; one right answer makes later wrong ones `wrong_output` again.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, canary: { kind: 'canary' } },
};

const canary = (r: Run, result: ProbeResultSignal['result']) =>
  r.probe({
    probe: 'canary',
    probeKind: 'canary',
    endpoint: 'router',
    result,
    ...(result === 'wrong_output' ? { error: 'expected "5", got "five"' } : {}),
  });

describe('canary_never_passed', () => {
  it('a canary wrong from its first answer is canary_never_passed, with the answer in the cause', () => {
    const r = new Run(cfg);
    r.probe({ endpoint: 'router' });
    canary(r, 'wrong_output');
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('canary_never_passed');
    expect(r.s.cause).toMatch(
      /canary on router\/fresh has not answered right once since wedgewatch started: expected "5", got "five"/,
    );
  });

  it('a canary that answered right once and then wrong is wrong_output', () => {
    const r = new Run(cfg);
    r.probe({ endpoint: 'router' });
    canary(r, 'ok');
    canary(r, 'wrong_output');
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('wrong_output');
  });

  it('timeouts are no answer: a canary that only timed out then answered wrong never passed', () => {
    const r = new Run(cfg);
    r.probe({ endpoint: 'router' });
    canary(r, 'timeout');
    canary(r, 'wrong_output');
    expect(r.s.diagnosis).toBe('canary_never_passed');
  });
});
