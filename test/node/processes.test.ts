// The engine's processes read from /proc on real processes this machine runs (issue 42): a Python process with a
// thread that exits and a thread blocked in a named function (the simulator's PD worker, src/sim/pd-worker.ts), and
// a thread spinning vs every thread waiting, told apart by CPU time. Readings are taken by hand (the sampler is
// driven, not timed); what they measure is real.
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceSampler, LOST_AFTER_READINGS } from '../../src/sources/node/processes.js';
import { nodeProcessSchema } from '../../src/config/node-schema.js';
import { startPdWorker, type PdWorker } from '../../src/sim/pd-worker.js';
import { waitFor } from '../helpers/wait.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const workers: PdWorker[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function worker(role: 'prefill' | 'decode'): Promise<PdWorker> {
  const w = await startPdWorker(role);
  // python3 is on every machine .ci/run sets up: a missing one fails here, loudly.
  if ('problem' in w) throw new Error(`the PD worker needs python3: ${w.problem}`);
  workers.push(w);
  return w;
}

function samplerFor(pid: number): ServiceSampler {
  dir = mkdtempSync(join(tmpdir(), 'ww-node-'));
  const pidFile = join(dir, 'engine.pid');
  writeFileSync(pidFile, `${pid}\n`);
  return new ServiceSampler(nodeProcessSchema.parse({ service: 'prefill', pidFile }), 1024);
}

describe('engine processes from /proc', () => {
  it('a thread that exits while its process lives on is named as lost; the others are read with their names', async () => {
    const w = await worker('prefill');
    const s = samplerFor(w.pid);
    let t = Date.now();
    // Threads name themselves just after start: read until both are there.
    await waitFor(async () => {
      const r = await s.read((t += 1000));
      const names = [...s.threadNames(w.pid).values()];
      return names.includes('bootstrap_threa') && names.includes('scheduler') ? r : undefined;
    });
    for (let i = 0; i < LOST_AFTER_READINGS; i++) await s.read((t += 1000));
    w.abort();
    const lost = await waitFor(async () => {
      const r = await s.read((t += 1000));
      expect(r.error).toBeUndefined();
      return r.lost.length > 0 ? r.lost : undefined;
    });
    // comm is 15 bytes: the kernel's name for `bootstrap_thread`.
    expect(lost.map((l) => [l.pid, l.name])).toEqual([[w.pid, 'bootstrap_threa']]);
    expect(lost[0]!.at).toBe(t);
    const r = await s.read((t += 1000));
    expect(r.processes.map((p) => p.pid)).toEqual([w.pid]);
    expect([...s.threadNames(w.pid).values()]).toContain('scheduler');
    expect(s.lostNames(w.pid)).toEqual(['bootstrap_threa']);
  });

  it('a thread seen fewer than LOST_AFTER_READINGS times is not a loss (thread pools come and go)', async () => {
    const w = await worker('prefill');
    const s = samplerFor(w.pid);
    let t = Date.now();
    await waitFor(async () => {
      await s.read((t += 1000));
      return [...s.threadNames(w.pid).values()].includes('bootstrap_threa');
    });
    w.abort();
    await waitFor(async () => {
      const r = await s.read((t += 1000));
      expect(r.lost).toEqual([]);
      return ![...s.threadNames(w.pid).values()].includes('bootstrap_threa');
    });
  });

  it('a spinning thread and a process whose threads all wait are told apart by CPU time', async () => {
    const spinning = await worker('decode');
    const waiting = await worker('decode');
    spinning.spin();
    const a = samplerFor(spinning.pid);
    const b = new ServiceSampler(
      nodeProcessSchema.parse({ service: 'decode', pidFile: join(dir!, 'b.pid') }),
      1024,
    );
    writeFileSync(join(dir!, 'b.pid'), `${waiting.pid}\n`);
    // CPU time is real: readings are Date.now() apart, and polled until each shows its shape.
    const spin = await waitFor(
      async () => {
        const r = await a.read(Date.now());
        return r.processes[0]?.spinning?.name === 'spinner' ? r.processes[0] : undefined;
      },
      { intervalMs: 500, timeoutMs: 20_000, what: 'the spinner seen spinning' },
    );
    expect(spin.spinning!.cpu).toBeGreaterThan(0.05);
    expect(spin.idleSince).toBeUndefined();
    const idle = await waitFor(
      async () => {
        const r = await b.read(Date.now());
        return r.processes[0]?.idleSince !== undefined ? r.processes[0] : undefined;
      },
      { intervalMs: 500, timeoutMs: 20_000, what: 'the waiting worker seen idle' },
    );
    expect(idle.spinning).toBeUndefined();
    expect(idle.cpu!).toBeLessThan(0.01);
  });

  it('a restart (the pid file names another process) is reported, and the old process is forgotten', async () => {
    const first = await worker('decode');
    const s = samplerFor(first.pid);
    await s.read(1000);
    const second = await worker('decode');
    writeFileSync(join(dir!, 'engine.pid'), `${second.pid}\n`);
    const r = await s.read(2000);
    expect(r.restarted).toEqual({ from: first.pid, to: second.pid });
    expect(r.processes.map((p) => p.pid)).toEqual([second.pid]);
  });

  it('a pid file naming no live process is an error with its reason, not a reading', async () => {
    const s = samplerFor(2 ** 22 + 12345);
    const r = await s.read(1000);
    expect(r.processes).toEqual([]);
    expect(r.error).toMatch(/is gone/);
  });
});
