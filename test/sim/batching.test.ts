// Continuous batching on the default model: one decode step serves the whole batch, so aggregate throughput
// at C=32 is several times C=1 (as on a real engine). A ratio of two runs, not a wall-clock target.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { chatBody, post } from './client.js';

const TOKENS = 64;
let sim: Sim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(async () => {
  await sim.stop();
});

async function aggregateTokensPerSecond(concurrency: number): Promise<number> {
  const t = performance.now();
  const results = await Promise.all(
    Array.from({ length: concurrency }, () =>
      post(`${sim.urls.router}/v1/chat/completions`, chatBody({ max_tokens: TOKENS }), { timeoutMs: 30_000 }),
    ),
  );
  const seconds = (performance.now() - t) / 1000;
  const tokens = results.reduce(
    (s, r) => s + (JSON.parse(r.text) as { usage: { completion_tokens: number } }).usage.completion_tokens,
    0,
  );
  expect(tokens).toBe(concurrency * TOKENS);
  return tokens / seconds;
}

it('C=32 aggregate tokens/s is at least 5x C=1', async () => {
  const c1 = await aggregateTokensPerSecond(1);
  const c32 = await aggregateTokensPerSecond(32);
  console.log(
    `sim batching: C=1 ${c1.toFixed(0)} tok/s, C=32 ${c32.toFixed(0)} tok/s, ratio ${(c32 / c1).toFixed(1)}x`,
  );
  expect(c32).toBeGreaterThanOrEqual(5 * c1);
});
