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
  messages: { content: string | null }[];
  max_tokens: number;
  response_format?: unknown;
  tools?: unknown[];
}

/** What a request costs at most: its prompt (template excluded; tool definitions counted) and its output. */
const cost = (r: Sent) =>
  r.messages.reduce((n, m) => n + tokenBound(m.content ?? ''), 0) +
  (r.tools ? tokenBound(JSON.stringify(r.tools)) : 0) +
  r.max_tokens;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Answers the canary's questions right, and the structured probe with its JSON. */
async function answering(): Promise<TestServer> {
  return startServer((q0, res, body) => {
    if (q0.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      res.end('{"object": "list", "data": []}');
      return;
    }
    const req = JSON.parse(body) as Sent;
    const q = req.messages[req.messages.length - 1]!.content ?? '';
    const sum = /^What is (\d+) \+ (\d+)\?/.exec(q);
    const echo = /Repeat exactly: (\S+)$/.exec(q);
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

async function run(
  kind: 'canary' | 'structured' | 'longinput' | 'conversation' | 'toolcall',
  extra: Record<string, unknown>,
  times: number,
  ok = true,
) {
  server = await answering();
  const h = hop(server.url);
  const p = probe(kind, { timeout: '10s', ...extra });
  const conn = kind === 'conversation' ? 'keepalive' : 'fresh';
  try {
    for (let i = 0; i < times; i++) {
      const r = await runProbe({ target: 't', model: 'm', probe: p, hop: h, conn, headers: {} });
      if (ok) expect(r.signal.error).toBeUndefined();
    }
  } finally {
    await h.close();
  }
  return server.requests.filter((r) => r.body !== '').map((r) => JSON.parse(r.body) as Sent);
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

// The probes of issue 28: each bounded at the figures README "Probe load per target" and examples/wedgewatch.yaml
// state (the example's settings).
describe('probe budget: the shapes that need tokens', () => {
  it('longinput: one request of at most promptTokens, 8 tokens of answer (≤ 8,200 at the example 8192)', async () => {
    const [req, ...more] = await run('longinput', { promptTokens: 8192 }, 1);
    expect(more).toHaveLength(0);
    expect(req!.max_tokens).toBe(8);
    const c = cost(req!);
    expect(c).toBeLessThanOrEqual(8192 + 8);
    // Not far under it either: the probe is there to send a long prompt.
    expect(c).toBeGreaterThan(8000);
  });

  it('longinput sized from the deployment (the examples): half of a 1 M context is held to maxPromptTokens 32,768', async () => {
    server = await startServer((q, res, body) => {
      if (q.method === 'GET') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', max_model_len: 1_048_576 }] }));
        return;
      }
      const req = JSON.parse(body) as Sent;
      const echo = /Repeat exactly: (\S+)$/.exec(req.messages[0]!.content ?? '')?.[1] ?? '?';
      sendSse(res, [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: echo }),
        chunk({}, 'stop'),
        usageChunk(1),
        'data: [DONE]\n\n',
      ]);
    });
    const h = hop(server.url);
    try {
      const p = probe('longinput', { timeout: '10s', contextShare: 0.5, maxPromptTokens: 32_768 });
      const r = await runProbe({ target: 't', model: 'm', probe: p, hop: h, conn: 'fresh', headers: {} });
      expect(r.signal.error).toBeUndefined();
    } finally {
      await h.close();
    }
    const sent = server.requests.filter((r) => r.body !== '').map((r) => JSON.parse(r.body) as Sent);
    expect(sent).toHaveLength(1);
    expect(cost(sent[0]!)).toBeLessThanOrEqual(32_768 + 8);
    expect(cost(sent[0]!)).toBeGreaterThan(32_000);
  });

  it('conversation: 4 rounds of 512 tokens and 16 tokens of answer each, ≤ 5,400 tokens a run', async () => {
    const sent = await run('conversation', { rounds: 4, roundTokens: 512 }, 1);
    expect(sent).toHaveLength(4);
    for (const r of sent) expect(r.max_tokens).toBe(16);
    // The answers sent back are the server's (short here); a real model's are bounded by max_tokens.
    const rounds = sent.map((r, i) => cost(r) + i * 16);
    expect(rounds.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5400);
    expect(rounds[3]! - rounds[0]!).toBeGreaterThan(3 * 500);
  });

  it('toolcall: the default 8-cell matrix, the large-arguments cell among them, ≤ 3,500 tokens a run', async () => {
    // The test server answers text, not tool calls: the cells fail, the requests are what counts here.
    const sent = await run('toolcall', {}, 1, false);
    expect(sent).toHaveLength(8);
    const large = sent.find((r) => JSON.stringify(r.tools).includes('save_note'))!;
    expect(large.max_tokens).toBe(768);
    expect(cost(large)).toBeLessThanOrEqual(1500);
    expect(sent.reduce((n, r) => n + cost(r), 0)).toBeLessThanOrEqual(3600);
  });
});
