// verify against engines that control every size it reads (issue 37, 5/6/8), and against llama-server's HTTP
// shape (issue 38): a server that closes the connection after each streamed response, reports its context in
// /props and /slots, runs a few slots and exports llamacpp:requests_processing. The engines are the ones
// bench:adversarial throws at the CLI (test/helpers/hostile-engine.mjs), here in process on 127.0.0.1.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startHostileEngine, startLlamaFront } from '../helpers/hostile-engine.mjs';
import { startSim } from '../../src/sim/index.js';
import { answerBounds, tokenCount } from '../../src/verify/answer-bounds.js';
import { DEFAULT_N } from '../../src/verify/batching.js';
import { streamChat } from '../../src/verify/load-client.js';
import { DEFAULT_CAP_TOKENS, MAX_CAP_TOKENS, promptTokens } from '../../src/verify/long-context.js';
import { GeneratedPrompt, promptOfTokens, requestBody } from '../../src/verify/prompt-text.js';
import { runningFromMetrics, runningFromSlots } from '../../src/verify/running-sampler.js';
import { runVerify } from '../../src/verify/runner.js';
import { fitToSlots, readServerInfo } from '../../src/verify/server-info.js';
import { makeTarget } from '../../src/verify/target.js';
import { UsageError } from '../../src/verify/types.js';
import { FAST, KNOBS } from '../helpers/verify-sim.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function hostile(kind: string, opts: Record<string, unknown> = {}) {
  const e = await startHostileEngine(kind, opts);
  cleanup.push(() => e.close());
  const c = new Client(e.url);
  cleanup.push(() => c.destroy());
  return { e, c, t: makeTarget(e.url, e.model) };
}

const ask = { messages: [{ role: 'user', content: 'x' }], maxTokens: 8, timeoutMs: 10_000 };

describe('each answer is read within bounds derived from max_tokens (issue 37, 6)', () => {
  it('an endless stream is cut past max_tokens plus slack, and fails; token times stay within the bound', async () => {
    const { c, t } = await hostile('endless');
    const r = await streamChat(c, t, { ...ask, recordTokenTimes: true });
    const b = answerBounds(8);
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    expect(r.error).toBe(
      `more than ${b.maxChunks} token chunks for max_tokens 8: the answer ran past max_tokens`,
    );
    expect(r.chunks).toBe(b.maxChunks);
    expect(r.tokenTimesMs!.length).toBe(b.maxChunks);
  });

  it('bytes without a single event (SSE comments forever) are cut at the byte bound', async () => {
    const { c, t } = await hostile('pings');
    const r = await streamChat(c, t, ask);
    expect(r).toMatchObject({ ok: false, timedOut: false, chunks: 0 });
    expect(r.error).toBe(`more than ${answerBounds(8).maxBytes} bytes for max_tokens 8 without [DONE]`);
  });

  it('a 270 MB reply keeps at most the bound of its text and fails', async () => {
    const { c, t } = await hostile('huge-replies');
    const r = await streamChat(c, t, { ...ask, collect: true });
    const b = answerBounds(8);
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    expect(r.error).toBe(`more than ${b.maxKeptChars} characters of content for max_tokens 8`);
    expect(r.turn!.content.length).toBe(b.maxKeptChars);
  });

  it('endless tool-call deltas stop at the call bound, with the calls kept within the text bound', async () => {
    const { c, t } = await hostile('tool-flood');
    const r = await streamChat(c, t, { ...ask, maxTokens: 256, collect: true });
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    const kept = r.turn!.toolCalls.reduce(
      (n, tc) => n + tc.name.length + tc.arguments.length + (tc.id?.length ?? 0),
      0,
    );
    expect(kept).toBeLessThanOrEqual(answerBounds(256).maxKeptChars);
    expect(r.error).toMatch(/^more than \d+ characters of content for max_tokens 256$/);
  });

  it('a conversation against 270 MB replies carries no reply past the bound into the next round', async () => {
    const { e, t } = await hostile('huge-replies', { replyBytes: 4 * 1024 * 1024 });
    const report = await runVerify({
      target: t,
      steps: ['conversation'],
      knobs: { conversation: { sessions: 1, rounds: 2, maxTokens: 8, timeoutMs: 10_000 } },
    });
    const conv = report.steps[0]!;
    expect(conv.ok).toBe(false);
    expect(conv.summary).toBe(
      `round 1 failed (session 1: more than ${answerBounds(8).maxKeptChars} characters of content for max_tokens 8)`,
    );
    // Round 1 failed on the bound: nothing of it was sent back.
    expect(e.stats.requests).toBe(1);
  });
});

describe('token counts (issue 37, 8)', () => {
  it('a usage count above max_tokens is a wrong answer; within it, it may only add to the chunks', () => {
    expect(tokenCount(4, 1e15, 8)).toEqual({
      tokens: 4,
      error:
        'usage.completion_tokens 1000000000000000 is more than max_tokens 8 (4 token chunks read): a wrong answer, not a throughput',
    });
    expect(tokenCount(4, 8, 8)).toEqual({ tokens: 8 });
    expect(tokenCount(4, 2, 8)).toEqual({ tokens: 4 });
    expect(tokenCount(4, undefined, 8)).toEqual({ tokens: 4 });
  });

  it('usage 10^15 after 4 tokens fails the request and the throughput step, and nothing of it is saved', async () => {
    const { c, t } = await hostile('huge-usage');
    const r = await streamChat(c, t, ask);
    expect(r).toMatchObject({ ok: false, chunks: 4, tokens: 4, done: true });
    expect(r.error).toMatch(/^usage\.completion_tokens 1000000000000000 is more than max_tokens 8/);

    const save = join(mkdtempSync(join(tmpdir(), 'ww-hostile-')), 'results.json');
    const report = await runVerify({
      target: t,
      steps: ['throughput'],
      repeat: 1,
      savePath: save,
      knobs: { throughput: { levels: [{ concurrency: 2, n: 2 }], maxTokens: 8, timeoutMs: 10_000 } },
    });
    const tp = report.steps[0]!;
    expect(tp.ok).toBe(false);
    expect(tp.summary).toMatch(/usage\.completion_tokens 1000000000000000 is more than max_tokens 8/);
    const saved = JSON.parse(readFileSync(save, 'utf8')) as { steps: { ok: boolean; figures: object }[] };
    expect(saved.steps).toHaveLength(1);
    expect(saved.steps[0]).toMatchObject({ ok: false, figures: {} });
  });
});

describe('the long-context prompt (issue 37, 5)', () => {
  it('is sized from the server within the cap; a context no model has is named as such', () => {
    const k = { tokens: 0, capTokens: DEFAULT_CAP_TOKENS, maxTokens: 64 };
    expect(promptTokens(k, { value: 32_768, source: 'max_model_len of /v1/models' })).toEqual({
      tokens: Math.floor(32_768 * 0.9) - 64,
      source: '90% of max_model_len of /v1/models 32768, less max_tokens',
    });
    expect(promptTokens(k, { value: 1e9, source: 'max_model_len of /v1/models' })).toEqual({
      tokens: DEFAULT_CAP_TOKENS,
      source: `--long-context.cap ${DEFAULT_CAP_TOKENS} (the server reports max_model_len of /v1/models 1000000000, more than any model's context; raise the cap to send more)`,
    });
    expect(promptTokens({ ...k, capTokens: 2_000_000 }, { value: 1e7, source: 'n' }).tokens).toBe(2_000_000);
    expect(promptTokens(k, undefined)).toEqual({
      tokens: 8192,
      source: 'the server reports no context length: 8192',
    });
  });

  it('against a 10M-token card: capped, the request body stays the cap size', async () => {
    const { e, t } = await hostile('context', { maxModelLen: 1e7 });
    const progress: string[] = [];
    const report = await runVerify({
      target: t,
      steps: ['long-context'],
      repeat: 1,
      knobs: { 'long-context': { n: 1, maxTokens: 4, timeoutMs: 10_000 } },
      progress: (l) => progress.push(l),
    });
    const lc = report.steps[0]!;
    expect(lc.ok).toBe(true);
    expect((lc.data as { tokens: number }).tokens).toBe(DEFAULT_CAP_TOKENS);
    const body = requestBody({
      messages: [{ role: 'user', content: new GeneratedPrompt(DEFAULT_CAP_TOKENS) }],
    });
    expect(e.stats.maxBodyBytes).toBeGreaterThan(body.length);
    expect(e.stats.maxBodyBytes).toBeLessThan(body.length + 1024);
    expect(
      progress.some((l) => l.includes(`--long-context.cap ${DEFAULT_CAP_TOKENS} (90% of max_model_len`)),
    ).toBe(true);
  });

  it('refuses a cap past any context and a prompt past the cap before any traffic', async () => {
    const { e, t } = await hostile('context', { maxModelLen: 4096 });
    await expect(
      runVerify({ target: t, steps: ['long-context'], knobs: { 'long-context': { capTokens: 1e9 } } }),
    ).rejects.toThrow(
      new UsageError(
        `--long-context.cap: 1000000000 tokens is longer than any model's context (at most ${MAX_CAP_TOKENS})`,
      ),
    );
    await expect(
      runVerify({ target: t, steps: ['long-context'], knobs: { 'long-context': { tokens: 200_000 } } }),
    ).rejects.toThrow(
      /^--long-context\.tokens: 200000 is more than --long-context\.cap 131072; raise the cap/,
    );
    expect(e.stats.requests).toBe(0);
  });

  it('streams the prompt into the body: the same bytes as the JSON of the whole text', async () => {
    for (const n of [1, 17, 18, 19, 40_000]) {
      const payload = (content: unknown) => ({
        model: 'm',
        messages: [{ role: 'user', content }],
        stream: true,
      });
      const body = requestBody(payload(new GeneratedPrompt(n)));
      const stream = body.open();
      let text = '';
      if (typeof stream === 'string') text = stream;
      else for await (const piece of stream) text += String(piece);
      const expected = JSON.stringify(payload(promptOfTokens(n)));
      expect(text).toBe(expected);
      expect(body.length).toBe(Buffer.byteLength(expected));
      expect(promptOfTokens(n).split(' ')).toHaveLength(n);
    }
  });
});

async function llamaFront(opts: Record<string, unknown> = {}) {
  const sim = await startSim({ model: FAST });
  cleanup.push(() => sim.stop());
  const front = await startLlamaFront({ upstream: sim.urls.router, model: 'sim-model', ...opts });
  cleanup.push(() => front.close());
  return { sim, front, t: makeTarget(front.url, 'sim-model') };
}

describe("llama-server's shape (issue 38)", () => {
  it('every step passes against a server that closes the connection after each streamed response', async () => {
    const { front, t } = await llamaFront({ nCtx: 2048, slots: 4 });
    const report = await runVerify({
      target: t,
      metricsUrl: `${front.url}/metrics`,
      repeat: 4,
      // The batching step sizes N from the server's slots (4) when not given one.
      knobs: { ...KNOBS, batching: { ...KNOBS.batching, n: 0 } },
    });
    expect(report.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.summary}`)).toEqual([]);
    expect(report.verdict).toBe('PASS');
    // The server did close reused connections under verify, and verify said so where it happened.
    expect(front.stats.closedReused).toBeGreaterThan(0);
    const liveness = report.steps.find((s) => s.step === 'liveness')!;
    expect(liveness.details[1]).toMatch(
      /^reused: 2\/2 completed, .*; the server closed the connection after every response: none went over a reused connection$/,
    );
    // long-context from the server's own n_ctx, not the 8,192 fallback it would refuse.
    const lc = report.steps.find((s) => s.step === 'long-context')!;
    expect(lc.data).toMatchObject({
      tokens: Math.floor(2048 * 0.9) - 8,
      source: '90% of meta.n_ctx of /v1/models (llama.cpp) 2048, less max_tokens',
    });
    expect(front.stats.refused).toBe(0);
    // batching: N from total_slots, the running count from llamacpp:requests_processing and /slots.
    const b = report.steps.find((s) => s.step === 'batching')!;
    expect(b.data).toMatchObject({
      verdict: 'batched',
      n: 4,
      nSource: 'total_slots of /props (llama.cpp) 4',
    });
    const peak = (b.data as { peak: { metricsPeak: number; slotsSamples: number } }).peak;
    expect(peak.metricsPeak).toBe(4);
    expect(peak.slotsSamples).toBeGreaterThan(0);
  });

  it('conversation runs no more sessions than the server has slots: no round waits behind another session', async () => {
    // 4 sessions on llama.cpp's 2 slots made every round after the first wait for another session's whole request
    // (the real server, docs/real-engines.md): the bound then judged the queue, not TTFT growth.
    const { front, t } = await llamaFront({ nCtx: 4096, slots: 2 });
    const report = await runVerify({
      target: t,
      steps: ['conversation'],
      knobs: { conversation: { ...KNOBS.conversation, sessions: 0 } },
    });
    const conv = report.steps[0]!;
    expect(conv.ok, conv.summary).toBe(true);
    expect(conv.data).toMatchObject({ sessions: { n: 2, source: 'total_slots of /props (llama.cpp) 2' } });
    expect(front.stats.requests).toBe(2 * KNOBS.conversation.rounds);
    expect(front.stats.everDeferred).toBe(0);
    // Each session opens with its own text, every round after resending it (the prefix a prompt cache reuses).
    expect(front.stats.firstMessages.size).toBe(2);
    // The flag still wins: 3 sessions on 2 slots queue, as asked.
    const asked = await runVerify({
      target: t,
      steps: ['conversation'],
      knobs: { conversation: { ...KNOBS.conversation, sessions: 3 } },
    });
    expect(asked.steps[0]!.data).toMatchObject({ sessions: { n: 3, source: '--conversation.sessions' } });
    expect(front.stats.everDeferred).toBeGreaterThan(0);
    // A second run opens no conversation the first left in the server's prompt cache: round 1 is a cold
    // prefill each run (an identical earlier run made it a cache hit, and the bound 3x a cache hit).
    expect(front.stats.firstMessages.size).toBe(2 + 3);
  });

  it('reads the context from /props, else /slots, where /v1/models has none', async () => {
    const { front, t } = await llamaFront({ nCtx: 3000, slots: 2, reports: ['props', 'slots'] });
    expect(await readServerInfo(t)).toEqual({
      context: { value: 3000, source: 'default_generation_settings.n_ctx of /props (llama.cpp)' },
      slots: { value: 2, source: 'total_slots of /props (llama.cpp)' },
      slotsPath: '/slots',
    });
    await front.close();
    const only = await llamaFront({ nCtx: 1500, slots: 3, reports: ['slots'] });
    expect(await readServerInfo(only.t)).toEqual({
      context: { value: 1500, source: 'n_ctx of /slots (llama.cpp)' },
      slots: { value: 3, source: '3 entries of /slots (llama.cpp)' },
      slotsPath: '/slots',
    });
  });

  it('running counts: llamacpp:requests_processing and the slots processing; N follows fewer slots', () => {
    const text =
      '# HELP llamacpp:requests_processing Number of requests processing\n# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 3\nllamacpp:requests_deferred 5\n';
    expect(runningFromMetrics(text)).toBe(3);
    expect(runningFromSlots('[{"id":0,"is_processing":true},{"id":1,"is_processing":false}]')).toBe(1);
    expect(runningFromSlots('{"error":{"code":501}}')).toBeUndefined();
    expect(
      fitToSlots({ value: 0, name: '--batching.n' }, DEFAULT_N, {
        value: 4,
        source: 'total_slots of /props (llama.cpp)',
      }),
    ).toEqual({
      n: 4,
      source: 'total_slots of /props (llama.cpp) 4',
    });
    expect(fitToSlots({ value: 0, name: '--batching.n' }, DEFAULT_N, { value: 64, source: 's' })).toEqual({
      n: 16,
      source: 'default',
    });
    expect(fitToSlots({ value: 8, name: '--batching.n' }, DEFAULT_N, { value: 4, source: 's' })).toEqual({
      n: 8,
      source: '--batching.n',
    });
  });

  it('a server that drops every request fails it after one new connection, not forever', async () => {
    let dropped = 0;
    const server = createServer((req) => {
      dropped++;
      req.socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => server.close(r)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = new Client(url);
    cleanup.push(() => c.destroy());
    const r = await streamChat(c, makeTarget(url, 'm'), ask);
    expect(r).toMatchObject({ ok: false, status: 0, reconnected: true, timedOut: false });
    expect(r.error).toMatch(/other side closed|ECONNRESET|socket hang up/);
    expect(dropped).toBe(2);
  });
});
