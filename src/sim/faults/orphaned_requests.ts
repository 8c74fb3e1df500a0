// SGLang PD: `count` requests whose client went away without the abort reaching the engine (a proxy that drops
// the connection upstream but not downstream, a router retry that leaves the first attempt running): they decode
// on, holding KV, and stay in flight at the router, ageing in smg_http_inflight_request_age_count, while every
// other request completes.
import type { FaultDef, FaultParams } from './types.js';

const ends = new WeakMap<FaultParams, () => void>();

export const orphanedRequests: FaultDef = {
  name: 'orphaned_requests',
  summary:
    'requests whose abort never came run on in decode and stay in flight at the router, ageing, while completions pass',
  params: {
    count: { default: 2, help: 'orphaned requests (1 to 64)' },
    // The router's age buckets start at 30 s (0/30/60/…): a test of what reads them need not wait the first 30 s.
    age: { default: 0, help: 'seconds the requests have been in flight when they appear (0 to 3600)' },
  },
  validate(p, ctl) {
    if (ctl.submitOrphans === undefined) return 'orphaned requests need the SGLang PD simulator';
    const n = Number(p.count);
    if (!(Number.isInteger(n) && n >= 1 && n <= 64)) return `count must be an integer from 1 to 64`;
    const age = Number(p.age);
    return Number.isFinite(age) && age >= 0 && age <= 3600 ? undefined : 'age must be from 0 to 3600 seconds';
  },
  onEnable(ctl, p) {
    ends.set(p, ctl.submitOrphans!(Number(p.count), Number(p.age) * 1000));
  },
  onDisable(_ctl, p) {
    ends.get(p)?.();
    ends.delete(p);
  },
};
