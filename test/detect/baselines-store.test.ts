// Issue 41 item 3: the engines' learned objectives and crawl baselines survive a restart (stateDir/baselines.json),
// and a crawl present when the daemon starts is judged against them instead of learned as the new normal.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { targetSchema } from '../../src/config/schema.js';
import { createMetrics } from '../../src/metrics.js';
import { BASELINES_FILE, BaselineStore } from '../../src/outputs/baselines/store.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { TargetWatchdog } from '../../src/watchdog.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-baselines-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A daemon's watchdog for one vLLM target whose engine is scraped every 5 s (virtual clock). */
function daemon(store: BaselineStore, clock: { now: number }) {
  const target = targetSchema.parse({
    name: 'vl',
    endpoints: [{ name: 'server', url: 'http://127.0.0.1:1' }],
    probes: [{ name: 'chat', kind: 'chat', every: '5s', conn: ['fresh'] }],
    engines: [{ service: 'server', metrics: 'http://127.0.0.1:1/metrics' }],
    detect: { stallAfter: '20s' },
  });
  const wd = new TargetWatchdog({
    target,
    metrics: createMetrics({ defaults: false }),
    logger,
    journal: new Journal({ dir: join(dir, 'journal'), logger }),
    now: () => clock.now,
    baselines: store,
  });
  const itl = { sum: 0, count: 0 };
  const scrape = (n: number, itlMs: number) => {
    clock.now += 5000;
    itl.count += n;
    itl.sum += (n * itlMs) / 1000;
    wd.handle({
      kind: 'engine',
      target: 'vl',
      service: 'server',
      source: 'metrics',
      time: clock.now,
      scrapeOk: true,
      running: 1,
      queued: 0,
      generatedTokensTotal: itl.count,
      interTokenLatencySumSeconds: itl.sum,
      interTokenLatencyCount: itl.count,
    });
    clock.now += 100;
    wd.handle({
      kind: 'probe',
      target: 'vl',
      probe: 'chat',
      probeKind: 'chat',
      endpoint: 'server',
      conn: 'fresh',
      result: 'ok',
      start: clock.now - 50,
      durationMs: 50,
    });
  };
  return { wd, scrape };
}

describe('baselines in stateDir (issue 41)', () => {
  it('a restart keeps what the engine learned: a crawl present at start-up reads engine_crawling, not a new normal', () => {
    const clock = { now: 1_700_000_000_000 };
    const first = daemon(new BaselineStore(dir), clock);
    for (let i = 0; i < 16; i++) first.scrape(100, 10);
    expect(first.wd.state.state).toBe('ok');
    // The store writes at most once a minute: 16 scrapes 5 s apart span more than one.
    const saved = JSON.parse(readFileSync(join(dir, BASELINES_FILE), 'utf8')) as Record<
      string,
      Record<string, { itlMs: number; crawlBaseline: number }>
    >;
    expect(saved.vl!.server!.itlMs).toBeCloseTo(15, 5);
    expect(saved.vl!.server!.crawlBaseline).toBeCloseTo(100, 5);

    // A new daemon process (a new store read from disk); the engine crawls 30× from the first scrape.
    const second = daemon(new BaselineStore(dir), clock);
    for (let i = 0; i < 8; i++) second.scrape(10, 300);
    expect(`${second.wd.state.state}/${second.wd.state.diagnosis}`).toBe('degraded/engine_crawling');
    expect(second.wd.state.engines.server!.crawl!.baseline).toBeCloseTo(100, 5);
  });

  it('a corrupt or edited file is read as what it can say: garbage is dropped, the engines learn again', () => {
    writeFileSync(
      join(dir, BASELINES_FILE),
      '{"vl":{"server":{"at":1,"itlMs":"x","crawlBaseline":50,"crawlSamples":9}},"bad":7}',
    );
    const store = new BaselineStore(dir);
    expect(store.get('vl')).toEqual({ server: { at: 1, crawlBaseline: 50, crawlSamples: 9 } });
    expect(store.get('bad')).toEqual({});
    writeFileSync(join(dir, BASELINES_FILE), 'not json');
    expect(new BaselineStore(dir).get('vl')).toEqual({});
  });
});
