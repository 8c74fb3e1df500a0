// The simulator and the verify knobs the verify tests share: a fast model, and every step's defaults scaled
// down in counts and timeouts so a whole gate runs in seconds.
import type { SimOptions } from '../../src/sim/index.js';

export const FAST: SimOptions['model'] = {
  stepBaseMs: 8,
  stepPerReqMs: 0.02,
  prefillMs: 1,
  maxRunning: 64,
  defaultMaxTokens: 16,
};

export const KNOBS = {
  liveness: { n: 2, timeoutMs: 5_000, maxTokens: 8 },
  throughput: {
    levels: [
      { concurrency: 1, n: 3 },
      { concurrency: 8, n: 16 },
    ],
    maxTokens: 24,
    timeoutMs: 10_000,
  },
  'long-context': { tokens: 0, n: 1, maxTokens: 8, timeoutMs: 10_000 },
  conversation: {
    sessions: 3,
    rounds: 4,
    growTokens: 400,
    maxTokens: 8,
    ttftRatio: 3,
    ttftFloorMs: 250,
    timeoutMs: 5_000,
  },
  // Batched is judged on the sim's running batch (sglang:num_running_reqs, Decode batch lines), not on wall time:
  // 160 tokens (~1.3 s at FAST's 8 ms step) keep the 16 in the batch for many 20 ms samples.
  batching: { n: 16, maxTokens: 160, timeoutMs: 10_000, sampleIntervalMs: 20 },
  'abort-cascade': {
    sessions: 10,
    afterMs: 600,
    settleMs: 200,
    maxTokens: 100_000,
    probes: 1,
    livenessTimeoutMs: 2_500,
  },
  toolcall: { concurrency: 6, rounds: 2, timeoutMs: 5_000 },
  correctness: { n: 2, concurrency: 32, timeoutMs: 10_000 },
};
