import { request } from 'undici';
import type { Sim } from '../../src/sim/index.js';
import { waitFor } from './wait.js';

/**
 * A client that drops a stream after its first bytes: with nixl_abort_unhandled armed, the abort that kills
 * prefill's bootstrap thread. Resolves once the thread is dead.
 */
export async function tripBootstrapThreadDeath(sim: Sim): Promise<void> {
  const res = await request(`${sim.urls.router}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'default',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      max_tokens: 2000,
    }),
  });
  if (res.statusCode !== 200) throw new Error(`the stream to cut got HTTP ${res.statusCode}`);
  for await (const _chunk of res.body) break; // first bytes arrived: now drop the connection
  await waitFor(() => sim.state().bootstrapThreadAlive === false, { what: 'the bootstrap thread to die' });
}
