// Remediation history survives a restart (issue 16 item 2): cooldown and hourly cap from stateDir, and a command
// an earlier process started holds the lock until it exits.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { remediateSchema } from '../../src/config/schema.js';
import { createTargetMetrics } from '../../src/metrics.js';
import {
  alive,
  HISTORY_FILE,
  procStartTime,
  RemediationHistory,
} from '../../src/outputs/remediate/history.js';
import { Remediator, type RemediationRecord } from '../../src/outputs/remediate/remediator.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
const pids: number[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-remed-history-'));
});
afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const wedged = { state: 'wedged' as const, since: 0, diagnosis: 'kv_bootstrap_thread_dead' };

/** A remediator as a fresh process would make it: a new history read from stateDir. */
function remediator(
  command: string[],
  clock: { now: number },
  records: RemediationRecord[],
  extra: Record<string, unknown> = {},
) {
  return new Remediator({
    target: 'pd',
    config: remediateSchema.parse({
      command,
      dryRun: false,
      after: '0s',
      cooldown: '10m',
      maxPerHour: 1,
      ...extra,
    }),
    metrics: createTargetMetrics(new client.Registry()),
    logger: pino({ level: 'silent' }),
    onRecord: (r) => records.push(r),
    now: () => clock.now,
    history: new RemediationHistory(join(dir, 'state')),
    orphanPollMs: 50,
  });
}

it('a restart keeps the cooldown and the hourly cap: the command does not run again', async () => {
  const out = join(dir, 'runs.txt');
  const cmd = [process.execPath, '-e', `require('fs').appendFileSync(${JSON.stringify(out)}, 'run\\n')`];
  const clock = { now: 10_000_000 };
  const records: RemediationRecord[] = [];
  const first = remediator(cmd, clock, records);
  first.consider(wedged);
  await first.idle();
  expect(readFileSync(out, 'utf8')).toBe('run\n');
  // "kill -9" and start again 18 s later, still wedged.
  clock.now += 18_000;
  const second = remediator(cmd, clock, records);
  second.consider({ ...wedged, since: clock.now - 1 });
  await second.idle();
  expect(readFileSync(out, 'utf8')).toBe('run\n');
  expect(records.map((r) => r.result)).toEqual(['success', 'cooldown']);
  // Past the cooldown but within the hour: the cap holds, across another restart.
  clock.now += 11 * 60_000;
  const third = remediator(cmd, clock, records);
  third.consider({ ...wedged, since: clock.now - 2 });
  await third.idle();
  expect(records.at(-1)!.result).toBe('capped');
  expect(readFileSync(out, 'utf8')).toBe('run\n');
  // Saved by rename: no temp file is left behind.
  expect(readdirSync(join(dir, 'state'))).toEqual([HISTORY_FILE]);
});

it('a command still running from before a restart holds the lock: no overlapping run until it exits', async () => {
  const started = join(dir, 'started.txt');
  // Records its start, then runs until killed.
  const cmd = [
    process.execPath,
    '-e',
    `require('fs').appendFileSync(${JSON.stringify(started)}, process.pid + '\\n'); setInterval(() => {}, 1000)`,
  ];
  const clock = { now: 10_000_000 };
  const records: RemediationRecord[] = [];
  const first = remediator(cmd, clock, records);
  first.consider(wedged);
  await waitFor(() => existsSync(started), { what: 'the first command to start' });
  const pid = Number(readFileSync(started, 'utf8').trim());
  pids.push(pid);
  const saved = JSON.parse(readFileSync(join(dir, 'state', HISTORY_FILE), 'utf8')) as {
    pd: { running?: { pid: number } };
  };
  expect(saved.pd.running?.pid).toBe(pid);
  // The process "dies" (its remediator is abandoned, the command keeps running); a new one starts far later.
  clock.now += 3 * 3_600_000;
  const second = remediator(cmd, clock, records);
  second.consider({ ...wedged, since: clock.now - 1 });
  expect(readFileSync(started, 'utf8').trim().split('\n')).toHaveLength(1);
  process.kill(-pid, 'SIGKILL');
  await waitFor(() => !alive(pid), { what: 'the orphan to exit' });
  await second.idle();
  second.consider({ ...wedged, since: clock.now - 1 });
  await waitFor(() => readFileSync(started, 'utf8').trim().split('\n').length === 2, {
    what: 'a new run once the lock is released',
  });
  pids.push(Number(readFileSync(started, 'utf8').trim().split('\n')[1]));
});

it('a corrupt history file and stale temp files do not stop the start', () => {
  mkdtempSync(join(dir, 'x'));
  const state = join(dir, 'state');
  new RemediationHistory(state);
  writeFileSync(join(state, HISTORY_FILE), '{"pd": {"runs": [1,');
  writeFileSync(join(state, `${HISTORY_FILE}.123.tmp`), 'partial');
  const h = new RemediationHistory(state);
  expect(h.get('pd')).toEqual({ runs: [] });
  expect(readdirSync(state)).toEqual([HISTORY_FILE]);
});

it('shutdown waits for the command, then cuts its whole process group and records the run as interrupted', async () => {
  const pidsFile = join(dir, 'pids.txt');
  // Ignores TERM (KILL must follow) and leaves a grandchild in its group that must not outlive the daemon.
  const child = `require('fs').appendFileSync(${JSON.stringify(pidsFile)}, process.pid + '\\n'); setInterval(() => {}, 1000)`;
  const cmd = [
    process.execPath,
    '-e',
    `const { spawn } = require('child_process');
     spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'ignore' });
     require('fs').appendFileSync(${JSON.stringify(pidsFile)}, process.pid + '\\n');
     process.on('SIGTERM', () => {});
     setInterval(() => {}, 1000);`,
  ];
  const clock = { now: 10_000_000 };
  const records: RemediationRecord[] = [];
  const r = remediator(cmd, clock, records);
  r.consider(wedged);
  const started = await waitFor(
    () => {
      const lines = existsSync(pidsFile) ? readFileSync(pidsFile, 'utf8').trim().split('\n') : [];
      return lines.length === 2 ? lines.map(Number) : undefined;
    },
    { what: 'the command and its grandchild to start' },
  );
  pids.push(...started);
  await r.shutdown(50);
  // The grandchild is reaped by init once killed: poll rather than expect it gone the same instant.
  await waitFor(() => started.every((pid) => !alive(pid)), { what: 'the whole group to be gone' });
  expect(records.map((x) => x.result)).toEqual(['interrupted']);
  const saved = JSON.parse(readFileSync(join(dir, 'state', HISTORY_FILE), 'utf8')) as {
    pd: { running?: unknown; last?: { result: string }; runs: number[] };
  };
  // The lock is released and the cut run is in the history (it still counts against the cooldown and cap).
  expect(saved.pd.running).toBeUndefined();
  expect(saved.pd.last?.result).toBe('interrupted');
  expect(saved.pd.runs).toEqual([clock.now]);
});

it('shutdown does not cut a command that finishes within the grace', async () => {
  const cmd = [process.execPath, '-e', 'setTimeout(() => {}, 200)'];
  const records: RemediationRecord[] = [];
  const r = remediator(cmd, { now: 10_000_000 }, records);
  r.consider(wedged);
  await r.shutdown(20_000);
  expect(records.map((x) => x.result)).toEqual(['success']);
});

/** Writes a history whose lock names `pid`, as a process killed with -9 would have left it. */
function leftLock(lock: { pid: number; startedAt: number; procStart?: string }) {
  const state = join(dir, 'state');
  new RemediationHistory(state);
  writeFileSync(join(state, HISTORY_FILE), JSON.stringify({ pd: { runs: [], running: lock } }));
}

it('a lock whose pid now belongs to another process (reused after a reboot) is no lock', async () => {
  const out = join(dir, 'ran.txt');
  // This test's own pid is alive, but its start time is not the recorded one.
  leftLock({ pid: process.pid, startedAt: 1, procStart: 'not-this-process' });
  const records: RemediationRecord[] = [];
  const r = remediator(
    [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(out)}, 'ran')`],
    { now: 10_000_000 },
    records,
  );
  r.consider(wedged);
  await r.idle();
  expect(records.map((x) => x.result)).toEqual(['success']);
  expect(readFileSync(out, 'utf8')).toBe('ran');
});

it('a command left by a killed process is stopped once past its timeout, then the lock is released', async () => {
  const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    detached: true,
    stdio: 'ignore',
  });
  const pid = orphan.pid!;
  pids.push(pid);
  const clock = { now: 10_000_000 };
  // Started 31 s ago with a 30 s timeout: overdue.
  leftLock({ pid, startedAt: clock.now - 31_000, procStart: procStartTime(pid) });
  const records: RemediationRecord[] = [];
  const r = remediator(['true'], clock, records, { timeout: '30s' });
  r.consider({ ...wedged, since: clock.now - 1 });
  await waitFor(() => orphan.exitCode !== null || orphan.signalCode !== null, {
    what: 'the overdue orphan to be stopped',
  });
  expect(orphan.signalCode).toBe('SIGTERM');
  await r.idle();
  const saved = JSON.parse(readFileSync(join(dir, 'state', HISTORY_FILE), 'utf8')) as {
    pd: { running?: unknown };
  };
  expect(saved.pd.running).toBeUndefined();
});
