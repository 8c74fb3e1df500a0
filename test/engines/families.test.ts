// Each engine family's /metrics fixture (test/fixtures/engines, in the exposition each engine's code prints)
// through the mapping the scraper uses: running, queued, progress counters and KV usage.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { engineScrapeSchema } from '../../src/config/schema.js';
import { mapEngineMetrics } from '../../src/sources/engines/map.js';
import { mapOllamaPs, OllamaShapeError } from '../../src/sources/engines/ollama.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';
import { EngineScraper } from '../../src/sources/engines/scrape.js';
import { createEngineMetrics } from '../../src/metrics.js';
import type { EngineSignal } from '../../src/core/signals.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url), 'utf8');
const mapped = (name: string) => {
  const p = parsePrometheusText(fixture(name));
  expect(p.bad).toBe(0);
  return mapEngineMetrics(p.samples);
};

describe('engine family mappings', () => {
  it('llama.cpp: requests_processing, requests_deferred, busy slot steps (n_decode_total × n_busy_slots_per_decode), kv_cache_usage_ratio', () => {
    expect(mapped('llamacpp.prom')).toMatchObject({
      running: 3,
      queued: 2,
      // 39303 decode calls × 1.87 busy slots per call: n_busy_slots_total, not tokens_predicted_total (39080).
      generatedTokensTotal: 73497,
      tokenUsage: 0.125,
    });
    expect(mapped('llamacpp.prom').finishedTotal).toBeUndefined();
  });

  it('llama.cpp: progress moves with the decode loop while tokens_predicted_total waits for a request to end', () => {
    // Issue 38: two slots on long generations; tokens_predicted_total is added to only at the end of a request.
    const scrape = (decodes: number, perDecode: number) =>
      mapEngineMetrics(
        parsePrometheusText(
          [
            'llamacpp:tokens_predicted_total 500',
            `llamacpp:n_decode_total ${decodes}`,
            `llamacpp:n_busy_slots_per_decode ${perDecode}`,
            'llamacpp:requests_processing 2',
          ].join('\n'),
        ).samples,
      );
    const a = scrape(1000, 1.5).generatedTokensTotal!;
    const b = scrape(1300, (1500 + 600) / 1300).generatedTokensTotal!;
    expect(a).toBe(1500);
    expect(b).toBe(2100);
    // A build without n_decode_total: the request-end counter, as before.
    expect(
      mapEngineMetrics(
        parsePrometheusText('llamacpp:tokens_predicted_total 500\nllamacpp:requests_processing 1').samples,
      ).generatedTokensTotal,
    ).toBe(500);
  });

  it('TGI: batch size, queue size, request_success, generated tokens histogram sum', () => {
    expect(mapped('tgi.prom')).toMatchObject({
      running: 6,
      queued: 4,
      finishedTotal: 127,
      generatedTokensTotal: 16384,
    });
  });

  it('Dynamo: running is in flight minus queued; only successful requests are progress; KV blocks ratio', () => {
    expect(mapped('dynamo.prom')).toMatchObject({
      running: 5,
      queued: 2,
      finishedTotal: 300,
      generatedTokensTotal: 51200,
      tokenUsage: 0.25,
    });
  });

  it('SGLang router (mappings/router.ts): active requests on workers, answered (2xx) requests', () => {
    expect(mapped('sglang-router.prom')).toMatchObject({ running: 5, finishedTotal: 880 });
  });

  it('Ollama /api/ps: the shape is checked, the loaded models listed, no load reported', () => {
    const ps = mapOllamaPs(JSON.parse(fixture('ollama-ps.json')));
    expect(ps).toEqual({ fields: {}, models: ['llama3.2:3b'] });
    expect(() => mapOllamaPs({ error: 'x' })).toThrow(OllamaShapeError);
    expect(() => mapOllamaPs([])).toThrow(OllamaShapeError);
  });
});

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

describe('scraping Ollama', () => {
  it('format ollama reads /api/ps as JSON; an answer of the wrong shape is a failed scrape', async () => {
    let body = fixture('ollama-ps.json');
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/api/ps' ? body : '{}');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const seen: EngineSignal[] = [];
    const scraper = new EngineScraper({
      target: 't',
      engine: engineScrapeSchema.parse({
        service: 'ollama',
        metrics: `http://127.0.0.1:${port}/api/ps`,
        format: 'ollama',
      }),
      metrics: createEngineMetrics(new client.Registry()),
      logger: pino({ level: 'silent' }),
      onEngine: (e) => seen.push(e),
    });
    try {
      await scraper.scrapeOnce();
      body = '{"models": null}';
      await scraper.scrapeOnce();
    } finally {
      await scraper.stop();
    }
    expect(seen.map((s) => s.scrapeOk)).toEqual([true, false]);
  });
});
