import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { targetSchema } from '../../src/config/schema.js';
import { Journal, JOURNAL_FILE } from '../../src/outputs/journal/journal.js';
import { eventText } from '../../src/core/event-text.js';
import type { DetectEvent } from '../../src/core/memory.js';
import { TargetWatchdog, Watchdog } from '../../src/watchdog.js';
import { remediationFor } from '../../src/outputs/remediate/target.js';
import { createMetrics } from '../../src/metrics.js';
import { createRuntime } from '../../src/runtime.js';
import type { ProbeFilter } from '../../src/sources/probes/schedule.js';
import type { LogEventClass, ProbeResultSignal } from '../../src/core/signals.js';
import type { TargetMemory } from '../../src/core/memory.js';
import { statusRoutes } from '../../src/outputs/server/status-routes.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-watchdog-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('Journal', () => {
  it('keeps a ring, answers queries, writes JSONL, rotates past its cap and restores its tail', async () => {
    const j = new Journal({ dir, logger, ringSize: 5, maxFileBytes: 300 });
    for (let i = 0; i < 8; i++)
      j.append({
        time: 1000 + i,
        target: i % 2 ? 'a' : 'b',
        type: 'confirm',
        summary: `event ${i}`,
        data: { reason: 'r' },
      });
    expect(j.query().map((e) => e.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(j.query({ target: 'a' }).map((e) => e.seq)).toEqual([4, 6, 8]);
    expect(j.query({ since: 1005 }).map((e) => e.seq)).toEqual([7, 8]);
    expect(j.query({ afterSeq: 6, limit: 1 }).map((e) => e.seq)).toEqual([8]);
    await j.flush();
    const lines = (f: string) => readFileSync(f, 'utf8').trim().split('\n');
    const file = join(dir, JOURNAL_FILE);
    expect(existsSync(`${file}.1`)).toBe(true);
    const all = [...lines(`${file}.1`), ...lines(file)].map((l) => JSON.parse(l).seq as number);
    expect(all).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const again = new Journal({ dir, logger, ringSize: 5 });
    expect(
      again
        .query()
        .map((e) => e.seq)
        .at(-1),
    ).toBe(8);
    expect(
      again.append({
        time: 2000,
        target: 'a',
        type: 'confirm',
        summary: 'after restart',
        data: { reason: 'r' },
      }).seq,
    ).toBe(9);
    await again.flush();
  });

  it('after a crash left a torn last line, the next event starts on a line of its own', async () => {
    const file = join(dir, JOURNAL_FILE);
    writeFileSync(
      file,
      JSON.stringify({ seq: 1, time: 1, target: 't', type: 'confirm', summary: 'a', data: { reason: 'r' } }) +
        '\n{"seq":2,"ti',
    );
    const j = new Journal({ dir, logger });
    expect(
      j.append({ time: 3, target: 't', type: 'confirm', summary: 'after crash', data: { reason: 'r' } }).seq,
    ).toBe(2);
    await j.flush();
    const again = new Journal({ dir, logger });
    expect(again.query().map((e) => e.summary)).toEqual(['a', 'after crash']);
  });

  it('an entry of a type this version does not know is kept, as `unknown` with its own type and data', () => {
    const file = join(dir, JOURNAL_FILE);
    const old = { seq: 1, time: 1, target: 't', type: 'retired_type', summary: 'old', data: { n: 1 } };
    writeFileSync(file, JSON.stringify(old) + '\n');
    const j = new Journal({ dir, logger });
    expect(j.query()).toEqual([
      {
        seq: 1,
        time: 1,
        target: 't',
        summary: 'old',
        type: 'unknown',
        data: { type: 'retired_type', data: { n: 1 } },
      },
    ]);
    expect(j.query({ type: 'retired_type' })).toEqual([]);
  });

  it('stays in memory when the directory cannot be created', () => {
    writeFileSync(join(dir, 'a-file'), '');
    const j = new Journal({ dir: join(dir, 'a-file', 'journal'), logger });
    j.append({ time: 1, target: 't', type: 'confirm', summary: 's', data: { reason: 'r' } });
    expect(j.query()).toHaveLength(1);
  });
});

describe('TargetWatchdog', () => {
  function make(extra: Record<string, unknown> = {}) {
    const metrics = createMetrics({ defaults: false });
    const journal = new Journal({ dir, logger });
    const clock = { now: 1_700_000_000_000 };
    const target = targetSchema.parse({
      name: 'pd',
      endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
      probes: [{ name: 'chat', kind: 'chat', every: '2s', conn: ['fresh'] }],
      ...extra,
    });
    const now = () => clock.now;
    // Remediation is built beside the watchdog, as the runtime does (issue 25: it subscribes to verdicts).
    const remediation = remediationFor(target, { metrics, logger, journal, now });
    const wd = new TargetWatchdog({ target, metrics, logger, journal, now, remediation });
    const rounds: ProbeFilter[] = [];
    wd.setConfirmer({ runNow: async (f) => void rounds.push(f ?? {}), inflight: () => [] });
    const probe = (result: ProbeResultSignal['result']) => {
      clock.now += 2000;
      wd.handle({
        kind: 'probe',
        target: 'pd',
        probe: 'chat',
        probeKind: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result,
        start: clock.now - 10,
        durationMs: 10,
      });
    };
    const watchdog = new Watchdog(journal);
    watchdog.add(wd);
    return { metrics, journal, clock, wd, rounds, probe, watchdog };
  }

  it('exports state metrics, journals a thread death, runs a confirmation round and wedges on its failure', async () => {
    const { metrics, journal, clock, wd, rounds, probe } = make();
    probe('ok');
    expect(wd.state.state).toBe('ok');
    wd.handle({
      kind: 'log',
      target: 'pd',
      service: 'prefill',
      rule: 'nixl_bootstrap_thread_died',
      class: 'kv_bootstrap_dead',
      severity: 'critical',
      line: 'Exception in thread Thread-3 (bootstrap_thread):\nTraceback (most recent call last):',
      file: '/p.log',
      offset: 0,
      time: clock.now,
      fields: { thread: 'bootstrap_thread' },
    });
    expect(rounds).toEqual([{ kinds: ['chat'] }]);
    probe('timeout');
    expect(wd.state.state).toBe('wedged');
    const text = await metrics.registry.metrics();
    expect(text).toContain('wedgewatch_target_state{target="pd",state="wedged"} 1');
    expect(text).toContain('wedgewatch_target_state{target="pd",state="ok"} 0');
    expect(text).toContain('wedgewatch_target_wedged{target="pd"} 1');
    expect(text).toContain('wedgewatch_target_diagnosis{target="pd",diagnosis="kv_bootstrap_thread_dead"} 1');
    expect(text).toContain('wedgewatch_wedges_total{target="pd",cause="kv_bootstrap_thread_dead"} 1');
    expect(text).toContain(
      `wedgewatch_target_state_since_timestamp_seconds{target="pd"} ${clock.now / 1000}`,
    );
    expect(journal.query().map((e) => e.type)).toEqual([
      'transition',
      'critical_log',
      'confirm',
      'critical_confirmed',
      'transition',
    ]);
    // Each detector event is journaled in the one wording replay prints too, with its own fields as data.
    for (const e of journal.query()) {
      if (e.type === 'confirm' || e.type === 'unknown') continue;
      expect(e.summary).toBe(eventText({ ...e.data, type: e.type, at: e.time } as DetectEvent));
    }
    probe('ok');
    probe('ok');
    expect(wd.state.state).toBe('ok');
    const after = await metrics.registry.metrics();
    expect(after).not.toContain('diagnosis="kv_bootstrap_thread_dead"');
    expect(after).toContain('wedgewatch_target_wedged{target="pd"} 0');
  });

  it('changes its state in place, but an incident capture keeps the verdict it was handed', () => {
    const metrics = createMetrics({ defaults: false });
    const journal = new Journal({ dir, logger });
    const clock = { now: 1_700_000_000_000 };
    const target = targetSchema.parse({
      name: 'pd',
      endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
      probes: [{ name: 'chat', kind: 'chat', every: '2s', conn: ['fresh'] }],
    });
    const verdicts: { prev: { state: string; diagnosis: string | null }; next: TargetMemory }[] = [];
    const wd = new TargetWatchdog({
      target,
      metrics,
      logger,
      journal,
      now: () => clock.now,
      incidents: { onVerdict: (prev, next) => void verdicts.push({ prev, next }) },
    });
    const probe = (result: ProbeResultSignal['result']) => {
      clock.now += 2000;
      wd.handle({
        kind: 'probe',
        target: 'pd',
        probe: 'chat',
        probeKind: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result,
        start: clock.now - 10,
        durationMs: 10,
      });
    };
    const own = wd.state;
    probe('ok');
    expect(wd.state).toBe(own);
    expect(verdicts.map((v) => [v.prev.state, v.next.state])).toEqual([['unknown', 'ok']]);
    const handed = verdicts[0]!.next;
    expect(handed).not.toBe(own);
    for (let i = 0; i < 4; i++) probe('timeout');
    expect(wd.state.state).toBe('wedged');
    expect(verdicts.map((v) => [v.prev.state, v.next.state])).toEqual([
      ['unknown', 'ok'],
      ['ok', 'wedged'],
    ]);
    // What the first capture was handed is still the ok verdict with one passing run.
    expect(handed.state).toBe('ok');
    expect(Object.values(handed.slots).map((m) => [m.okStreak, m.failStreak])).toEqual([[1, 0]]);
    expect(Object.values(wd.state.slots).map((m) => m.failStreak)).toEqual([4]);
  });

  it('exports engine_stalled when an engine with requests makes no progress, and 0 once it does', async () => {
    const { metrics, clock, wd } = make();
    const scrape = (finishedTotal: number) =>
      wd.handle({
        kind: 'engine',
        target: 'pd',
        service: 'decode',
        source: 'metrics',
        time: clock.now,
        scrapeOk: true,
        running: 2,
        queued: 0,
        finishedTotal,
      });
    const stalled = async () =>
      /^wedgewatch_engine_stalled\{target="pd",service="decode"\} (\d)$/m.exec(
        await metrics.registry.metrics(),
      )?.[1];
    scrape(10);
    expect(await stalled()).toBe('0');
    for (let i = 0; i < 14; i++) {
      clock.now += 5000;
      scrape(10);
    }
    expect(await stalled()).toBe('1');
    clock.now += 5000;
    scrape(11);
    expect(await stalled()).toBe('0');
  });

  it('WEDGEWATCH_DIAGNOSIS stays kv_bootstrap_thread_dead when a user rule matches a later line (issue 16, item 8)', async () => {
    const { wd, clock, probe, journal } = make({
      remediate: { command: ['true'], dryRun: true, after: '1s', cooldown: '1s', maxPerHour: 10 },
    });
    probe('ok');
    const line = (rule: string, cls: LogEventClass, text: string, user?: boolean) =>
      wd.handle({
        kind: 'log',
        target: 'pd',
        service: 'prefill',
        rule,
        class: cls,
        severity: 'critical',
        line: text,
        file: '/p.log',
        offset: 0,
        time: clock.now,
        fields: {},
        ...(user ? { user } : {}),
      });
    line(
      'nixl_bootstrap_thread_died',
      'kv_bootstrap_dead',
      'Exception in thread Thread-3 (bootstrap_thread):',
    );
    probe('timeout');
    expect(wd.state.diagnosis).toBe('kv_bootstrap_thread_dead');
    clock.now += 20_000;
    line('oom_killed', 'custom', 'CUDA out of memory', true);
    probe('timeout');
    probe('timeout');
    await wd.idle();
    const runs = journal.query({ type: 'remediation' });
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.map((e) => e.data?.diagnosis)).toEqual(runs.map(() => 'kv_bootstrap_thread_dead'));
    expect(wd.state.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('status lists last results, recent events and the changes since the last ok; pause is journaled', () => {
    const { wd, clock, probe, watchdog } = make({ remediate: { command: ['true'] } });
    probe('ok');
    clock.now += 1000;
    wd.handle({
      kind: 'file_change',
      target: 'pd',
      path: '/opt/serve.sh',
      time: clock.now,
      hash: 'ab'.repeat(32),
      diff: '+x',
    });
    expect(wd.status().changesSinceOk).toEqual([]);
    probe('timeout');
    probe('timeout');
    clock.now += 1000;
    wd.handle({
      kind: 'file_change',
      target: 'pd',
      path: '/etc/x.env',
      time: clock.now,
      hash: null,
      diff: 'file deleted',
    });
    const st = wd.status();
    expect(st).toMatchObject({ state: 'wedged', diagnosis: 'completions_failing', endpoints: ['router'] });
    expect(st.probes).toEqual([
      expect.objectContaining({
        probe: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result: 'timeout',
        failStreak: 2,
      }),
    ]);
    // The serve-script change happened while ok, before the wedge began: only the later one counts.
    expect(st.changesSinceOk.map((e) => e.data?.path)).toEqual(['/etc/x.env']);
    expect(watchdog.pause('pd')).toBe(true);
    expect(watchdog.isPaused('pd')).toBe(true);
    expect(wd.status().remediation).toEqual({ configured: true, dryRun: true, paused: true });
    expect(watchdog.pause('nope')).toBe(false);
    watchdog.resume('pd');
    expect(wd.status().recentEvents.filter((e) => e.type === 'remediation_pause')).toHaveLength(2);
  });

  it('a reload drops the memory of engines the new config neither scrapes nor tails', () => {
    const url = 'http://127.0.0.1:1/metrics';
    const { wd, clock, metrics, journal } = make({
      engines: [
        { service: 'decode', metrics: url },
        { service: 'prefill', metrics: url },
      ],
    });
    for (const service of ['decode', 'prefill', 'router']) {
      wd.handle({ kind: 'engine', target: 'pd', service, source: 'log', time: clock.now, running: 3 });
    }
    const target = targetSchema.parse({
      name: 'pd',
      endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
      probes: [{ name: 'chat', kind: 'chat', every: '2s', conn: ['fresh'] }],
      engines: [{ service: 'prefill', metrics: url }],
      logs: [{ service: 'router', path: '/nonexistent/router.log' }],
    });
    const next = new TargetWatchdog({
      target,
      metrics,
      logger,
      journal,
      now: () => clock.now,
      previous: wd.carry(),
    });
    expect(Object.keys(next.state.engines).sort()).toEqual(['prefill', 'router']);
    clock.now += 120_000;
    next.tick();
    expect(next.state.engines.decode).toBeUndefined();
  });

  it('serves GET /api/status and GET /api/events with filters and input checks', async () => {
    const { clock, probe, watchdog } = make();
    probe('ok');
    const app = Fastify();
    await app.register(statusRoutes({ watchdog: () => watchdog }));
    const status = (await app.inject('/api/status')).json();
    expect(status.targets[0]).toMatchObject({ target: 'pd', state: 'ok' });
    const events = (await app.inject(`/api/events?target=pd&since=${clock.now - 60_000}`)).json();
    expect(events.events.map((e: { type: string }) => e.type)).toEqual(['transition']);
    const iso = new Date(clock.now + 1).toISOString();
    expect((await app.inject(`/api/events?since=${encodeURIComponent(iso)}`)).json().events).toEqual([]);
    expect((await app.inject('/api/events?since=yesterday')).statusCode).toBe(400);
    expect((await app.inject('/api/events?limit=0')).statusCode).toBe(400);
    expect((await app.inject('/api/events?target=other')).statusCode).toBe(404);
    await app.close();
    const none = Fastify();
    await none.register(statusRoutes({ watchdog: () => undefined }));
    expect((await none.inject('/api/status')).statusCode).toBe(503);
    await none.close();
  });
});

describe('runtime reload', () => {
  it('carries target state, the remediation pause and the journal over to the new runtime', async () => {
    const text = (probes: string) => `
stateDir: ${join(dir, 'state')}
targets:
  - name: pd
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    probes: ${probes}
`;
    const metrics = createMetrics({ defaults: false });
    const first = await createRuntime(
      parseConfigText(
        text('[{ name: chat, kind: chat, cron: "0 0 1 1 *", conn: [fresh] }]'),
        join(dir, 'c.yaml'),
        {},
      ),
      { metrics, logger },
    );
    const wd = first.watchdog!.targets.get('pd')!;
    for (let i = 0; i < 2; i++) {
      wd.handle({
        kind: 'probe',
        target: 'pd',
        probe: 'chat',
        probeKind: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result: 'timeout',
        start: Date.now(),
        durationMs: 1,
      });
    }
    expect(wd.state.state).toBe('wedged');
    first.watchdog!.pause('pd');
    // The new config drops the chat probe: its memory goes, the verdict and the pause stay.
    const second = await createRuntime(parseConfigText(text('[]'), join(dir, 'c.yaml'), {}), {
      metrics,
      logger,
      previous: first,
    });
    await first.stop();
    const next = second.watchdog!.targets.get('pd')!;
    expect(next.state.state).toBe('wedged');
    expect(next.state.slots).toEqual({});
    expect(second.watchdog!.isPaused('pd')).toBe(true);
    expect(second.watchdog!.journal).toBe(first.watchdog!.journal);
    await second.stop();
    expect(readFileSync(join(dir, 'state', JOURNAL_FILE), 'utf8')).toContain('"type":"transition"');
  });
  it('drops the series of a target (and engine) the new config removed, once the old runtime stopped', async () => {
    const target = (name: string) => `
  - name: ${name}
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    probes: [{ name: chat, kind: chat, cron: "0 0 1 1 *", conn: [fresh] }]`;
    const text = (...names: string[]) =>
      `stateDir: ${join(dir, 'state')}\ntargets:${names.map(target).join('')}\n`;
    const metrics = createMetrics({ defaults: false });
    const first = await createRuntime(parseConfigText(text('pd', 'gone'), join(dir, 'c.yaml'), {}), {
      metrics,
      logger,
    });
    const gone = first.watchdog!.targets.get('gone')!;
    for (let i = 0; i < 2; i++) {
      gone.handle({
        kind: 'probe',
        target: 'gone',
        probe: 'chat',
        probeKind: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result: 'timeout',
        start: Date.now(),
        durationMs: 1,
      });
    }
    metrics.engineStalled.set({ target: 'pd', service: 'decode' }, 1);
    metrics.engineRunning.set({ target: 'gone', service: 'decode' }, 3);
    const slot = (probe: string) => ({
      target: 'pd',
      probe,
      endpoint: 'router',
      conn: 'fresh',
      kind: 'chat',
    });
    metrics.probeSuccess.set(slot('chat'), 1);
    metrics.probeSuccess.set(slot('removed_probe'), 0);
    expect(await metrics.registry.metrics()).toContain('wedgewatch_target_wedged{target="gone"} 1');
    const second = await createRuntime(parseConfigText(text('pd'), join(dir, 'c.yaml'), {}), {
      metrics,
      logger,
      previous: first,
    });
    await first.stop();
    await second.activate!();
    const out = await metrics.registry.metrics();
    // Gauges go; counters (wedges_total) stay, so increase() over the reload stays right.
    expect(out.split('\n').filter((l) => l.includes('target="gone"') && !l.includes('_total{'))).toEqual([]);
    expect(out).not.toContain('service="decode"');
    // A probe the new config no longer runs loses its probe_success; one it still runs keeps it.
    expect(out).not.toContain('probe="removed_probe"');
    expect(out).toContain(
      'wedgewatch_probe_success{target="pd",probe="chat",endpoint="router",conn="fresh",kind="chat"} 1',
    );
    expect(out).toContain('wedgewatch_target_wedged{target="pd"} 0');
    expect(out).toContain('wedgewatch_remediation_paused{target="pd"} 0');
    await second.stop();
  });
});
