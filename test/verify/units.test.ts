// Pure parts of verify with plain data, and the load client against small hostile servers.
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { baselineSummary, compareBaseline, type SavedResults } from '../../src/verify/baseline.js';
import { compareFigure, overallVerdict } from '../../src/verify/compare.js';
import { mannWhitneyCounts, ratioInterval } from '../../src/verify/hodges-lehmann.js';
import { findKnee } from '../../src/verify/knee.js';
import { meetsSlo, trialFigures } from '../../src/verify/level-figures.js';
import { warmupFlag } from '../../src/verify/trials.js';
import { batchingVerdict } from '../../src/verify/batching.js';
import { growTokens, DEFAULT_GROW_TOKENS } from '../../src/verify/conversation.js';
import { decodeCountersFromMetrics, tokensPerStep } from '../../src/verify/decode-steps.js';
import { modelLimitNote } from '../../src/verify/correctness.js';
import { noToolCallsNote } from '../../src/verify/toolcall.js';
import { CriticalScanner, describeHit } from '../../src/verify/critical-rules.js';
import { isTokenChunk, SseScanner, streamChat } from '../../src/verify/load-client.js';
import { LogWindow } from '../../src/verify/log-window.js';
import {
  batchFromMetrics,
  runningFromLogLine,
  runningFromMetrics,
} from '../../src/verify/running-sampler.js';
import { makeTarget, preflight } from '../../src/verify/target.js';
import { formatLevel, parseLevels } from '../../src/verify/throughput.js';
import type { StepResult } from '../../src/verify/types.js';

describe('SSE scan', () => {
  it('splits events across chunk boundaries and CRLF framing, and counts only token chunks', () => {
    const seen: string[] = [];
    const s = new SseScanner((d) => seen.push(d));
    const text =
      'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n' +
      'data: {"choices":[{"delta":{"content":"Hi"}}]}\r\n\r\n: ping\n\n' +
      'data: {"choices":[{"delta":{"reasoning_content":"hm"}}]}\n\n' +
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}\n\n' +
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
    for (let i = 0; i < text.length; i += 7) s.push(text.slice(i, i + 7));
    expect(seen).toHaveLength(6);
    expect(seen[5]).toBe('[DONE]');
    expect(seen.map(isTokenChunk)).toEqual([false, true, true, true, false, false]);
    expect(s.pending).toBe(false);
  });
});

describe('critical log scan', () => {
  it('names the bootstrap_thread traceback once, ending at the GUARD assertion', () => {
    const c = new CriticalScanner();
    const lines = [
      '[2026-07-10 12:00:01 TP0] Prefill batch, #new-seq: 1, ',
      'Exception in thread Thread-3 (bootstrap_thread):',
      'Traceback (most recent call last):',
      '  File "/x/nixl/conn.py", line 9, in bootstrap_thread',
      '    waiting_req_bytes[0] == GUARD',
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
      '[2026-07-10 12:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):',
    ];
    for (const l of lines) c.line(l, 'prefill.log');
    expect(c.hits.map((h) => h.rule)).toEqual(['nixl_bootstrap_thread_dead', 'sglang_scheduler_exception']);
    expect(c.hits[0]!.exception).toBe(
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    );
    expect(c.hits[0]!.traceback).toHaveLength(5);
    expect(describeHit(c.hits[0]!)).toContain('prefill.log:2');
  });

  it("runs the daemon's matcher: an echoed prompt quoting the assertion is no hit, the record's chain is one", () => {
    const c = new CriticalScanner();
    c.line(
      '(APIServer pid=7) INFO 08-10 14:00:01 [logger.py:41] Received request cmpl-1: prompt: "AssertionError: First message should be b\'NixlMsgGuard\'. Foreign traffic?", params: None',
      'p.log',
    );
    c.line(
      '[2026-08-10 14:00:02] request body {"prompt": "Exception in thread Thread-1 (bootstrap_thread):"}',
      'p.log',
    );
    expect(c.hits).toEqual([]);
    // A scheduler death and the subprocess watchdog's line after it: one incident, one hit, with its exception.
    for (const l of [
      '[2026-08-10 14:00:03 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/managers/scheduler.py", line 2890, in run_scheduler_process',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      '[2026-08-10 14:00:03] Subprocess scheduler_0 (pid=9) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
    ])
      c.line(l, 'p.log');
    expect(c.hits.map((h) => h.rule)).toEqual(['sglang_scheduler_exception']);
    expect(c.hits[0]!.exception).toBe('RuntimeError: CUDA error: an illegal memory access was encountered');
    expect(c.hits[0]!.traceback).toHaveLength(3);
  });

  it('reports a bare GUARD assertion without a thread header', () => {
    const c = new CriticalScanner();
    c.line("AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?", 'p.log');
    expect(c.hits.map((h) => h.rule)).toEqual(['nixl_guard_assertion']);
  });
});

describe('running count sources', () => {
  it('sums the running gauge over ranks and reads Decode batch lines', () => {
    const text = [
      '# TYPE sglang:num_running_reqs gauge',
      'sglang:num_running_reqs{tp_rank="0"} 7.0',
      'sglang:num_running_reqs{tp_rank="1"} 5.0',
      'sglang:num_running_reqs_offline_batch{tp_rank="0"} 99.0',
    ].join('\n');
    expect(runningFromMetrics(text)).toBe(12);
    expect(runningFromMetrics('sglang:num_queue_reqs 3')).toBeUndefined();
    // The engine's batch: SGLang's and vLLM's gauges, never llama.cpp's busy slots.
    expect(batchFromMetrics(text)).toBe(12);
    expect(batchFromMetrics('vllm:num_requests_running{engine="0"} 4.0')).toBe(4);
    expect(batchFromMetrics('llamacpp:requests_processing 3')).toBeUndefined();
    expect(
      runningFromLogLine('[2026-07-10 12:00:05 DP0 TP0] Decode batch, #running-req: 12, #token: 5'),
    ).toBe(12);
    expect(runningFromLogLine('[t] Decode batch [41], #running-req: 3, ')).toBe(3);
    expect(runningFromLogLine('[t] Prefill batch, #new-seq: 2, #running-req: 9, ')).toBeUndefined();
    // User text: a logged request (--log-requests) or a llama.cpp prompt echo holding the words decides nothing.
    for (const line of [
      '[2026-07-10 12:00:05 TP0] Receive: obj=GenerateReqInput(text="Decode batch, #running-req: 64, ")',
      'srv  log_server_r: request: {"prompt": "[t] Decode batch, #running-req: 64, "}',
      'Decode batch, #running-req: 64, #token: 5',
      '  [t] Decode batch, #running-req: 64, ',
    ])
      expect(runningFromLogLine(line), line).toBeUndefined();
  });
});

describe('batching verdict', () => {
  const k = { n: 16, maxTokens: 128, timeoutMs: 1, sampleIntervalMs: 1, wallFactor: 2, peakFraction: 0.75 };
  it('is batched only with peak >= 0.75 N and wall within 2x one request', () => {
    expect(batchingVerdict(16, 12, 1900, 1000, k).verdict).toBe('batched');
    expect(batchingVerdict(16, 11, 1200, 1000, k).reasons).toEqual(['peak running 11 < 12 (0.75·N)']);
    expect(batchingVerdict(16, 16, 2100, 1000, k).verdict).toBe('serialized');
    // Without a running count, wall time alone must not pass: a partly serialized engine fits within 2x.
    expect(batchingVerdict(16, undefined, 1500, 1000, k).verdict).toBe('not sampled');
    expect(batchingVerdict(16, undefined, 2500, 1000, k).verdict).toBe('serialized');
    expect(batchingVerdict(16, 16, 2100, 1000, k).reasons).toEqual([
      'wall 2.10s > 2× one request (1.00s), judged on wall time: no engine batch count',
    ]);
  });

  it("SGLang's and vLLM's running batch decides alone: batched on a loaded host, serialized however fast", () => {
    // At load 17 the sim's 16 requests, all in its batch, took 2.86 s against one request's 1.29 s.
    const b = batchingVerdict(16, 16, 2860, 1290, k, { batchPeak: 16 });
    expect(b).toEqual({
      verdict: 'batched',
      reasons: ["peak running in the engine's batch 16 >= 12 (0.75·N)"],
    });
    // One in the batch at a time, however quick the wall (the queue holds the rest).
    const s = batchingVerdict(16, 16, 1200, 1000, k, { batchPeak: 1 });
    expect(s).toEqual({
      verdict: 'serialized',
      reasons: ["peak running in the engine's batch 1 < 12 (0.75·N)"],
    });
    // llama.cpp's counters still come first.
    expect(batchingVerdict(2, 2, 1500, 1000, k, { perStep: 0.99, batchPeak: 2 }).verdict).toBe('serialized');
  });

  it("llama.cpp's tokens per decode step decide alone: batched on a slow machine, serialized at full running count", () => {
    // Measured on the real llama-server (80fb11a, 2 slots, one thread): 256 tokens in 128 steps, wall 2.15x.
    const b = batchingVerdict(2, 2, 2150, 1000, k, { perStep: 2.0 });
    expect(b).toEqual({ verdict: 'batched', reasons: ['2.00 tokens per decode step >= 1.50 (0.75·N)'] });
    // Both slots busy (running 2) and a fast wall, yet one token a step: one slot at a time.
    const s = batchingVerdict(2, 2, 1500, 1000, k, { perStep: 0.99 });
    expect(s).toEqual({ verdict: 'serialized', reasons: ['0.99 tokens per decode step < 1.50 (0.75·N)'] });
    expect(batchingVerdict(4, 4, 1200, 1000, k, { perStep: 2.0 }).verdict).toBe('serialized');
  });
});

describe('llama.cpp decode-step counters', () => {
  // The lines /metrics prints at 80fb11a (server-task.cpp to_metrics), a counter per HELP/TYPE pair.
  const page = (decodes: number, predicted: number) =>
    [
      '# HELP llamacpp:tokens_predicted_total Number of generation tokens processed',
      '# TYPE llamacpp:tokens_predicted_total counter',
      `llamacpp:tokens_predicted_total ${predicted}`,
      'llamacpp:tokens_predicted_seconds_total 4.5',
      '# TYPE llamacpp:n_decode_total counter',
      `llamacpp:n_decode_total ${decodes}`,
      'llamacpp:n_busy_slots_per_decode 1.5',
    ].join('\n');

  it('reads both counters, and nothing when either is missing', () => {
    expect(decodeCountersFromMetrics(page(130, 200))).toEqual({ decodes: 130, predicted: 200 });
    expect(decodeCountersFromMetrics('llamacpp:n_decode_total 5')).toBeUndefined();
    expect(decodeCountersFromMetrics('vllm:num_requests_running 3')).toBeUndefined();
    expect(
      decodeCountersFromMetrics('llamacpp:n_decode_total_other 5\nllamacpp:tokens_predicted_total 1'),
    ).toBeUndefined();
  });

  it('tokens per step is the ratio of the differences; no step or a counter gone back is no figure', () => {
    const before = { decodes: 1000, predicted: 900 };
    expect(tokensPerStep(before, { decodes: 1128, predicted: 1156 })).toEqual({
      perStep: 2,
      decodes: 128,
      predicted: 256,
    });
    expect(tokensPerStep(before, before)).toBeUndefined();
    expect(tokensPerStep(before, { decodes: 10, predicted: 5 })).toBeUndefined();
    expect(tokensPerStep(undefined, before)).toBeUndefined();
  });
});

describe('conversation size', () => {
  const k = { growTokens: 0, rounds: 8, maxTokens: 32 };
  it("fits the rounds within llama.cpp's per-slot context, keeps the default where it fits, obeys the flag", () => {
    // 8 rounds of 512 asked 4,483 tokens of a 4,096-token slot on the real server (HTTP 400 at round 8).
    const slot = { value: 4096, source: 'default_generation_settings.n_ctx of /props (llama.cpp)' };
    const g = growTokens(k, slot);
    expect(g.tokens).toBeLessThan(DEFAULT_GROW_TOKENS);
    expect(8 * (g.tokens + 32 + 48)).toBeLessThanOrEqual(4096 * 0.9);
    expect(g.source).toBe(
      '8 rounds within 90% of default_generation_settings.n_ctx of /props (llama.cpp) 4096',
    );
    expect(growTokens(k, { value: 32_768, source: 'max_model_len' }).tokens).toBe(DEFAULT_GROW_TOKENS);
    expect(growTokens(k, undefined).tokens).toBe(DEFAULT_GROW_TOKENS);
    expect(growTokens({ ...k, growTokens: 900 }, slot)).toEqual({
      tokens: 900,
      source: '--conversation.grow-tokens',
    });
    expect(growTokens(k, { value: 256, source: 'tiny' }).tokens).toBe(16);
  });
});

describe('throughput figures', () => {
  it('computes per-request rate as the mean of each request own rate, TPOT and ITL, and prints the issue format', () => {
    const r = (tokens: number, totalMs: number, ok = true) => ({
      ok,
      status: 200,
      tokens,
      chunks: tokens,
      ttftMs: 100,
      totalMs,
      timedOut: false,
      done: ok,
      tokenTimesMs: ok ? [100, 110, 130] : [],
    });
    const f = trialFigures({ results: [r(100, 1000), r(100, 4000), r(0, 50, false)], wallMs: 4000 });
    expect(f.perReqTokS).toBeCloseTo((100 + 25) / 2);
    expect(f.aggTokS).toBeCloseTo(50);
    expect(f.errors).toBe(1);
    // TPOT = (latency - TTFT) / (tokens - 1): 900/99 and 3900/99 ms.
    expect(f.tpotP50Ms).toBeCloseTo(900 / 99);
    expect(f.tpotP99Ms).toBeCloseTo(3900 / 99);
    // ITL pools the gaps of every request: 10, 20, 10, 20.
    expect(f.itlP50Ms).toBe(10);
    expect(f.itlP99Ms).toBe(20);
    expect(Number.isNaN(f.goodputReqS)).toBe(true);
    // Goodput: requests meeting every bound per second of wall time (the 4 s one misses e2el=2s).
    expect(
      trialFigures({ results: [r(100, 1000), r(100, 4000)], wallMs: 4000 }, { e2elS: 2 }).goodputReqS,
    ).toBe(0.25);
    expect(formatLevel({ concurrency: 2, n: 3, maxTokens: 100, ...f })).toBe(
      'C=2  n=3  max_tokens=100 | agg=50.0 tok/s | per-req=62.5 tok/s | p50 lat=1.00s | p99 lat=4.00s | ttft p50=0.10s p99=0.10s | tpot p50=9.1ms p99=39.4ms | itl p50=10.0ms p99=20.0ms | toks=200 errs=1 wall=4.0s',
    );
    expect(parseLevels('1x3, 32x64')).toEqual([
      { concurrency: 1, n: 3 },
      { concurrency: 32, n: 64 },
    ]);
    // Concurrency alone: two requests per slot, at least 3.
    expect(parseLevels('1,4,16,128')).toEqual([
      { concurrency: 1, n: 3 },
      { concurrency: 4, n: 8 },
      { concurrency: 16, n: 32 },
      { concurrency: 128, n: 256 },
    ]);
    expect(() => parseLevels('1x0')).toThrow(/levels like/);
    expect(() => parseLevels('0')).toThrow(/levels like/);
  });

  it('meetsSlo checks each given bound; a one-token answer cannot miss TPOT', () => {
    const r = {
      ok: true,
      status: 200,
      tokens: 11,
      chunks: 11,
      ttftMs: 200,
      totalMs: 1200,
      timedOut: false,
      done: true,
    };
    expect(meetsSlo(r, { ttftS: 0.3, tpotS: 0.1 })).toBe(true);
    expect(meetsSlo(r, { ttftS: 0.1 })).toBe(false);
    expect(meetsSlo(r, { tpotS: 0.09 })).toBe(false);
    expect(meetsSlo({ ...r, tokens: 1 }, { tpotS: 0.001 })).toBe(true);
    expect(meetsSlo({ ...r, ok: false }, {})).toBe(false);
  });
});

describe('baseline comparison', () => {
  const fig = (k: string, trials: number[]) =>
    k.endsWith('tok_s')
      ? { value: trials[2] ?? trials[0]!, unit: 'tok/s' as const, better: 'higher' as const, trials }
      : { value: trials[2] ?? trials[0]!, unit: 's' as const, better: 'lower' as const, trials };
  const step = (figs: Record<string, number[]>): StepResult => ({
    step: 'throughput',
    ok: true,
    summary: '',
    details: [],
    durationMs: 1,
    figures: Object.fromEntries(Object.entries(figs).map(([k, v]) => [k, fig(k, v)])),
  });
  const base: SavedResults = {
    kind: 'wedgewatch-verify-results',
    version: 2,
    savedAt: '',
    url: '',
    model: '',
    steps: [
      {
        step: 'throughput',
        ok: true,
        summary: '',
        figures: step({
          'c1.agg_tok_s': [100, 101, 99, 100.5, 99.5],
          'c1.p50_lat_s': [2, 2.02, 1.98, 2.01, 1.99],
          'c1.ttft_p50_s': [0.01, 0.011, 0.009, 0.01, 0.012],
        }).figures,
      },
    ],
  };
  const scaled = (f: number, g = f) =>
    step({
      'c1.agg_tok_s': [100, 101, 99, 100.5, 99.5].map((x) => x * f),
      'c1.p50_lat_s': [2, 2.02, 1.98, 2.01, 1.99].map((x) => x / g),
      'c1.ttft_p50_s': [0.03, 0.031, 0.029, 0.03, 0.032],
    });
  it('PASS when every interval is on the good side; latency under the floor never counts', () => {
    const ok = compareBaseline(base, [scaled(1.5, 1.02)], 0.1, 0.05);
    expect(ok.verdict).toBe('PASS');
    expect(ok.ok).toBe(true);
    // TTFT tripled, but by 20 ms: under the 50 ms floor.
    expect(ok.figures.find((f) => f.key === 'throughput.c1.ttft_p50_s')!.why).toMatch(/floor/);
  });
  it('REGRESSION only when the interval lies wholly past the threshold', () => {
    const bad = compareBaseline(base, [scaled(0.8)], 0.1, 0.05);
    expect(bad.verdict).toBe('REGRESSION');
    expect(bad.figures.filter((d) => d.verdict === 'REGRESSION').map((d) => d.key)).toEqual([
      'throughput.c1.agg_tok_s',
      'throughput.c1.p50_lat_s',
    ]);
    const agg = bad.figures.find((d) => d.key === 'throughput.c1.agg_tok_s')!;
    expect(agg.ratio).toBeCloseTo(0.8, 2);
    expect(agg.hi).toBeLessThan(0.9);
    expect(agg.level).toBeCloseTo(1 - 8 / 252);
    expect(bad.ok).toBe(false);
  });
  it('INCONCLUSIVE when the interval straddles the threshold, with the minimum detectable effect', () => {
    // A 10 % drop with ±5 % spread: the interval spans the 10 % line.
    const noisy = step({
      'c1.agg_tok_s': [95, 85, 90, 88, 92],
      'c1.p50_lat_s': [2, 2.02, 1.98, 2.01, 1.99],
      'c1.ttft_p50_s': [0.01, 0.011, 0.009, 0.01, 0.012],
    });
    const c = compareBaseline(base, [noisy], 0.1, 0.05);
    expect(c.verdict).toBe('INCONCLUSIVE');
    const agg = c.figures.find((d) => d.key === 'throughput.c1.agg_tok_s')!;
    expect(agg.lo).toBeLessThan(0.9);
    expect(agg.hi).toBeGreaterThan(0.9);
    // Detected only once the whole interval passes -10 %: more than the threshold, by the interval's upper half.
    expect(agg.mde).toBeCloseTo(1 - (0.9 * agg.ratio) / agg.hi, 6);
    expect(agg.mde).toBeGreaterThan(0.1);
    expect(baselineSummary(c)).toMatch(/^INCONCLUSIVE: 1\/3 gating figures/);
    expect(compareBaseline(base, [], 0.1, 0.05).verdict).toBe('INCONCLUSIVE');
  });
  it('one value a side (a version 1 file) has no interval: INCONCLUSIVE, not a guess', () => {
    const one = compareFigure(
      'x',
      { value: 100, unit: 'tok/s', better: 'higher' },
      { value: 50, unit: 'tok/s', better: 'higher' },
      { threshold: 0.1, latencyFloorS: 0.05 },
    )!;
    expect(one.verdict).toBe('INCONCLUSIVE');
    expect(one.mde).toBe(Infinity);
  });
  it('tail figures are compared but gate only with gateTails', () => {
    const tail = (trials: number[]) => ({
      value: trials[2]!,
      unit: 's' as const,
      better: 'lower' as const,
      trials,
      tail: true,
    });
    const before = tail([1, 1.01, 0.99, 1, 1.02]);
    const after = tail([2, 2.01, 1.99, 2, 2.02]);
    const c = compareFigure('c1.p99_lat_s', before, after, { threshold: 0.1, latencyFloorS: 0.05 })!;
    expect(c.verdict).toBe('REGRESSION');
    expect(c.gating).toBe(false);
    expect(overallVerdict([c])).toBe('PASS');
    const g = compareFigure('c1.p99_lat_s', before, after, {
      threshold: 0.1,
      latencyFloorS: 0.05,
      gateTails: true,
    })!;
    expect(overallVerdict([g])).toBe('REGRESSION');
  });
});

describe('Hodges–Lehmann interval', () => {
  it('the exact Mann–Whitney null counts and the order-statistic interval', () => {
    const c = mannWhitneyCounts(5, 5);
    expect(c.reduce((a, b) => a + b, 0)).toBe(252);
    expect(c.slice(0, 4)).toEqual([1, 1, 2, 3]);
    expect(c).toEqual([...c].reverse());
    expect(mannWhitneyCounts(2, 3)).toEqual([1, 1, 2, 2, 2, 1, 1]);
    // Disjoint samples: the most extreme arrangement, p = 2/252.
    const r = ratioInterval([100, 101, 99, 102, 98], [90, 91, 89, 92, 88]);
    expect(r.ratio).toBeCloseTo(0.9, 6);
    expect(r.p).toBeCloseTo(2 / 252, 9);
    expect(r.lo).toBeLessThan(0.9);
    expect(r.hi).toBeGreaterThan(0.9);
    expect(r.hi).toBeLessThan(1);
    // 3 against 3: no two-sided 95 % interval exists (P(U = 0) = 1/20 > 2.5 %).
    expect(ratioInterval([1, 2, 3], [1, 2, 3]).level).toBe(0);
    // 4 against 4: the full range, at 1 - 2/70.
    const four = ratioInterval([1, 2, 3, 4], [5, 6, 7, 8]);
    expect([four.lo, four.hi, four.level]).toEqual([5 / 4, 8, 1 - 2 / 70]);
  });
  it('one wild trial moves the estimate little', () => {
    const calm = ratioInterval([100, 101, 99, 102, 98], [100, 101, 99, 102, 98]);
    const wild = ratioInterval([100, 101, 99, 102, 98], [100, 101, 99, 102, 20]);
    expect(calm.ratio).toBeCloseTo(1, 6);
    expect(Math.abs(wild.ratio - 1)).toBeLessThan(0.03);
  });
});

describe('sweep: knee and warm-up', () => {
  it('the knee is the level past which throughput grows less than 10 %', () => {
    expect(
      findKnee([
        { concurrency: 1, aggTokS: 50 },
        { concurrency: 4, aggTokS: 190 },
        { concurrency: 16, aggTokS: 700 },
        { concurrency: 32, aggTokS: 740 },
        { concurrency: 64, aggTokS: 745 },
      ]).concurrency,
    ).toBe(16);
    const none = findKnee([
      { concurrency: 1, aggTokS: 50 },
      { concurrency: 32, aggTokS: 1200 },
    ]);
    expect(none.concurrency).toBeUndefined();
    expect(none.text).toMatch(/no knee/);
  });
  it('flags a warm-up beyond ±25 % of the trials median only', () => {
    const t = (aggTokS: number) => ({ ...trialFigures({ results: [], wallMs: 1000 }), aggTokS });
    const trials = [100, 102, 98, 101, 99].map(t);
    expect(warmupFlag(t(120), trials)).toBeUndefined();
    expect(warmupFlag(t(60), trials)).toMatch(/-40% from the trials' median 100.0/);
  });
});

describe('log window', () => {
  it('reads only lines appended after the mark, holds a partial line, restarts after truncation', () => {
    const p = join(mkdtempSync(join(tmpdir(), 'ww-lw-')), 'x.log');
    writeFileSync(p, 'old line\n');
    const w = new LogWindow([p]).mark();
    appendFileSync(p, 'new 1\nnew 2\npart');
    const got: string[] = [];
    w.read((l) => got.push(l));
    appendFileSync(p, 'ial\n');
    w.read((l) => got.push(l));
    writeFileSync(p, 'after truncate\n');
    w.read((l) => got.push(l));
    expect(got).toEqual(['new 1', 'new 2', 'partial', 'after truncate']);
  });
});

describe('load client against hostile servers', () => {
  let server: Server | undefined;
  const client = new Set<Client>();
  afterEach(async () => {
    for (const c of client) await c.destroy();
    client.clear();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });
  async function serve(fn: (res: ServerResponse) => void) {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => fn(res));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = new Client(url);
    client.add(c);
    return { c, t: makeTarget(url, 'm') };
  }
  const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
  const opts = { messages: [{ role: 'user', content: 'x' }], maxTokens: 4, timeoutMs: 300 };

  it('times out a stream that sends headers and then nothing, saying so', async () => {
    const { c, t } = await serve((res) => {
      sse(res);
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    });
    const r = await streamChat(c, t, opts);
    expect(r).toMatchObject({ ok: false, timedOut: true, chunks: 1, status: 200 });
    expect(r.error).toMatch(/no \[DONE\] within 0\.3s \(1 token chunks, HTTP 200\)/);
  });

  it('fails on an error chunk, a stream without [DONE], and an HTTP error', async () => {
    let mode = 0;
    const { c, t } = await serve((res) => {
      if (mode === 2) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"No available servers"}}');
        return;
      }
      sse(res);
      if (mode === 0)
        res.end(
          'data: {"object":"error","message":"KVTransferError(bootstrap_room=1): timed out"}\n\ndata: [DONE]\n\n',
        );
      else res.end('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    });
    const errChunk = await streamChat(c, t, { ...opts, timeoutMs: 5000 });
    mode = 1;
    const noDone = await streamChat(c, t, { ...opts, timeoutMs: 5000 });
    mode = 2;
    const http = await streamChat(c, t, { ...opts, timeoutMs: 5000 });
    expect(errChunk.error).toBe('error chunk: KVTransferError(bootstrap_room=1): timed out');
    expect(noDone.error).toBe('stream ended without [DONE]');
    expect(http.error).toBe('HTTP 503: No available servers');
    expect([errChunk.ok, noDone.ok, http.ok]).toEqual([false, false, false]);
  });

  it('reads at most 64 KB of an error body that never ends (load client and preflight)', async () => {
    const { c, t } = await serve((res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      // 128 KB and then the body stays open: reading it in full would wait for the timeout.
      res.write('No available servers ' + 'x'.repeat(128 * 1024));
    });
    const r = await streamChat(c, t, { ...opts, timeoutMs: 10_000 });
    expect(r.timedOut).toBe(false);
    expect(r.error).toMatch(/^HTTP 503: No available servers x+$/);
    await expect(preflight(t, 10_000)).rejects.toThrow(/\/v1\/models: HTTP 503$/);
  });

  it('takes completion tokens from the usage chunk', async () => {
    const { c, t } = await serve((res) => {
      sse(res);
      res.end(
        'data: {"choices":[{"delta":{"content":"ab"}}]}\n\n' +
          'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\ndata: [DONE]\n\n',
      );
    });
    const r = await streamChat(c, t, { ...opts, timeoutMs: 5000 });
    expect(r).toMatchObject({ ok: true, chunks: 1, tokens: 2, done: true });
  });
});

describe("a model's limit said in the step's message (issue 38: a random-weight model)", () => {
  const level = (l: string, right: number, wrong: number, errors = 0, mixups = 0) => ({
    level: l,
    asked: right + wrong + errors,
    right,
    wrong,
    errors,
    mixups,
  });
  it('correctness: none right alone or at once says the model; right alone and wrong at once does not', () => {
    // The real server with random weights: 0/4 alone, 0/32 at once.
    expect(modelLimitNote([level('C=1', 0, 4), level('C=32', 0, 32)])).toMatch(
      /^none right alone or at once: a model that cannot answer these/,
    );
    expect(modelLimitNote([level('C=1', 4, 0), level('C=32', 0, 32)])).toBeUndefined();
    expect(modelLimitNote([level('C=1', 0, 4), level('C=32', 0, 30, 0, 2)])).toBeUndefined();
    expect(modelLimitNote([level('C=1', 0, 3, 1), level('C=32', 0, 32)])).toBeUndefined();
  });
  it('toolcall: most turns without a call and no markup says the model; leaked markup does not', () => {
    // The real server with random weights: 108 of 120 turns without tool_calls, no markup, no bad JSON.
    expect(noToolCallsNote({ turns: 120, missingToolCalls: 108, markup: 0, invalidJson: 0 })).toMatch(
      /^no tool call in 108 of 120 turns and no leaked markup: the model does not call tools/,
    );
    expect(noToolCallsNote({ turns: 120, missingToolCalls: 108, markup: 3, invalidJson: 0 })).toBeUndefined();
    expect(noToolCallsNote({ turns: 120, missingToolCalls: 10, markup: 0, invalidJson: 0 })).toBeUndefined();
  });
});
