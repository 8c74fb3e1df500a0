// The long-input probe sized from the deployment (issue 41 item 7): a share of the context it reports (vLLM and
// SGLang `max_model_len` on /v1/models, llama.cpp `n_ctx` on /props), at most maxPromptTokens whatever the engine
// says, a fallback when it says nothing, and a known answer judged as before.
import { afterEach, describe, expect, it } from 'vitest';
import { probeSchema, type ProbeOf } from '../../src/config/schema.js';
import { fillerTokens } from '../../src/sources/probes/prompt-text.js';
import { promptSize } from '../../src/sources/probes/longinput.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { SIM_MAX_MODEL_LEN } from '../../src/sim/router.js';
import { chunk, sendSse, startServer, usageChunk, type TestServer } from './hostile.js';
import { runOnce } from './fixtures.js';

const longinput = (extra: Record<string, unknown> = {}) =>
  probeSchema.parse({ name: 'long', kind: 'longinput', every: '10m', ...extra }) as ProbeOf<'longinput'>;

describe('promptSize', () => {
  it('a share of the reported context, room left for the answer, at most maxPromptTokens', () => {
    const p = longinput();
    expect(p.contextShare).toBe(0.5);
    expect(p.maxPromptTokens).toBe(32_768);
    expect(promptSize(p, { tokens: 32_768, source: 'max_model_len of /v1/models' })).toEqual({
      tokens: 16_384,
      why: '0.5 of max_model_len of /v1/models 32768',
    });
    // A 1 M context is not a 500 k prompt: the cap holds, and says what it cut.
    expect(promptSize(p, { tokens: 1_048_576, source: 'max_model_len of /v1/models' })).toEqual({
      tokens: 32_768,
      why: 'maxPromptTokens (0.5 of max_model_len of /v1/models 1048576 would be 524288)',
    });
    // A fiction as large as a safe integer changes nothing.
    expect(promptSize(p, { tokens: Number.MAX_SAFE_INTEGER, source: 'x' }).tokens).toBe(32_768);
  });

  it('a small llama.cpp slot: the share, never past the slot with the answer; the floor is 256', () => {
    const p = longinput({ contextShare: 0.9, maxTokens: 8 });
    expect(promptSize(p, { tokens: 4096, source: 'n_ctx' }).tokens).toBe(3686);
    expect(promptSize(p, { tokens: 300, source: 'n_ctx' }).tokens).toBe(256);
  });

  it('promptTokens fixes the size; nothing reported falls back to 8192, at most the cap', () => {
    expect(promptSize(longinput({ promptTokens: 4096 }), { tokens: 131_072, source: 'x' })).toEqual({
      tokens: 4096,
      why: 'promptTokens',
    });
    expect(promptSize(longinput(), undefined).tokens).toBe(8192);
    expect(promptSize(longinput({ maxPromptTokens: 2048 }), undefined).tokens).toBe(2048);
  });

  it('the config refuses a share past 0.9 and an unbounded cap', () => {
    expect(() => longinput({ contextShare: 1 })).toThrow();
    expect(() => longinput({ maxPromptTokens: 10_000_000 })).toThrow();
  });
});

let server: TestServer | undefined;
let sim: Sim | undefined;
afterEach(async () => {
  await server?.close();
  await sim?.stop();
  server = undefined;
  sim = undefined;
});

/** Reports `models` on /v1/models and `props` on /props (404 when undefined); echoes the nonce asked for. */
function deployment(models: unknown, props?: unknown) {
  return startServer((q, res, body) => {
    if (q.method === 'GET') {
      const doc = q.url === '/v1/models' ? models : q.url === '/props' ? props : undefined;
      res.statusCode = doc === undefined ? 404 : 200;
      res.setHeader('content-type', 'application/json');
      res.end(typeof doc === 'string' ? doc : JSON.stringify(doc ?? { error: 'not found' }));
      return;
    }
    const req = JSON.parse(body) as { messages: { content: string }[] };
    const text = /Repeat exactly: (\S+)$/.exec(req.messages[0]!.content)?.[1] ?? '?';
    sendSse(res, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: text }),
      chunk({}, 'stop'),
      usageChunk(1),
      'data: [DONE]\n\n',
    ]);
  });
}

/** The prompt the one completion of the run carried, in estimated tokens. */
const sentTokens = (s: TestServer) => {
  const post = s.requests.filter((r) => r.method === 'POST');
  expect(post).toHaveLength(1);
  return fillerTokens(
    (JSON.parse(post[0]!.body) as { messages: { content: string }[] }).messages[0]!.content,
  );
};

describe('longinput against a deployment', () => {
  it('vLLM/SGLang: max_model_len of the served model on /v1/models', async () => {
    server = await deployment({
      object: 'list',
      data: [
        { id: 'other', max_model_len: 1024 },
        { id: 'm', max_model_len: 8192 },
      ],
    });
    const { signal } = await runOnce(server.url, 'longinput', { probe: { timeout: '10s' } });
    expect(signal.result).toBe('ok');
    const n = sentTokens(server);
    expect(n).toBeGreaterThan(4000);
    expect(n).toBeLessThanOrEqual(4096);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/models',
      'POST /v1/chat/completions',
    ]);
  });

  it('llama.cpp: /props default_generation_settings.n_ctx when /v1/models has none', async () => {
    server = await deployment(
      { object: 'list', data: [{ id: 'm' }] },
      { default_generation_settings: { n_ctx: 4096 }, total_slots: 1 },
    );
    const { signal } = await runOnce(server.url, 'longinput', { probe: { timeout: '10s' } });
    expect(signal.result).toBe('ok');
    const n = sentTokens(server);
    expect(n).toBeGreaterThan(1900);
    expect(n).toBeLessThanOrEqual(2048);
  });

  it('an engine that reports a huge or broken context is sized by the cap or the fallback, never by it', async () => {
    server = await deployment({ object: 'list', data: [{ id: 'm', max_model_len: 1e15 }] });
    await runOnce(server.url, 'longinput', { probe: { timeout: '10s', maxPromptTokens: 2048 } });
    expect(sentTokens(server)).toBeLessThanOrEqual(2048);
    await server.close();
    server = await deployment('not json', '{"default_generation_settings": {"n_ctx": -5}}');
    const { signal } = await runOnce(server.url, 'longinput', {
      probe: { timeout: '10s', maxPromptTokens: 4096 },
    });
    expect(signal.result).toBe('ok');
    expect(sentTokens(server)).toBeLessThanOrEqual(4096);
    expect(sentTokens(server)).toBeGreaterThan(4000);
  });

  it('the SGLang simulator: half its 32k context, answered right', async () => {
    sim = await startSim();
    const { signal } = await runOnce(sim.urls.router, 'longinput', { probe: { timeout: '20s' } });
    expect(signal.result).toBe('ok');
    expect(SIM_MAX_MODEL_LEN / 2).toBe(16_384);
  });
});
