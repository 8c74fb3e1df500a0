// The vLLM simulator's two llama.cpp shapes (issue 38), so the default suite guards them without a real engine:
// closeAfterStream (llama-server closes the connection after each streamed response) and tokensAtRequestEnd
// (llama.cpp's tokens_predicted_total moves only when a request ends).
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from 'undici';
import { startVllmSim, type VllmSim } from '../../src/sim/vllm/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream } from './client.js';

let sim: VllmSim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const generationTokens = async (url: string) => {
  const text = (await get(`${url}/metrics`)).text;
  const m = /^vllm:generation_tokens_total\{[^}]*\} ([\d.]+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
};

describe('llama.cpp shapes in the simulator', () => {
  it('tokensAtRequestEnd: tokens stream while the counter stands; the request end adds them all', async () => {
    sim = await startVllmSim({ engine: { statsIntervalMs: 100, stepMs: 20, tokensAtRequestEnd: true } });
    const url = sim.urls.server;
    expect(await generationTokens(url)).toBe(0);
    const s = openStream(url, chatBody({ max_tokens: 60 }));
    await s.firstData;
    await waitFor(() => s.raw.split('"content":"').length > 5, { timeoutMs: 10_000 });
    expect(await generationTokens(url)).toBe(0);
    await waitFor(() => s.ended, { timeoutMs: 20_000 });
    expect(await generationTokens(url)).toBeGreaterThan(5);
  });

  it('without it, the counter moves every step (vLLM)', async () => {
    sim = await startVllmSim({ engine: { statsIntervalMs: 100, stepMs: 20 } });
    const url = sim.urls.server;
    const s = openStream(url, chatBody({ max_tokens: 60 }));
    await s.firstData;
    await waitFor(async () => (await generationTokens(url)) > 3, { timeoutMs: 10_000 });
    expect(s.ended).toBe(false);
    await waitFor(() => s.ended, { timeoutMs: 20_000 });
  });

  it('closeAfterStream: a second request on the socket of a streamed response is dropped unanswered', async () => {
    sim = await startVllmSim({ closeAfterStream: true, engine: { statsIntervalMs: 100 } });
    const client = new Client(sim.urls.server, { pipelining: 1 });
    try {
      const body = JSON.stringify({ ...chatBody({ max_tokens: 4 }), stream: true });
      const req = () =>
        client.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'content-type': 'application/json' },
          body,
        });
      const first = await req();
      expect(first.statusCode).toBe(200);
      await first.body.text();
      await expect(req()).rejects.toThrow();
      expect(sim.state().droppedOnClosed).toBe(1);
      // A non-streamed response keeps the connection (llama-server closes after streams).
      const models = await client.request({ method: 'GET', path: '/v1/models' });
      await models.body.text();
      const again = await client.request({ method: 'GET', path: '/v1/models' });
      expect(again.statusCode).toBe(200);
      await again.body.text();
      expect(sim.state().droppedOnClosed).toBe(1);
    } finally {
      await client.destroy();
    }
  });
});
