// /proc as a hostile input (issue 42), laid out as the kernel lays it out (proc(5)): a process with 10,000 threads is
// read up to maxThreads with its count exact; a stat file of megabytes is read up to its cap; a comm full of
// parentheses and escapes parses; and a /proc read that hangs (a FIFO nobody writes: open(2) blocks, as a read
// behind a held mmap lock would) is abandoned at the part's deadline, reported, and the watch goes on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeProcessSchema, nodeSchema } from '../../src/config/node-schema.js';
import type { NodeSignal } from '../../src/core/node-signals.js';
import { runCommand } from '../../src/lib/exec.js';
import { createMetrics } from '../../src/metrics.js';
import { ServiceSampler } from '../../src/sources/node/processes.js';
import { parseStat } from '../../src/sources/node/procfs.js';
import { NodeWatch } from '../../src/sources/node/watch.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** A stat line as the kernel prints it (fields after the comm: state ppid … utime stime … threads … starttime … rss). */
const stat = (pid: number, comm: string, o: { state?: string; ticks?: number; threads?: number } = {}) =>
  `${pid} (${comm}) ${o.state ?? 'S'} 1 ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${o.ticks ?? 10} 5 0 0 20 0 ${o.threads ?? 1} 0 777 123456 2048 18446744073709551615\n`;

function lay(pid: number, threads: number): { proc: string; pidFile: string } {
  dir = mkdtempSync(join(tmpdir(), 'ww-proc-'));
  const proc = join(dir, 'proc');
  const task = join(proc, String(pid), 'task');
  mkdirSync(task, { recursive: true });
  writeFileSync(join(proc, String(pid), 'stat'), stat(pid, 'python3', { threads }));
  for (let i = 0; i < threads; i++) {
    const tid = pid + i;
    mkdirSync(join(task, String(tid)));
    writeFileSync(join(task, String(tid), 'stat'), stat(tid, i === 0 ? 'python3' : `worker-${i}`));
  }
  const pidFile = join(dir, 'engine.pid');
  writeFileSync(pidFile, `${pid}\n`);
  return { proc, pidFile };
}

describe('/proc as hostile input', () => {
  it('10,000 threads: maxThreads of them are read, the count is exact, none beyond the cut is called lost', async () => {
    const { proc, pidFile } = lay(5000, 10_000);
    const s = new ServiceSampler(nodeProcessSchema.parse({ service: 'e', pidFile }), 64, {
      proc,
      cgroupRoot: dir,
    });
    for (let t = 1; t <= 4; t++) {
      const r = await s.read(t * 1000);
      expect(r.processes[0]!.threads).toBe(10_000);
      expect(r.lost).toEqual([]);
    }
    expect(s.threadNames(5000).size).toBe(64);
    // A thread inside the cut that goes is lost; one past it was never read.
    rmSync(join(proc, '5000', 'task', '5010'), { recursive: true });
    rmSync(join(proc, '5000', 'task', '14999'), { recursive: true });
    const r = await s.read(5000);
    expect(r.lost.map((l) => [l.tid, l.name])).toEqual([[5010, 'worker-10']]);
  });

  it('a stat of megabytes is read up to its cap and rejected; a comm with parentheses and escapes parses', async () => {
    const { proc, pidFile } = lay(6000, 1);
    writeFileSync(join(proc, '6000', 'task', '6000', 'stat'), 'x'.repeat(8 * 1024 * 1024));
    const s = new ServiceSampler(nodeProcessSchema.parse({ service: 'e', pidFile }), 64, {
      proc,
      cgroupRoot: dir,
    });
    const r = await s.read(1000);
    expect(r.processes[0]!.threads).toBe(1);
    expect(s.threadNames(6000).size).toBe(0);
    const odd = parseStat(stat(7, 'a) (b\u001b[2J) S 9', { state: 'D', ticks: 42 }))!;
    expect(odd).toMatchObject({ comm: 'a) (b\u001b[2J) S 9', state: 'D', cpuTicks: 47 });
    expect(parseStat('7 (no close paren S 1 2 3')).toBeUndefined();
  });

  it('a read that hangs is abandoned at the deadline and reported; the next round waits for it, then goes on', async () => {
    const { proc, pidFile } = lay(8000, 2);
    const fifo = join(proc, '8000', 'task', '8001', 'stat');
    rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    const signals: NodeSignal[] = [];
    const metrics = createMetrics({ defaults: false });
    const w = new NodeWatch({
      target: 't',
      node: nodeSchema.parse({ processes: [{ service: 'e', pidFile }], every: '1s', timeout: '1s' }),
      exec: runCommand,
      metrics,
      logger: quietLogger(),
      onSignal: (s) => signals.push(s),
      env: { proc, cgroupRoot: dir },
    });
    cleanups.push(() => w.stop());
    // Whatever happens, the blocked open is released at the end (a writer opens the FIFO).
    cleanups.push(() => {
      const fd = openSync(fifo, 'w');
      closeSync(fd);
    });
    w.start();
    const err = await waitFor(() => signals.find((s) => s.error !== undefined)?.error, { timeoutMs: 10_000 });
    expect(err).toBe('processes read of e took longer than 1000 ms');
    const errors = (await metrics.nodeReadErrors.get()).values.find((v) => v.labels.source === 'processes');
    expect(errors?.value).toBeGreaterThanOrEqual(1);
    // While the read hangs no other read of the part starts (one thread held at most): no reading arrives.
    expect(signals.some((s) => s.processes !== undefined)).toBe(false);
    // Released: the late reading is delivered, and the part reads on.
    const fd = openSync(fifo, 'w');
    writeFileSync(fd, stat(8001, 'late'));
    closeSync(fd);
    rmSync(fifo);
    writeFileSync(fifo, stat(8001, 'late'));
    const readings = await waitFor(() => {
      const got = signals.filter((s) => s.processes !== undefined);
      return got.length >= 2 ? got : undefined;
    });
    expect(readings[0]!.processes![0]!.pid).toBe(8000);
  });
});
