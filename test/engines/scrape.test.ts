import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { engineScrapeSchema } from '../../src/config/schema.js';
import { mapEngineMetrics } from '../../src/sources/engines/map.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';
import { EngineScraper, YIELD_BYTES } from '../../src/sources/engines/scrape.js';
import { createEngineMetrics } from '../../src/metrics.js';
import type { EngineSignal } from '../../src/core/signals.js';
import { waitFor } from '../helpers/wait.js';

const SGLANG = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",engine_type="decode",tp_rank="0",pp_rank="0"} 3.0
sglang:num_running_reqs{model_name="m",engine_type="decode",tp_rank="1",pp_rank="0"} 3.0
sglang:num_queue_reqs{model_name="m",engine_type="decode",tp_rank="0",pp_rank="0"} 2.0
sglang:num_decode_transfer_queue_reqs{model_name="m",engine_type="decode",tp_rank="0",pp_rank="0"} 4.0
sglang:num_prefill_prealloc_queue_reqs{model_name="m",engine_type="prefill",tp_rank="0",pp_rank="0"} 1.0
sglang:gen_throughput{model_name="m",engine_type="decode",tp_rank="0",pp_rank="0"} 123.5
sglang:token_usage{model_name="m",engine_type="decode",tp_rank="0",pp_rank="0"} 0.25
# HELP sglang:num_requests Number of requests processed.
# TYPE sglang:num_requests counter
sglang:num_requests_total{model_name="m"} 42.0
sglang:generation_tokens_total{model_name="m"} 4096.0
`;

const VLLM = `vllm:num_requests_running{model_name="m",engine="0"} 5
vllm:num_requests_waiting{model_name="m",engine="0"} 1
vllm:request_success_total{model_name="m",engine="0",finished_reason="stop"} 10
vllm:request_success_total{model_name="m",engine="0",finished_reason="length"} 5
vllm:generation_tokens_total{model_name="m",engine="0"} 900
vllm:kv_cache_usage_perc{model_name="m",engine="0"} 0.5
vllm:gpu_cache_usage_perc{model_name="m",engine="0"} 0.5
`;

describe('prometheus text parser', () => {
  it('reads names, escaped label values, special values and timestamps; skips comments and bad lines', () => {
    const p = parsePrometheusText(
      [
        '# HELP x y',
        'a 1',
        'b{l="q\\"uo\\\\te\\nnl",m="x"} 2.5 1700000000000',
        'c{} +Inf',
        'd NaN',
        'e{broken 1',
        'f{l="v"}',
        'g{l="a,b}"} -3e2',
      ].join('\n'),
    );
    expect(p.samples.map((s) => [s.name, s.value])).toEqual([
      ['a', 1],
      ['b', 2.5],
      ['c', Infinity],
      ['d', NaN],
      ['g', -300],
    ]);
    expect(p.samples[1]!.labels).toEqual({ l: 'q"uo\\te\nnl', m: 'x' });
    expect(p.samples[4]!.labels).toEqual({ l: 'a,b}' });
    expect(p.bad).toBe(2);
  });

  it('reads what prom-client itself writes', async () => {
    const reg = new client.Registry();
    const g = new client.Gauge({ name: 'x_gauge', help: 'h', labelNames: ['a'], registers: [reg] });
    g.set({ a: 'with "quotes"' }, 7);
    const p = parsePrometheusText(await reg.metrics());
    expect(p.samples).toEqual([{ name: 'x_gauge', labels: { a: 'with "quotes"' }, value: 7 }]);
  });
});

describe('engine metric mapping', () => {
  it('maps sglang:* with tensor-parallel ranks counted once', () => {
    expect(mapEngineMetrics(parsePrometheusText(SGLANG).samples)).toEqual({
      running: 3,
      queued: 2,
      transferQueue: 4,
      preallocQueue: 1,
      finishedTotal: 42,
      generatedTokensTotal: 4096,
      genThroughput: 123.5,
      tokenUsage: 0.25,
    });
  });

  it('maps vllm:* (success counted over finish reasons)', () => {
    const f = mapEngineMetrics(parsePrometheusText(VLLM).samples);
    expect(f).toMatchObject({
      running: 5,
      queued: 1,
      finishedTotal: 15,
      generatedTokensTotal: 900,
      tokenUsage: 0.5,
    });
  });

  it('maps the router smg_* families', () => {
    const f = mapEngineMetrics(
      parsePrometheusText(
        'smg_worker_requests_active{worker="a"} 2\nsmg_worker_requests_active{worker="b"} 1\nsmg_http_responses_total{path="/v1/chat/completions",status_code="200",error_code=""} 77\n',
      ).samples,
    );
    expect(f.running).toBe(3);
    expect(f.finishedTotal).toBe(77);
  });
});

describe('EngineScraper', () => {
  let server: Server | undefined;
  let scraper: EngineScraper | undefined;
  afterEach(async () => {
    await scraper?.stop();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    scraper = undefined;
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  }

  function make(url: string, timeout = '2s') {
    const reg = new client.Registry();
    const metrics = createEngineMetrics(reg);
    const got: EngineSignal[] = [];
    scraper = new EngineScraper({
      target: 't',
      engine: engineScrapeSchema.parse({ service: 'decode', metrics: url, every: '1h', timeout }),
      metrics,
      logger: pino({ level: 'silent' }),
      onEngine: (e) => got.push(e),
      now: () => 1234,
    });
    return { reg, metrics, got };
  }

  it('scrapes, signals and sets the engine gauges', async () => {
    const url = await serve((_q, res) => res.end(SGLANG));
    const { reg, got } = make(url);
    await scraper!.scrapeOnce();
    expect(got).toEqual([
      expect.objectContaining({
        kind: 'engine',
        service: 'decode',
        source: 'metrics',
        time: 1234,
        scrapeOk: true,
        running: 3,
        finishedTotal: 42,
      }),
    ]);
    const text = await reg.metrics();
    expect(text).toContain('wedgewatch_engine_running_requests{target="t",service="decode"} 3');
    expect(text).toContain('wedgewatch_engine_scrape_success{target="t",service="decode"} 1');
  });

  it("the KV-latency histogram's interval mean, the failure counters' increases by kind, sleep and the router's oldest age", async () => {
    let n = 0;
    const bodies = [
      [
        'sglang:kv_transfer_latency_ms_sum{tp_rank="0"} 100',
        'sglang:kv_transfer_latency_ms_count{tp_rank="0"} 10',
        'sglang:num_transfer_failed_reqs_total{tp_rank="0"} 5',
        'sglang:num_aborted_requests_total 2',
      ],
      [
        'sglang:kv_transfer_latency_ms_sum{tp_rank="0"} 400',
        'sglang:kv_transfer_latency_ms_count{tp_rank="0"} 13',
        'sglang:num_transfer_failed_reqs_total{tp_rank="0"} 8',
        'sglang:num_aborted_requests_total 2',
      ],
      // A restarted engine: its counters start over, the new value is the increase.
      [
        'sglang:kv_transfer_latency_ms_sum{tp_rank="0"} 30',
        'sglang:kv_transfer_latency_ms_count{tp_rank="0"} 1',
        'sglang:num_transfer_failed_reqs_total{tp_rank="0"} 1',
      ],
    ];
    const url = await serve((_q, res) =>
      res.end(bodies[Math.min(n++, bodies.length - 1)]!.join('\n') + '\n'),
    );
    const { reg, metrics, got } = make(url);
    EngineScraper.createFailureSeries(metrics, 't', 'decode');
    await scraper!.scrapeOnce();
    // Every kind exists at 0 before its first increase (increase() sees the first one).
    expect(await reg.metrics()).toContain(
      'wedgewatch_engine_failures_total{target="t",service="decode",kind="kv_expired"} 0',
    );
    // The first reading is a baseline: no mean yet, no increase.
    expect(got[0]!.kvTransferLatencyMs).toBeUndefined();
    await scraper!.scrapeOnce();
    expect(got[1]!.kvTransferLatencyMs).toBe(100);
    let text = await reg.metrics();
    expect(text).toContain('wedgewatch_engine_kv_transfer_latency_seconds{target="t",service="decode"} 0.1');
    expect(text).toContain(
      'wedgewatch_engine_failures_total{target="t",service="decode",kind="kv_transfer_failed"} 3',
    );
    // The abort counter did not move: no increase of that kind.
    expect(text).toContain('wedgewatch_engine_failures_total{target="t",service="decode",kind="aborted"} 0');
    await scraper!.scrapeOnce();
    text = await reg.metrics();
    expect(text).toContain(
      'wedgewatch_engine_failures_total{target="t",service="decode",kind="kv_transfer_failed"} 4',
    );
  });

  it('vLLM sleep state becomes a gauge', async () => {
    const url = await serve((_q, res) =>
      res.end(
        [
          'vllm:num_requests_running{engine="0"} 0',
          'vllm:engine_sleep_state{engine="0",sleep_state="awake"} 0',
        ].join('\n') + '\n',
      ),
    );
    const { reg, got } = make(url);
    await scraper!.scrapeOnce();
    expect(got[0]).toMatchObject({ sleeping: true });
    const text = await reg.metrics();
    expect(text).toContain('wedgewatch_engine_sleeping{target="t",service="decode"} 1');
  });

  it('reports a failed scrape on HTTP errors and on a hung server (timeout)', async () => {
    let mode: 'error' | 'hang' = 'error';
    const url = await serve((_q, res) => {
      if (mode === 'error') {
        res.statusCode = 500;
        res.end('no');
      }
      // 'hang': never answer
    });
    const { reg, got } = make(url, '300ms');
    await scraper!.scrapeOnce();
    mode = 'hang';
    await scraper!.scrapeOnce();
    expect(got.map((g) => g.scrapeOk)).toEqual([false, false]);
    expect(await reg.metrics()).toContain('wedgewatch_engine_scrape_success{target="t",service="decode"} 0');
  });

  // Issue 24 #18: a body that is not exposition format is a failed scrape, not an empty good one, and the last
  // good scrape's gauges go with it rather than stand as current.
  const pseudoRandom = (n: number) => {
    let x = 2463534242;
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out[i] = x & 0xff;
    }
    return out;
  };
  const GARBAGE: Record<string, string | Buffer> = {
    html: '<!doctype html>\n<html><head><title>Sign in</title></head>\n<body>Please log in</body></html>\n',
    json: '{"object":"error","message":"Not Found","code":404}\n',
    'random bytes': pseudoRandom(64 * 1024),
    empty: '',
    'comments only': '# HELP x y\n# TYPE x gauge\n',
    'a cut line': `${SGLANG}sglang:num_running_reqs{tp_rank="0`,
  };
  for (const [name, body] of Object.entries(GARBAGE)) {
    it(`garbage body (${name}) after a good scrape: a failed scrape that clears the gauges`, async () => {
      let bad = false;
      const url = await serve((_q, res) => res.end(bad ? body : SGLANG));
      const { reg, got } = make(url);
      await scraper!.scrapeOnce();
      expect(await reg.metrics()).toContain(
        'wedgewatch_engine_running_requests{target="t",service="decode"} 3',
      );
      bad = true;
      await scraper!.scrapeOnce();
      expect(got.map((g) => g.scrapeOk)).toEqual([true, false]);
      expect(got[1]!.running).toBeUndefined();
      const text = await reg.metrics();
      expect(text).toContain('wedgewatch_engine_scrape_success{target="t",service="decode"} 0');
      for (const gauge of [
        'running_requests',
        'queued_requests',
        'transfer_queue_requests',
        'prealloc_queue_requests',
        'gen_throughput_tokens_per_second',
        'token_usage_ratio',
      ]) {
        expect(text).not.toMatch(new RegExp(`^wedgewatch_engine_${gauge}\\{`, 'm'));
      }
      // And the next good scrape sets them again.
      bad = false;
      await scraper!.scrapeOnce();
      expect(await reg.metrics()).toContain(
        'wedgewatch_engine_running_requests{target="t",service="decode"} 3',
      );
    });
  }

  it('an engine body with families it does not map, long labels and one overlong line is still a good scrape', async () => {
    const extra = `vllm:time_to_first_token_seconds_bucket{model_name="${'m'.repeat(5000)}",le="+Inf"} 4\nsmg_http_responses_total{path="/${'p'.repeat(80_000)}",status_code="200"} 1\n`;
    const url = await serve((_q, res) => res.end(SGLANG + extra));
    const { got } = make(url);
    await scraper!.scrapeOnce();
    expect(got[0]).toMatchObject({ scrapeOk: true, running: 3, finishedTotal: 42 });
  });

  it('a large body is parsed in slices with a turn of the event loop after each YIELD_BYTES', async () => {
    const line = `smg_http_responses_total{path="/${'p'.repeat(4000)}",status_code="200"} 1\n`;
    const body = Buffer.from(line.repeat(Math.ceil((4 * 1024 * 1024) / line.length)));
    const url = await serve((_q, res) => res.end(body));
    const reg = new client.Registry();
    const got: EngineSignal[] = [];
    let turns = 0;
    scraper = new EngineScraper({
      target: 't',
      engine: engineScrapeSchema.parse({ service: 'decode', metrics: url, every: '1h', timeout: '10s' }),
      metrics: createEngineMetrics(reg),
      logger: pino({ level: 'silent' }),
      onEngine: (e) => got.push(e),
      yieldToLoop: () => {
        turns++;
        return new Promise((r) => setImmediate(r));
      },
    });
    await scraper.scrapeOnce();
    expect(got[0]).toMatchObject({ scrapeOk: true, finishedTotal: body.length / line.length });
    expect(turns).toBeGreaterThanOrEqual(Math.floor(body.length / YIELD_BYTES));
  });

  it('refuses a body over the cap', async () => {
    const big = Buffer.alloc(1024 * 1024, 'a');
    const url = await serve((_q, res) => {
      let n = 0;
      const write = () => {
        while (n < 20 && res.write(big)) n++;
        if (n < 20) res.once('drain', write);
        else res.end();
      };
      write();
    });
    const { got } = make(url);
    await scraper!.scrapeOnce();
    expect(got[0]!.scrapeOk).toBe(false);
  });
});

// The scraper's stop signal lives as long as the scraper; a scrape must leave nothing on it. AbortSignal.any([stop,
// deadline]) left a WeakRef a scrape in the stop signal's dependant set on Node 20 (nodejs/node#55351), for good:
// 20 a second at 50 targets.
describe('EngineScraper stop signal', () => {
  let server: Server | undefined;
  let scraper: EngineScraper | undefined;
  afterEach(async () => {
    await scraper?.stop();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    scraper = undefined;
  });

  async function make(handler: Parameters<typeof createServer>[1]): Promise<EngineScraper> {
    server = createServer(handler);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    scraper = new EngineScraper({
      target: 't',
      engine: engineScrapeSchema.parse({ service: 'decode', metrics: url, every: '1h', timeout: '30s' }),
      metrics: createEngineMetrics(new client.Registry()),
      logger: pino({ level: 'silent' }),
      onEngine: () => undefined,
    });
    return scraper;
  }

  /** What Node keeps of AbortSignal.any's composites on a source (its internal set; 0 where it has none). */
  const dependants = (s: AbortSignal): number => {
    const k = Object.getOwnPropertySymbols(s).find((x) => x.description === 'kDependantSignals');
    return k === undefined ? 0 : ((s as unknown as Record<symbol, Set<unknown> | undefined>)[k]?.size ?? 0);
  };

  it('keeps nothing of a scrape on the stop signal, however many scrapes', async () => {
    const s = await make((_q, res) => res.end(SGLANG));
    for (let i = 0; i < 60; i++) {
      await s.scrapeOnce();
      expect(getEventListeners(s.stopSignal, 'abort')).toHaveLength(0);
      expect(dependants(s.stopSignal)).toBe(0);
    }
  });

  it('still ends a scrape in flight when stopped', async () => {
    let asked = 0;
    const s = await make(() => {
      asked++; // never answers: only the stop ends the scrape (the 30 s deadline is far)
    });
    const scrape = s.scrapeOnce();
    await waitFor(() => asked > 0, { timeoutMs: 5000, what: 'the engine to be asked' });
    expect(getEventListeners(s.stopSignal, 'abort')).toHaveLength(1);
    await s.stop();
    await scrape;
    expect(getEventListeners(s.stopSignal, 'abort')).toHaveLength(0);
  });
});
