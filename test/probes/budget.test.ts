// The answer-checking probes' cost to the engine (issue 14: a canary or structured run costs under 64 tokens).
// The requests each run actually sends are captured, and their prompt is counted with an estimate that is an upper
// bound for byte-level BPE tokenizers on this text (Llama 3, Qwen, DeepSeek, Mistral): every digit and every
// punctuation mark a token, every letter run ceil(length / 3) tokens (common words are one token). The chat
// template's own tokens are not counted: they depend on the model (a few for ChatML, ~25 for Llama 3.1's default
// system header) and are the same for any request, so README states them apart.
import { afterEach, describe, expect, it } from 'vitest';
import { runProbe } from '../../src/sources/probes/runner.js';
import { chunk, sendSse, startServer, usageChunk, type TestServer } from './hostile.js';
import { hop, probe } from './fixtures.js';

/** Upper bound of the tokens of `text` (see the header). */
function tokenBound(text: string): number {
  let n = 0;
  for (const piece of text.match(/\d|[A-Za-z]+|[^\sA-Za-z\d]/g) ?? []) {
    n += /^[A-Za-z]+$/.test(piece) ? Math.ceil(piece.length / 3) : 1;
  }
  return n;
}

interface Sent {
  messages: { content: string }[];
  max_tokens: number;
  response_format?: unknown;
}

/** What a request costs at most: its prompt (template excluded) and the tokens it may generate. */
const cost = (r: Sent) => r.messages.reduce((n, m) => n + tokenBound(m.content), 0) + r.max_tokens;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Answers the canary's questions right, and the structured probe with its JSON. */
async function answering(): Promise<TestServer> {
  return startServer((_q, res, body) => {
    const req = JSON.parse(body) as Sent;
    const q = req.messages[0]!.content;
    const sum = /^What is (\d+) \+ (\d+)\?/.exec(q);
    const echo = /^Repeat exactly: (\S+)$/.exec(q);
    const text = sum
      ? String(Number(sum[1]) + Number(sum[2]))
      : echo
        ? echo[1]!
        : '{"city": "Paris", "country": "France"}';
    sendSse(res, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: text }),
      chunk({}, 'stop'),
      usageChunk(1),
      'data: [DONE]\n\n',
    ]);
  });
}

async function run(kind: 'canary' | 'structured', extra: Record<string, unknown>, times: number) {
  server = await answering();
  const h = hop(server.url);
  const p = probe(kind, extra);
  try {
    for (let i = 0; i < times; i++) {
      const r = await runProbe({ target: 't', model: 'm', probe: p, hop: h, conn: 'fresh', headers: {} });
      expect(r.signal.error).toBeUndefined();
    }
  } finally {
    await h.close();
  }
  return server.requests.map((r) => JSON.parse(r.body) as Sent);
}

describe('probe budget: under 64 tokens per run', () => {
  it('the estimate counts digits, punctuation and letter runs', () => {
    expect(tokenBound('What is 4817 + 2931?')).toBe(2 + 1 + 4 + 1 + 4 + 1);
    expect(tokenBound('Repeat exactly: QX7-19AF')).toBe(2 + 3 + 1 + 1 + 1 + 1 + 1 + 1 + 1);
  });

  it('canary: one question per run, and two at once every pairEvery-th run, stay under 64 together', async () => {
    // pairEvery 2 with the default questions: a sum alone, a pair of echoes, a sum alone, a pair of echoes.
    const sent = await run('canary', { pairEvery: 2 }, 4);
    expect(sent).toHaveLength(6);
    const runs = [[sent[0]!], [sent[1]!, sent[2]!], [sent[3]!], [sent[4]!, sent[5]!]];
    for (const r of runs) {
      for (const req of r) expect(req.max_tokens).toBe(8);
      expect(r.reduce((n, req) => n + cost(req), 0)).toBeLessThan(64);
    }
    // The costliest shape: a pair of sums (pairEvery 1 makes every run a pair of the first kind).
    await server?.close();
    const pairs = await run('canary', { pairEvery: 1, questions: ['arithmetic'] }, 1);
    expect(pairs).toHaveLength(2);
    expect(cost(pairs[0]!) + cost(pairs[1]!)).toBeLessThan(64);
  });

  it('structured: one request, its prompt and 32 tokens of JSON, under 64; the schema is a grammar, not prompt', async () => {
    const [req] = await run('structured', {}, 1);
    expect(req!.max_tokens).toBe(32);
    expect(req!.messages).toHaveLength(1);
    expect(req!.response_format).toMatchObject({ type: 'json_schema' });
    expect(cost(req!)).toBeLessThan(64);
  });
});
