// Every Nth request hangs and the others finish: one hang in three never makes two failures in a row on a probe
// slot, so only a window over its recent runs sees it (issue 13). The hung request gets no token and no abort
// until its client leaves; disabling the fault releases the ones still held to run.
import type { FaultDef } from './types.js';

export const intermittentHang: FaultDef = {
  name: 'intermittent_hang',
  summary:
    'every Nth chat request through the router hangs (no tokens) until its client gives up; the rest finish',
  params: {
    every: { default: 3, help: 'hang one chat request in this many (2 or more; 1 would be a plain wedge)' },
  },
  validate(params) {
    const n = Number(params.every);
    return Number.isInteger(n) && n >= 2
      ? undefined
      : `every must be an integer ≥ 2 (got ${JSON.stringify(params.every)})`;
  },
  holdsRequest(seq, params) {
    return seq % Number(params.every) === 0;
  },
  onDisable(ctl) {
    ctl.releaseStructured();
  },
};
