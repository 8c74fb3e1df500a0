// Issue 15 item 5: OpenMetrics negotiation with the probe run id as exemplar, gzip, promtool clean on both formats.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { REDACTED, redactor } from '../../src/lib/redact.js';
import { acceptsGzip, wantsOpenMetrics } from '../../src/outputs/server/exposition.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { capturingLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-exposition-'));
let engine: Server;
let daemon: Daemon;
let base: string;

beforeAll(async () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  engine = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'OK' }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => engine.listen(0, '127.0.0.1', () => r()));
  const file = join(dir, 'wedgewatch.yaml');
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints: [{ name: router, url: "http://127.0.0.1:${(engine.address() as AddressInfo).port}" }]
    probes: [{ name: chat, kind: chat, every: 1h, timeout: 10s, conn: [fresh] }]
`,
  );
  daemon = new Daemon({ configPath: file, logger: capturingLogger().logger, plugins: routePlugins });
  await daemon.start();
  base = `http://${daemon.address()}`;
  const [r] = await daemon.runtime!.probes!.get('t')!.runNow({ probe: 'chat' });
  expect(r?.result).toBe('ok');
});

afterAll(async () => {
  await daemon?.stop();
  engine?.close();
});

async function scrape(headers: Record<string, string>) {
  const res = await request(`${base}/metrics`, { headers });
  return {
    type: String(res.headers['content-type']),
    encoding: res.headers['content-encoding'],
    body: Buffer.from(await res.body.arrayBuffer()),
  };
}

function promtool(body: string): string {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
  if (r.error) throw r.error;
  return `${r.stdout}${r.stderr}`.trim();
}

/**
 * promtool 2.42's `check metrics` reads only the text format; its OpenMetrics parser is reached through
 * `tsdb create-blocks-from openmetrics`, which wants a timestamp on every sample. One is inserted before the
 * exemplar (where the format puts it); nothing else of the body changes. Returns promtool's exit code and output.
 */
function promtoolOpenMetrics(body: string): { code: number | null; out: string } {
  const stamped = body
    .split('\n')
    .map((line) => {
      if (line === '' || line.startsWith('#')) return line;
      const ex = line.indexOf(' # {');
      return ex < 0 ? `${line} 1700000000` : `${line.slice(0, ex)} 1700000000${line.slice(ex)}`;
    })
    .join('\n');
  const file = join(dir, `om-${Date.now()}.txt`);
  writeFileSync(file, stamped);
  const r = spawnSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, join(dir, 'blocks')], {
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

// What Prometheus 2.x sends when scraping (scrape/scrape.go acceptHeader, OpenMetrics first).
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

describe('/metrics exposition', () => {
  it('negotiates by q value', () => {
    expect(wantsOpenMetrics(PROMETHEUS_ACCEPT)).toBe(true);
    expect(wantsOpenMetrics(undefined)).toBe(false);
    expect(wantsOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(wantsOpenMetrics('application/openmetrics-text;q=0.2,text/plain;q=0.5')).toBe(false);
    expect(acceptsGzip('gzip, deflate')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it('serves OpenMetrics with the probe run id as exemplar; the text format is unchanged by it', async () => {
    const om = await scrape({ accept: PROMETHEUS_ACCEPT });
    expect(om.type).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    const text = om.body.toString('utf8');
    expect(text.endsWith('# EOF\n')).toBe(true);
    const runs = (await (await request(`${base}/api/probes`)).body.json()) as {
      results: { runId?: string }[];
    };
    const runId = runs.results.at(-1)?.runId;
    expect(runId).toMatch(/^[0-9a-f]{16}$/);
    expect(text).toMatch(
      new RegExp(
        `^wedgewatch_probe_ttft_seconds_bucket\\{[^}]*\\} 1 # \\{run_id="${runId}"\\} [0-9.e-]+ [0-9.]+$`,
        'm',
      ),
    );
    expect(text).toMatch(/^# TYPE wedgewatch_probes counter$/m);
    expect(text).toMatch(/^wedgewatch_probes_total\{/m);
    // After an OpenMetrics render, the text format still names counters with _total and shows no exemplar.
    const plain = (await scrape({})).body.toString('utf8');
    expect(plain).toMatch(/^# TYPE wedgewatch_probes_total counter$/m);
    expect(plain).not.toContain('run_id');
    expect(plain).not.toContain('# EOF');
  });

  it('passes promtool: check metrics on the text format, its OpenMetrics parser on the OpenMetrics body', async () => {
    const om = (await scrape({ accept: PROMETHEUS_ACCEPT })).body.toString('utf8');
    const plain = (await scrape({})).body.toString('utf8');
    expect(promtool(plain)).toBe('');
    const parsed = promtoolOpenMetrics(om);
    expect(parsed.out).not.toMatch(/error|expected/i);
    expect(parsed.code).toBe(0);
    // The parser is strict: a broken body fails (this check can fail).
    expect(promtoolOpenMetrics(om.replace('# EOF\n', '')).code).not.toBe(0);
  });

  it('gzips when Accept-Encoding allows, with the same body', async () => {
    const zipped = await scrape({ 'accept-encoding': 'gzip' });
    expect(zipped.encoding).toBe('gzip');
    const text = gunzipSync(zipped.body).toString('utf8');
    expect(text).toMatch(/^# TYPE wedgewatch_build_info gauge$/m);
    const plain = await scrape({});
    expect(plain.encoding).toBeUndefined();
    expect(text.length).toBeGreaterThan(plain.body.length * 0.9);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
  });
});

describe('/metrics redaction', () => {
  // Every way a scraper can ask: text, text gzipped, OpenMetrics (Prometheus' own Accept) gzipped and not.
  const bodies = async () =>
    Promise.all(
      (
        [
          {},
          { 'accept-encoding': 'gzip' },
          { accept: PROMETHEUS_ACCEPT },
          { accept: PROMETHEUS_ACCEPT, 'accept-encoding': 'gzip' },
        ] as Record<string, string>[]
      ).map(async (h) => {
        const r = await scrape(h);
        return (r.encoding === 'gzip' ? gunzipSync(r.body) : r.body).toString('utf8');
      }),
    );
  const event = (rule: string) =>
    daemon.metrics.logEvents.inc({ target: 't', service: 's', rule, class: 'c', severity: 'warning' });

  afterAll(() => {
    redactor.dropSource('test-known');
    redactor.dropSource('test-reload');
  });

  it('never shows a known secret in a label value, in any format or encoding', async () => {
    const secret = 'tok-known-4f3e2d1c';
    redactor.setSource('test-known', [secret]);
    event(`GET /v1?key=${secret}`);
    for (const body of await bodies()) {
      expect(body).not.toContain(secret);
      expect(body).toContain(`rule="GET /v1?key=${REDACTED}"`);
    }
  });

  it('redacts a secret that a reload adds from then on, though the series was rendered before', async () => {
    const secret = 'tok-reload-9a8b7c6d';
    event(`quoted ${secret}`);
    for (const body of await bodies()) expect(body).toContain(`rule="quoted ${secret}"`);
    redactor.setSource('test-reload', [secret]);
    for (const body of await bodies()) {
      expect(body).not.toContain(secret);
      expect(body).toContain(`rule="quoted ${REDACTED}"`);
    }
  });

  it('does not redact the rendered body again as a whole (its series were redacted once)', async () => {
    const spy = vi.spyOn(redactor, 'redact');
    try {
      for (const body of await bodies()) expect(body).toContain('# TYPE wedgewatch_build_info gauge');
      expect(spy.mock.calls.filter(([t]) => t.includes('wedgewatch_build_info'))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('still redacts every other answer (a 404 quoting the URL)', async () => {
    // Only the body the /metrics route rendered skips the onSend pass; every other answer still passes it.
    const secret = 'tok-known-4f3e2d1c';
    const res = await request(`${base}/metrics?x=${secret}`, { method: 'POST' });
    const text = await res.body.text();
    expect(text).toContain(REDACTED);
    expect(text).not.toContain(secret);
  });
});

it('promtool is installed (a missing binary fails loudly)', () => {
  expect(execFileSync('promtool', ['--version'], { encoding: 'utf8' })).toMatch(/promtool/);
});
