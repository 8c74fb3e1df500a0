// Streaming chat load from a process of its own: `node stream-load.mjs '{"url":…,"concurrency":32,"ms":30000}'`
// keeps `concurrency` streamed completions in flight against `url` for `ms`, then prints one JSON line
// { completed, failed }. A test that loads a deployment to show the daemon stays `ok` runs its load here, so the
// load generator's own parsing does not share (and starve) the daemon's event loop: what is judged is the
// deployment under load, not the test's client competing with the daemon for one thread.
import { Pool } from 'undici';

const { url, concurrency, ms } = JSON.parse(process.argv[2] ?? '{}');
const pool = new Pool(url, { connections: concurrency });
const deadline = Date.now() + ms;
const body = JSON.stringify({
  model: 'sim-model',
  messages: [{ role: 'user', content: 'Tell me about GPUs.' }],
  stream: true,
  max_tokens: 48,
});
let completed = 0;
let failed = 0;
const worker = async () => {
  while (Date.now() < deadline) {
    try {
      const res = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await res.body.text();
      if (res.statusCode === 200 && text.includes('[DONE]')) completed++;
      else failed++;
    } catch {
      failed++;
    }
  }
};
await Promise.all(Array.from({ length: concurrency }, worker));
await pool.close();
process.stdout.write(`${JSON.stringify({ completed, failed })}\n`);
