// Pure parts of verify with plain data, and the load client against small hostile servers.
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { compareBaseline, type SavedResults } from '../../src/verify/baseline.js';
import { batchingVerdict } from '../../src/verify/batching.js';
import { CriticalScanner, describeHit } from '../../src/verify/critical-rules.js';
import { isTokenChunk, SseScanner, streamChat } from '../../src/verify/load-client.js';
import { LogWindow } from '../../src/verify/log-window.js';
import { runningFromLogLine, runningFromMetrics } from '../../src/verify/running-sampler.js';
import { makeTarget, preflight } from '../../src/verify/target.js';
import { formatLevel, levelFigures, parseLevels } from '../../src/verify/throughput.js';
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
    expect(
      runningFromLogLine('[2026-07-10 12:00:05 DP0 TP0] Decode batch, #running-req: 12, #token: 5'),
    ).toBe(12);
    expect(runningFromLogLine('[t] Decode batch [41], #running-req: 3, ')).toBe(3);
    expect(runningFromLogLine('[t] Prefill batch, #new-seq: 2, #running-req: 9, ')).toBeUndefined();
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
  });
});

describe('throughput figures', () => {
  it('computes per-request rate as the mean of each request own rate, and prints the issue format', () => {
    const r = (tokens: number, totalMs: number, ok = true) => ({
      ok,
      status: 200,
      tokens,
      chunks: tokens,
      ttftMs: 100,
      totalMs,
      timedOut: false,
      done: ok,
    });
    const f = levelFigures({ concurrency: 2, n: 3 }, 100, {
      results: [r(100, 1000), r(100, 4000), r(0, 50, false)],
      wallMs: 4000,
    });
    expect(f.perReqTokS).toBeCloseTo((100 + 25) / 2);
    expect(f.aggTokS).toBeCloseTo(50);
    expect(f.errors).toBe(1);
    expect(formatLevel(f)).toBe(
      'C=2  n=3  max_tokens=100 | agg=50.0 tok/s | per-req=62.5 tok/s | p50 lat=1.00s | p99 lat=4.00s | ttft p50=0.10s | toks=200 errs=1 wall=4.0s',
    );
    expect(parseLevels('1x3, 32x64')).toEqual([
      { concurrency: 1, n: 3 },
      { concurrency: 32, n: 64 },
    ]);
    expect(() => parseLevels('1x0')).toThrow(/levels like/);
  });
});

describe('baseline comparison', () => {
  const step = (figs: Record<string, number>): StepResult => ({
    step: 'throughput',
    ok: true,
    summary: '',
    details: [],
    durationMs: 1,
    figures: Object.fromEntries(
      Object.entries(figs).map(([k, v]) => [
        k,
        k.endsWith('tok_s')
          ? { value: v, unit: 'tok/s', better: 'higher' }
          : { value: v, unit: 's', better: 'lower' },
      ]),
    ) as StepResult['figures'],
  });
  const base: SavedResults = {
    kind: 'wedgewatch-verify-results',
    version: 1,
    savedAt: '',
    url: '',
    model: '',
    steps: [
      {
        step: 'throughput',
        ok: true,
        summary: '',
        figures: step({ 'c1.agg_tok_s': 100, 'c1.p50_lat_s': 2, 'c1.ttft_p50_s': 0.01 }).figures,
      },
    ],
  };
  it('fails beyond the threshold in the worse direction only, ignoring latency jitter under the floor', () => {
    const ok = compareBaseline(
      base,
      [step({ 'c1.agg_tok_s': 150, 'c1.p50_lat_s': 2.1, 'c1.ttft_p50_s': 0.03 })],
      0.1,
      0.05,
    );
    expect(ok.ok).toBe(true);
    const bad = compareBaseline(
      base,
      [step({ 'c1.agg_tok_s': 85, 'c1.p50_lat_s': 2.5, 'c1.ttft_p50_s': 0.01 })],
      0.1,
      0.05,
    );
    expect(bad.deltas.filter((d) => d.regression).map((d) => d.key)).toEqual([
      'throughput.c1.agg_tok_s',
      'throughput.c1.p50_lat_s',
    ]);
    expect(bad.ok).toBe(false);
    expect(compareBaseline(base, [], 0.1, 0.05).ok).toBe(false);
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
