// Stalls that clear by themselves (issue 41: "three 25 s stalls a minute apart never left ok"): every `every`
// seconds from the moment it is enabled, the engine loop makes no step for `stall` seconds — no token, no gauge
// update — then carries on as if nothing happened (a GC pause in the scheduler process, a collective that waits on
// a slow peer, a KV offload that blocks the step). The shape, not one upstream bug: each stall is shorter than
// the probe timeout, so every run finishes, late.
import type { FaultDef } from './types.js';

export const recurringStall: FaultDef = {
  name: 'recurring_stall',
  engines: ['vllm'],
  summary: 'the engine loop stops for `stall` seconds every `every` seconds, then resumes by itself',
  params: {
    stall: { default: 25, help: 'seconds each stall lasts (shorter than every)' },
    every: {
      default: 60,
      help: 'seconds from the start of one stall to the next (the first starts at once)',
    },
  },
  validate(params) {
    const stall = Number(params.stall);
    const every = Number(params.every);
    return stall > 0 && every > stall ? undefined : 'stall must be above 0 and below every';
  },
  pauseMs(since, params) {
    const stall = Number(params.stall) * 1000;
    const into = since % (Number(params.every) * 1000);
    return into < stall ? stall - into : 0;
  },
};
