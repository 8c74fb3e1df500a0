import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectSchema, remediateSchema } from '../../src/config/schema.js';
import { reduce } from '../../src/core/reduce/reduce.js';
import { initialState, type ClassifierConfig } from '../../src/core/memory.js';
import { createTargetMetrics } from '../../src/metrics.js';
import { runCommand } from '../../src/lib/exec.js';
import { waitFor } from '../helpers/wait.js';
import {
  Remediator,
  type RemediationRecord,
  type RemediatorCarry,
} from '../../src/outputs/remediate/remediator.js';

let dir: string;
let script: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-remediate-'));
  script = join(dir, 'record.cjs');
  // Appends one JSON line per run: its argv and the WEDGEWATCH_* environment.
  writeFileSync(
    script,
    `const fs = require('fs');
fs.appendFileSync(process.argv[2], JSON.stringify({ argv: process.argv.slice(2), target: process.env.WEDGEWATCH_TARGET, diagnosis: process.env.WEDGEWATCH_DIAGNOSIS }) + '\\n');
console.log('restarted');`,
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const runs = (out: string) =>
  existsSync(out)
    ? readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { argv: string[]; target: string; diagnosis: string })
    : [];

function setup(over: Record<string, unknown> = {}) {
  const out = join(dir, 'runs.jsonl');
  const reg = new client.Registry();
  const metrics = createTargetMetrics(reg);
  const clock = { now: 10_000_000 };
  const records: RemediationRecord[] = [];
  const logs: { level: number; msg: string; result?: string }[] = [];
  const r = new Remediator({
    target: 'dsv4',
    config: remediateSchema.parse({
      command: [process.execPath, script, out],
      dryRun: false,
      after: '2m',
      cooldown: '15m',
      maxPerHour: 2,
      ...over,
    }),
    metrics,
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
    onRecord: (x) => records.push(x),
    now: () => clock.now,
  });
  const metric = async (result: string) =>
    (await reg.getSingleMetric('wedgewatch_remediations_total')!.get()).values.find(
      (v) => v.labels.result === result,
    )?.value ?? 0;
  return { r, out, reg, clock, records, metric, logs };
}

describe('remediation', () => {
  it('runs once after `after` in wedged, respects the cooldown and the hourly cap', async () => {
    const { r, out, clock, metric, records, logs } = setup();
    const since = clock.now;
    const wedged = { state: 'wedged' as const, since, diagnosis: 'kv_bootstrap_thread_dead' };
    r.consider(wedged);
    clock.now += 119_000;
    r.consider(wedged);
    await r.idle();
    expect(runs(out)).toHaveLength(0);
    clock.now += 1000;
    r.consider(wedged);
    await r.idle();
    expect(runs(out)).toEqual([{ argv: [out], target: 'dsv4', diagnosis: 'kv_bootstrap_thread_dead' }]);
    expect(records[0]).toMatchObject({ result: 'success', output: 'restarted\n', code: 0 });
    // Within the cooldown: no run, counted once however often it is asked.
    for (let i = 0; i < 5; i++) {
      clock.now += 60_000;
      r.consider(wedged);
    }
    await r.idle();
    expect(runs(out)).toHaveLength(1);
    expect(await metric('cooldown')).toBe(1);
    // A skip is the policy working: one info line for the decision, nothing at warn or above.
    const skips = () => logs.filter((l) => l.msg.startsWith('remediation skipped'));
    expect(skips()).toMatchObject([{ level: 30, result: 'cooldown' }]);
    expect(skips()[0]!.msg).toContain('cooldown');
    expect(logs.filter((l) => l.level >= 50)).toEqual([]);
    clock.now += 10 * 60_000; // 16 min after the first run
    r.consider(wedged);
    await r.idle();
    expect(runs(out)).toHaveLength(2);
    clock.now += 16 * 60_000; // 32 min: cooldown over, but 2 runs within the hour
    r.consider(wedged);
    await r.idle();
    expect(runs(out)).toHaveLength(2);
    expect(await metric('capped')).toBe(1);
    expect(skips().map((l) => [l.level, l.result])).toEqual([
      [30, 'cooldown'],
      [30, 'capped'],
    ]);
    expect(logs.filter((l) => l.level >= 50)).toEqual([]);
    clock.now += 30 * 60_000; // the first run left the hour
    r.consider(wedged);
    await r.idle();
    expect(runs(out)).toHaveLength(3);
    expect(await metric('success')).toBe(3);
  });

  it('a reload keeps the cooldown, the hourly cap and a run in flight (history carried over)', async () => {
    const clock = { now: 10_000_000 };
    const calls: number[] = [];
    let release: (() => void) | undefined;
    const make = (previous?: RemediatorCarry) =>
      new Remediator({
        target: 'dsv4',
        config: remediateSchema.parse({
          command: ['/bin/true'],
          dryRun: false,
          after: '2m',
          cooldown: '15m',
          maxPerHour: 3,
        }),
        metrics: createTargetMetrics(new client.Registry()),
        logger: pino({ level: 'silent' }),
        onRecord: () => {},
        now: () => clock.now,
        previous,
        exec: () => {
          calls.push(clock.now);
          return new Promise((res) => {
            release = () =>
              res({ result: 'success', code: 0, signal: null, output: '', droppedBytes: 0, durationMs: 1 });
          });
        },
      });
    const wedged = { state: 'wedged' as const, since: clock.now, diagnosis: 'engine_stalled' };
    const a = make();
    clock.now += 120_000;
    a.consider(wedged);
    expect(calls).toHaveLength(1);
    // Reload at 2.5 m while the restart still runs: the new remediator must not start a second one.
    clock.now += 30_000;
    const b = make(a.carry());
    clock.now += 20 * 60_000; // past the cooldown, but the first run is still in flight
    b.consider(wedged);
    expect(calls).toHaveLength(1);
    release!();
    await b.idle();
    // The first run's cooldown is over once it has ended: run 2.
    b.consider(wedged);
    expect(calls).toHaveLength(2);
    release!();
    await b.idle();
    // Reload 1 m after run 2: cooldown (15 m) must hold in the new remediator.
    clock.now += 60_000;
    const c = make(b.carry());
    c.consider(wedged);
    expect(calls).toHaveLength(2);
    clock.now += 15 * 60_000;
    c.consider(wedged);
    expect(calls).toHaveLength(3);
    release!();
    await c.idle();
  });

  it('dry-run (the default) reports without running', async () => {
    const { r, out, clock, metric } = setup({ dryRun: undefined });
    r.consider({ state: 'wedged', since: clock.now - 200_000, diagnosis: 'engine_stalled' });
    await r.idle();
    expect(runs(out)).toHaveLength(0);
    expect(await metric('dry_run')).toBe(1);
  });

  it('never acts on down unless onDown, nor on degraded', async () => {
    const a = setup();
    a.r.consider({ state: 'down', since: 0, diagnosis: 'health_failing' });
    a.r.consider({ state: 'degraded', since: 0, diagnosis: 'slow' });
    await a.r.idle();
    expect(runs(a.out)).toHaveLength(0);
    rmSync(a.out, { force: true });
    const b = setup({ onDown: true });
    b.r.consider({ state: 'down', since: 0, diagnosis: 'health_failing' });
    await b.r.idle();
    expect(runs(b.out)).toHaveLength(1);
  });

  it('an operator pause skips (counted once) and exports remediation_paused; resume acts', async () => {
    const { r, out, reg, clock, metric } = setup();
    r.setPaused(true);
    expect(await reg.metrics()).toContain('wedgewatch_remediation_paused{target="dsv4"} 1');
    const w = { state: 'wedged' as const, since: clock.now - 300_000, diagnosis: 'engine_stalled' };
    r.consider(w);
    r.consider(w);
    expect(await metric('paused')).toBe(1);
    r.setPaused(false);
    r.consider(w);
    await r.idle();
    expect(runs(out)).toHaveLength(1);
    expect(await reg.metrics()).toContain('wedgewatch_remediation_paused{target="dsv4"} 0');
  });

  it('a log line full of shell metacharacters never reaches the command', async () => {
    const { r, out, clock } = setup({ after: '0s' });
    const pwned = join(dir, 'pwned');
    const evil = `Exception in thread Thread-1 (bootstrap_thread): $(touch ${pwned}); \`touch ${pwned}\` | touch ${pwned} && rm -rf ~`;
    const cfg: ClassifierConfig = {
      detect: detectSchema.parse({}),
      hops: ['router'],
      probes: { chat: { kind: 'chat' } },
    };
    let s = initialState('dsv4', clock.now);
    const probe = (result: 'ok' | 'timeout') =>
      (s = reduce(
        s,
        {
          kind: 'probe',
          target: 'dsv4',
          probe: 'chat',
          probeKind: 'chat',
          endpoint: 'router',
          conn: 'fresh',
          result,
          start: clock.now,
          durationMs: 10,
        },
        ++clock.now,
        cfg,
      ).state);
    probe('ok');
    // The line comes well after that answer: a completion answered after a critical line says it still serves.
    clock.now += 60_000;
    s = reduce(
      s,
      {
        kind: 'log',
        target: 'dsv4',
        service: 'prefill',
        rule: 'thread_died',
        class: 'kv_bootstrap_dead',
        severity: 'critical',
        line: evil,
        file: '/x',
        offset: 0,
        time: clock.now,
        fields: { thread: `bootstrap_thread; touch ${pwned}`, exception: evil },
      },
      ++clock.now,
      cfg,
    ).state;
    probe('timeout');
    expect(s.state).toBe('wedged');
    r.consider(s);
    await r.idle();
    const got = runs(out);
    expect(got).toEqual([{ argv: [out], target: 'dsv4', diagnosis: 'kv_bootstrap_thread_dead' }]);
    expect(existsSync(pwned)).toBe(false);
    // A critical rule with an unknown thread: the diagnosis is built from the rule name, sanitised.
    const s2 = reduce(
      s,
      {
        kind: 'log',
        target: 'dsv4',
        service: 'x',
        rule: 'a;b$(c)',
        class: 'custom',
        severity: 'critical',
        line: 'boom $(touch x)',
        file: '/x',
        offset: 0,
        time: 0,
        fields: {},
      },
      ++clock.now,
      cfg,
    );
    expect(s2.events.find((e) => e.type === 'critical_log')).toMatchObject({ diagnosis: 'log:a_b__c_' });
  });
});

describe('runCommand', () => {
  it('times out with TERM, and caps the captured output', async () => {
    const slow = await runCommand([process.execPath, '-e', 'setTimeout(() => {}, 60000)'], {
      env: {},
      timeoutMs: 200,
    });
    expect(slow.result).toBe('timeout');
    const loud = await runCommand([process.execPath, '-e', 'process.stdout.write("x".repeat(100000))'], {
      env: {},
      timeoutMs: 10_000,
      maxOutputBytes: 1000,
    });
    expect(loud.result).toBe('success');
    expect(loud.output).toHaveLength(1000);
    expect(loud.droppedBytes).toBe(99_000);
  });

  it('a timeout kills the whole process group: a background grandchild holding the pipes does not hang it', async () => {
    const r = await runCommand(['/bin/sh', '-c', 'sleep 60 & echo $!; sleep 60'], {
      env: {},
      timeoutMs: 300,
      killAfterMs: 500,
    });
    expect(r.result).toBe('timeout');
    const pid = Number(r.output.trim());
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), { timeoutMs: 5000, what: 'the background sleep to be killed' });
  }, 20_000);

  it('reports a command that cannot start as a failure', async () => {
    const r = await runCommand([join(tmpdir(), 'no-such-command-ww')], { env: {}, timeoutMs: 1000 });
    expect(r.result).toBe('failure');
    expect(r.error).toMatch(/ENOENT/);
  });
});
