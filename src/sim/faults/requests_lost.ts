// Requests lost with no error (issue 41): the API server accepts one chat request in `every`, counts it in
// /load, and never hands it to the engine core — no token, no abort, no log line, the engine's gauges never count
// it — until the client gives up. The others are served as usual. The shape of requests dropped between the API
// server and the core (vLLM's AsyncLLM → EngineCoreClient ZMQ hand-off), not one upstream bug.
import type { FaultDef } from './types.js';

export const requestsLost: FaultDef = {
  name: 'requests_lost',
  engines: ['vllm'],
  summary:
    'one chat request in N is accepted and never reaches the engine: no token, no error, until the client leaves',
  params: {
    every: { default: 3, help: 'lose one chat request in this many (1: every one)' },
  },
  validate(params) {
    const n = Number(params.every);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `every must be an integer ≥ 1 (got ${JSON.stringify(params.every)})`;
  },
  losesRequest(seq, params) {
    return seq % Number(params.every) === 0;
  },
};
