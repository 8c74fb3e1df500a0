import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { createProbeMetrics } from '../../src/metrics.js';
import { phaseOffset, ProbeScheduler } from '../../src/sources/probes/schedule.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { healthyHandler, startServer, type TestServer } from './hostile.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';

let servers: TestServer[] = [];
let schedulers: ProbeScheduler[] = [];
afterEach(async () => {
  await Promise.all(schedulers.map((s) => s.stop()));
  schedulers = [];
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

function scheduler(yaml: string, clock?: { t: number }, wallOnly?: { t: number }) {
  const loaded = parseConfigText(yaml, 'test.yaml', { TOKEN: 'sekrit-token-123' });
  const target = loaded.config.targets[0]!;
  const registry = new Registry();
  const metrics = createProbeMetrics(registry);
  const results: ProbeResultSignal[] = [];
  const log = capturingLogger('debug');
  const s = new ProbeScheduler({
    target,
    headers: loaded.headers.get(target.name)!,
    metrics,
    logger: log.logger,
    onResult: (r) => results.push(r),
    // The test clock is time passing, on both clocks alike (a wall-clock step alone is tested below).
    now: clock ? () => clock.t + (wallOnly?.t ?? 0) : undefined,
    monoNow: clock ? () => clock.t : undefined,
  });
  schedulers.push(s);
  return { s, registry, results, log };
}

/**
 * A scheduler on the fake clock (the caller has faked Date and performance): results go to `onResult`. Real sockets
 * answer on the real event loop, so `turn` lets it run between the fake clock's one-second steps.
 */
function fakeClockScheduler(yaml: string, onResult: (r: ProbeResultSignal) => void) {
  const loaded = parseConfigText(yaml, 'test.yaml', {});
  const target = loaded.config.targets[0]!;
  const s = new ProbeScheduler({
    target,
    headers: loaded.headers.get(target.name)!,
    metrics: createProbeMetrics(new Registry()),
    logger: capturingLogger('debug').logger,
    onResult,
    now: () => Date.now(),
    monoNow: () => performance.now(),
  });
  schedulers.push(s);
  const turn = async (seconds: number) => {
    for (let i = 0; i < seconds; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      for (let k = 0; k < 3; k++) await new Promise((r) => setImmediate(r));
    }
  };
  return { s, target, turn };
}

describe('ProbeScheduler', () => {
  it('runNow runs every (probe, hop, conn) slot and records metrics', async () => {
    const a = await startServer(healthyHandler);
    const b = await startServer(healthyHandler);
    servers.push(a, b);
    const { s, registry, results } = scheduler(`
targets:
  - name: t1
    endpoints: [{ name: proxy, url: "${a.url}" }, { name: router, url: "${b.url}" }]
    probes:
      - { name: chat, kind: chat, every: 1h }
      - { name: health, kind: health, every: 1h, endpoints: [router] }
`);
    const out = await s.runNow();
    expect(out.map((r) => `${r.probe}/${r.endpoint}/${r.conn}/${r.result}`).sort()).toEqual([
      'chat/proxy/fresh/ok',
      'chat/proxy/keepalive/ok',
      'chat/router/fresh/ok',
      'chat/router/keepalive/ok',
      'health/router/fresh/ok',
    ]);
    expect(out.every((r) => r.confirmation === true)).toBe(true);
    expect(results).toHaveLength(5);
    const only = await s.runNow({ kinds: ['health'] });
    expect(only.map((r) => r.probe)).toEqual(['health']);
    const one = await s.runNow({ probe: 'chat', endpoint: 'proxy', conn: 'keepalive' });
    expect(one).toHaveLength(1);
    expect(one[0]!.reusedConnection).toBe(true);
    const text = await registry.metrics();
    expect(text).toMatch(
      /wedgewatch_probes_total\{target="t1",probe="chat",endpoint="proxy",conn="keepalive",kind="chat",result="ok"\} 2/,
    );
    expect(text).toMatch(
      /wedgewatch_probe_success\{target="t1",probe="health",endpoint="router",conn="fresh",kind="health"\} 1/,
    );
    expect(text).toMatch(
      /wedgewatch_probe_ttft_seconds_count\{target="t1",probe="chat",endpoint="router",conn="fresh",kind="chat"\} 1/,
    );
    expect(text).toMatch(
      /wedgewatch_probe_tokens_per_second\{target="t1",probe="chat",endpoint="proxy",conn="fresh",kind="chat"\} \d/,
    );
    expect(text).toMatch(
      /wedgewatch_probe_last_run_timestamp_seconds\{target="t1",probe="health",endpoint="router",conn="fresh",kind="health"\} \d/,
    );
  });

  it('a tick that finds its slot busy counts skipped_overlap; in-flight age is exported at scrape time', async () => {
    const hang = await startServer(() => {});
    servers.push(hang);
    const clock = { t: 1_000_000 };
    const { s, registry, results } = scheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "${hang.url}" }]
    probes: [{ name: chat, kind: chat, every: 1s, jitter: 0, timeout: 1h, conn: [fresh] }]
`,
      clock,
    );
    s.start();
    await waitFor(() => s.inflight().length === 1, { what: 'a probe in flight' });
    expect(s.inflight()[0]).toMatchObject({
      probe: 'chat',
      endpoint: 'e',
      conn: 'fresh',
      startedAt: 1_000_000,
    });
    clock.t += 42_500;
    const text = await registry.metrics();
    expect(text).toContain(
      'wedgewatch_probe_inflight_seconds{target="t1",probe="chat",endpoint="e",conn="fresh",kind="chat"} 42.5',
    );
    await waitFor(() => results.find((r) => r.result === 'skipped_overlap'), { what: 'skipped_overlap' });
    expect(hang.connections).toBe(1);
    expect(await registry.metrics()).toMatch(
      /wedgewatch_probes_total\{[^}]*result="skipped_overlap"\} [1-9]/,
    );
    // A confirmation round joins the run in flight instead of starting a second request.
    const joined = s.runNow();
    expect(hang.requests.length).toBe(1);
    await s.stop();
    expect(await joined).toEqual([]); // cancelled by stop: no verdict
    await waitFor(() => hang.connections === 1 && s.inflight().length === 0, { what: 'stop to end the run' });
    expect(await registry.metrics()).not.toContain('wedgewatch_probe_inflight_seconds{');
  });

  it('stop aborts in-flight probes and closes keep-alive connections', async () => {
    let open = 0;
    const hang = await startServer((req) => {
      open++;
      req.socket.on('close', () => open--);
    });
    servers.push(hang);
    const { s } = scheduler(`
targets:
  - name: t1
    endpoints: [{ name: e, url: "${hang.url}" }]
    probes: [{ name: chat, kind: chat, every: 1h, jitter: 0, timeout: 1h }]
`);
    s.start();
    await waitFor(() => open === 2, { what: 'two requests (fresh + keepalive) open on the server' });
    await s.stop();
    await waitFor(() => open === 0, { what: 'server to see both connections closed' });
  });

  it('cron schedules with seconds run repeatedly', async () => {
    const a = await startServer(healthyHandler);
    servers.push(a);
    const { s, results } = scheduler(`
targets:
  - name: t1
    endpoints: [{ name: e, url: "${a.url}" }]
    probes: [{ name: h, kind: health, cron: "* * * * * *" }]
`);
    s.start();
    await waitFor(() => results.length >= 2, { what: 'two cron runs', timeoutMs: 10_000 });
    expect(results.every((r) => r.result === 'ok')).toBe(true);
  });

  it('recent() keeps the last 100 results and the last 100 failures apart', async () => {
    let fail = true;
    const a = await startServer((req, res, body) => {
      if (fail) {
        res.statusCode = 500;
        return void res.end();
      }
      healthyHandler(req, res, body);
    });
    servers.push(a);
    const { s } = scheduler(`
targets:
  - name: t1
    endpoints: [{ name: e, url: "${a.url}" }]
    probes: [{ name: h, kind: health, every: 1h }]
`);
    for (let i = 0; i < 30; i++) await s.runNow();
    fail = false;
    for (let i = 0; i < 120; i++) await s.runNow();
    const { results, failures } = s.recent();
    expect(results).toHaveLength(100);
    expect(results.every((r) => r.result === 'ok')).toBe(true);
    expect(failures).toHaveLength(30);
    expect(failures.every((r) => r.result === 'http_error' && r.status === 500)).toBe(true);
  });

  it('sends per-endpoint headers; the token never reaches logs or results', async () => {
    const a = await startServer((_q, res) => {
      res.statusCode = 500;
      res.end(`denied for ${_q.headers.authorization}`);
    });
    servers.push(a);
    const { s, results, log } = scheduler(`
targets:
  - name: t1
    endpoints: [{ name: e, url: "${a.url}", bearerToken: "\${TOKEN}", headers: { X-Team: ml } }]
    probes: [{ name: chat, kind: chat, every: 1h }]
`);
    const { redactor } = await import('../../src/lib/redact.js');
    redactor.set(['sekrit-token-123']);
    await s.runNow();
    expect(a.requests[0]!.authorization).toBe('Bearer sekrit-token-123');
    expect(results[0]!.error).toContain('denied for Bearer <secret>');
    const everything = JSON.stringify(results) + log.lines.join('');
    expect(log.lines.join('')).toContain('probe failing');
    expect(everything).not.toContain('sekrit-token-123');
  });
});

describe('round phases', () => {
  it('each (target, probe) keeps its own offset in the interval; 50 targets spread over it', () => {
    const every = 15_000;
    expect(phaseOffset('pd-0\u0000chat', every)).toBe(phaseOffset('pd-0\u0000chat', every));
    const offsets = Array.from({ length: 50 }, (_, i) => phaseOffset(`pd-${i}\u0000chat`, every));
    for (const o of offsets) {
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(every);
    }
    // Spread, not bunched: every tenth of the interval holds some, none holds most.
    const tenths = new Array<number>(10).fill(0);
    for (const o of offsets) tenths[Math.floor(o / (every / 10))]!++;
    expect(Math.min(...tenths)).toBeGreaterThan(0);
    expect(Math.max(...tenths)).toBeLessThan(15);
    expect(phaseOffset('pd-0\u0000health', every)).not.toBe(phaseOffset('pd-0\u0000chat', every));
  });
});

describe('in-flight ages across a wall-clock step (issue 24 finding 6)', () => {
  it('a 1 h forward step of the wall clock does not age a probe in flight by an hour', async () => {
    const hang = await startServer(() => {});
    servers.push(hang);
    const clock = { t: 1_000_000 };
    const step = { t: 0 };
    const { s, registry } = scheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "${hang.url}" }]
    probes: [{ name: chat, kind: chat, every: 1h, jitter: 0, timeout: 1h, conn: [fresh] }]
`,
      clock,
      step,
    );
    s.start();
    await waitFor(() => s.inflight().length === 1, { what: 'a probe in flight' });
    clock.t += 2_000;
    step.t += 3_600_000;
    // What the detector computes (its wall clock's now minus startedAt) is the 2 s that passed.
    expect(clock.t + step.t - s.inflight()[0]!.startedAt).toBe(2_000);
    expect(await registry.metrics()).toContain(
      'wedgewatch_probe_inflight_seconds{target="t1",probe="chat",endpoint="e",conn="fresh",kind="chat"} 2',
    );
    await s.stop();
  });
});

describe('round cadence across wall-clock steps (issue 24 finding 6)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a 1 h step back and a 2 h step forward change no cadence: a round every 10 s throughout', async () => {
    // Fake timers own setTimeout, Date and performance: setSystemTime steps the wall clock alone, as NTP or
    // `date -s` would, while timers and the monotonic clock run on.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    const loaded = parseConfigText(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "http://127.0.0.1:9" }]
    probes: [{ name: h, kind: health, every: 10s, jitter: 0, timeout: 1s }]
`,
      'test.yaml',
      {},
    );
    const target = loaded.config.targets[0]!;
    const metrics = createProbeMetrics(new Registry());
    const rounds: number[] = [];
    const set = metrics.schedulerTick.set.bind(metrics.schedulerTick);
    // Each planned round sets the heartbeat once: record it on the monotonic clock.
    vi.spyOn(metrics.schedulerTick, 'set').mockImplementation((...args: Parameters<typeof set>) => {
      rounds.push(performance.now());
      set(...args);
    });
    const s = new ProbeScheduler({
      target,
      headers: loaded.headers.get(target.name)!,
      metrics,
      logger: capturingLogger('debug').logger,
      onResult: () => {},
      now: () => Date.now(),
      monoNow: () => performance.now(),
    });
    schedulers.push(s);
    s.start();
    const minute = async () => {
      const before = rounds.length;
      await vi.advanceTimersByTimeAsync(60_000);
      return rounds.length - before;
    };
    expect(await minute()).toBe(6);
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(await minute()).toBe(6);
    vi.setSystemTime(Date.now() + 7_200_000);
    expect(await minute()).toBe(6);
    // Not just the count: past the start (start() and its first round both beat) and the phase gap to the
    // second round, every gap is one interval.
    const gaps = rounds.slice(3).map((t, i) => t - rounds[i + 2]!);
    expect(gaps.length).toBeGreaterThanOrEqual(15);
    expect(new Set(gaps)).toEqual(new Set([10_000]));
    // The health check reads lateness on the same clock: no false "has not ticked" after the forward step.
    expect(s.sinceLastTickMs()!).toBeLessThanOrEqual(10_000);
    await s.stop();
  });
});

describe('a failed slot on a slow schedule runs again early (issue 38)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a 5 m probe that fails reruns after 15 s, 30 s, 60 s, 120 s (a refusal rechecked 3 s first), then keeps its own cadence', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    // Port 9 on 127.0.0.1 refuses: every run fails at once (connect_error). The early reruns start from the
    // target's shortest cadence (10 s here), at least 15 s.
    const runs: number[] = [];
    const { s, turn } = fakeClockScheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "http://127.0.0.1:9" }]
    probes:
      - { name: slow, kind: health, every: 5m, jitter: 0, timeout: 1s }
      - { name: fast, kind: health, every: 10s, jitter: 0, timeout: 1s }
`,
      (r) => {
        expect(r.result).toBe('connect_error');
        if (r.probe === 'slow') runs.push(performance.now());
      },
    );
    const t0 = performance.now();
    s.start();
    // Real sockets refuse on the real event loop: turn() lets it run between the fake clock's steps.
    await turn(20 * 60);
    await s.stop();
    const at = runs.map((t) => Math.round((t - t0) / 1000));
    // The reruns after the first failure, each within a second of its planned delay: the refusal's recheck
    // (REFUSED_RECHECK_MS, until downAfter 2 refusals), then the failed slot's backoff.
    const first = at[0]!;
    const gaps = at.slice(1, 6).map((t, i) => t - at[i]!);
    expect(first).toBeLessThan(300);
    expect(gaps[0]).toBe(3);
    expect(gaps.slice(1).map((g) => Math.round(g / 15) * 15)).toEqual([15, 30, 60, 120]);
    // Then only its own rounds: 20 minutes hold at most 4 more runs, not one every 15 s.
    expect(runs.length).toBeLessThanOrEqual(6 + 5);
  });
});

describe('a late pass on a slow schedule runs again early (issue 38)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a 5 m chat whose first run took 25 s (past hangAfter 20 s) reruns 15 s later; an on-time pass does not', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    let served = 0;
    // The server's delay runs on the fake clock too: the first answer comes 25 s (fake) after the request.
    const server = await startServer((req, res, body) => {
      if (req.url === '/v1/chat/completions' && served++ === 0)
        return void setTimeout(() => healthyHandler(req, res, body), 25_000);
      healthyHandler(req, res, body);
    });
    servers.push(server);
    const runs: Array<{ at: number; ms: number; result: string }> = [];
    const { s, turn } = fakeClockScheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "${server.url}" }]
    probes:
      - { name: slow, kind: chat, every: 5m, jitter: 0, timeout: 60s, conn: [fresh] }
      - { name: fast, kind: health, every: 10s, jitter: 0, timeout: 1s }
`,
      (r) => {
        if (r.probe === 'slow') runs.push({ at: r.start, ms: r.durationMs, result: r.result });
      },
    );
    s.start();
    await turn(4 * 60);
    await s.stop();
    expect(runs.map((r) => r.result)).toEqual(['ok', 'ok']);
    expect(runs[0]!.ms).toBeGreaterThanOrEqual(20_000);
    // The rerun starts 15 s after the late pass ended; the on-time rerun starts no other within the 4 minutes.
    const gap = runs[1]!.at - (runs[0]!.at + runs[0]!.ms);
    expect(Math.round(gap / 1000)).toBe(15);
    expect(runs[1]!.ms).toBeLessThan(20_000);
  });
});

describe('a refused connection is rechecked in seconds until down is confirmed (issue 38)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('/health every 10 s: the server goes away, the second refusal comes 3 s after the first, then the 10 s cadence', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    const server = await startServer(healthyHandler);
    servers.push(server);
    const runs: Array<{ at: number; result: string }> = [];
    const { s, target, turn } = fakeClockScheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "${server.url}" }]
    probes:
      - { name: health, kind: health, every: 10s, jitter: 0, timeout: 1s }
`,
      (r) => runs.push({ at: performance.now(), result: r.result }),
    );
    expect(target.detect.downAfter).toBe(2);
    s.start();
    await turn(35);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // It answered (the very first run can time out while the real socket connects between fake-clock steps).
    expect(runs.at(-1)!.result).toBe('ok');
    const answered = runs.length;
    // Nothing listens on the port any more: the kernel refuses, as after a kill -9.
    await server.close();
    servers = servers.filter((x) => x !== server);
    await turn(60);
    await s.stop();
    const refused = runs.slice(answered);
    expect(refused.map((r) => r.result).every((r) => r === 'connect_error')).toBe(true);
    const at = refused.map((r) => Math.round(r.at / 1000));
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // Down (2 refusals) 3 s after the first refusal, not a full interval later.
    expect(gaps[0]).toBe(3);
    // Then the slot's own cadence: no more rechecks while it stays refused (60 s hold at most 7 runs).
    expect(gaps.slice(1).every((g) => g >= 5)).toBe(true);
    expect(refused.length).toBeLessThanOrEqual(8);
  });
});

describe('a completion that passes again reruns the slots waiting out a backoff (issue 38)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a 5 m probe that failed through an outage reruns when the 15 s chat passes again, not at its next backoff step', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    const t0 = Date.now();
    // The engine fails every completion for the first 110 s (HTTP 500), then serves.
    const server = await startServer((req, res, body) => {
      if (req.url === '/v1/chat/completions' && Date.now() - t0 < 110_000) {
        res.writeHead(500, { 'content-type': 'application/json' });
        return void res.end('{"error":{"message":"engine restarting"}}');
      }
      healthyHandler(req, res, body);
    });
    servers.push(server);
    const runs: Record<string, Array<{ at: number; result: string }>> = { slow: [], fast: [] };
    const { s, turn } = fakeClockScheduler(
      `
targets:
  - name: t1
    endpoints: [{ name: e, url: "${server.url}" }]
    probes:
      - { name: slow, kind: chat, every: 5m, jitter: 0, timeout: 10s, conn: [fresh] }
      - { name: fast, kind: chat, every: 15s, jitter: 0, timeout: 10s, conn: [fresh] }
`,
      (r) => runs[r.probe]!.push({ at: (r.start - t0) / 1000, result: r.result }),
    );
    s.start();
    await turn(4 * 60);
    await s.stop();
    const firstFastPass = runs.fast.find((r) => r.result === 'ok')!;
    expect(firstFastPass.at).toBeGreaterThanOrEqual(110);
    expect(firstFastPass.at).toBeLessThan(126);
    // The slow probe failed through the outage, backing off (15 s, 30 s, 60 s: its next step ~225 s)...
    const slowFails = runs.slow.filter((r) => r.at < 110);
    expect(slowFails.length).toBeGreaterThanOrEqual(3);
    expect(slowFails.every((r) => r.result === 'http_error')).toBe(true);
    // ...and ran again as the chat passed, and passed: the target's evidence of recovery, within a second.
    const slowPass = runs.slow.find((r) => r.result === 'ok')!;
    expect(slowPass.at - firstFastPass.at).toBeLessThanOrEqual(1);
    // Once per edge: the passes that follow start no more reruns of the slow probe.
    expect(runs.slow.filter((r) => r.at > slowPass.at && r.at < 240)).toEqual([]);
  });
});
