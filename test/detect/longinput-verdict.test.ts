// The long-input probe in the verdict, on a virtual clock (issue 41 item 7): it runs every 10 m in the reference
// configs, so its passes do not hold recovery (a target back from an outage is ok when its frequent probes say so,
// not 20 minutes later), while its own failures still name long_context_failing and one pass ends that.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({}),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, long: { kind: 'longinput' } },
};

const long = (r: Run, result: 'ok' | 'timeout' | 'connect_error') =>
  r.probe({ probe: 'long', probeKind: 'longinput', endpoint: 'router', result });

describe('longinput and recovery', () => {
  it('after an outage the chat slots bring the target back; one pass of the long slot does not hold it for the next', () => {
    const r = new Run(cfg);
    r.round();
    long(r, 'ok');
    expect(r.s.state).toBe('ok');
    r.round('connect_error');
    long(r, 'connect_error');
    r.round('connect_error');
    expect(r.s.state).toBe('down');
    // Back: the long probe happens to run once as the deployment returns, then clean chat rounds (the keep-alive
    // slot's first pass after a failure is on a new connection and does not count). Its one pass does not hold the
    // target out of ok until its next run, 10 minutes on.
    long(r, 'ok');
    r.round();
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('long prompts failing wedgeAfter times while chat passes → degraded/long_context_failing; one pass → ok', () => {
    const r = new Run(cfg);
    r.round();
    long(r, 'ok');
    long(r, 'timeout');
    r.round();
    long(r, 'timeout');
    expect(r.verdict).toBe('degraded/long_context_failing');
    r.round();
    long(r, 'ok');
    r.round();
    expect(r.s.state).toBe('ok');
  });
});
