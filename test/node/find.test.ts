// Finding a service's engine processes (issue 42): by the port it listens on (this test process's own socket, found
// through the real /proc/self/net/tcp and /proc/<pid>/fd), by a cgroup directory and its sub-cgroups, by a container
// id in /proc/<pid>/cgroup (a /proc and a cgroup root laid out as the kernel lays them), and the bounds.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeProcessSchema } from '../../src/config/node-schema.js';
import { findProcesses, listeningInodes, MAX_FOUND } from '../../src/sources/node/find.js';

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const cfg = (x: Record<string, unknown>) => nodeProcessSchema.parse({ service: 'engine', ...x });

describe('finding engine processes', () => {
  it('by port: the process holding the listening socket (this one)', async () => {
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    expect(await findProcesses(cfg({ port }))).toEqual({ pids: [process.pid] });
    server.close();
    await new Promise<void>((r) => server!.once('close', () => r()));
    server = undefined;
    expect((await findProcesses(cfg({ port }))).problem).toBe(`nothing listens on port ${port}`);
  });

  it('listening inodes: only state 0A rows on that port, tcp and tcp6 alike', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0 100 0 0 10 0',
      '   1: 0100007F:7530 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 123457 1 0 100 0 0 10 0',
      '   2: 00000000000000000000000000000000:7530 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123458 1',
      '   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123459 1 0 100 0 0 10 0',
    ].join('\n');
    expect([...listeningInodes(table, 30000)].sort()).toEqual(['123456', '123458']);
  });

  it('by cgroup and by systemd unit: cgroup.procs of the directory and its sub-cgroups', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-find-'));
    const unit = join(dir, 'cg', 'system.slice', 'sglang-prefill.service');
    mkdirSync(join(unit, 'worker'), { recursive: true });
    writeFileSync(join(unit, 'cgroup.procs'), '101\n102\n');
    writeFileSync(join(unit, 'worker', 'cgroup.procs'), '103\n');
    const env = { proc: join(dir, 'proc'), cgroupRoot: join(dir, 'cg') };
    expect(await findProcesses(cfg({ systemdUnit: 'sglang-prefill.service' }), env)).toEqual({
      pids: [101, 102, 103],
    });
    expect(await findProcesses(cfg({ cgroup: 'system.slice/sglang-prefill.service/worker' }), env)).toEqual({
      pids: [103],
    });
    expect((await findProcesses(cfg({ systemdUnit: 'other.service' }), env)).problem).toMatch(
      /^no process in unit other\.service/,
    );
    // A cgroup of thousands of processes gives MAX_FOUND.
    writeFileSync(join(unit, 'cgroup.procs'), Array.from({ length: 5000 }, (_, i) => i + 1).join('\n'));
    expect((await findProcesses(cfg({ systemdUnit: 'sglang-prefill.service' }), env)).pids).toHaveLength(
      MAX_FOUND,
    );
  });

  it('by container id: the processes whose /proc/<pid>/cgroup names it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-find-'));
    const id = '3f2a9c0d1b7e4a5f6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c';
    const proc = join(dir, 'proc');
    for (const [pid, cg] of [
      ['200', `0::/system.slice/docker-${id}.scope\n`],
      ['201', `0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-${id}.scope\n`],
      ['202', '0::/system.slice/sshd.service\n'],
    ] as const) {
      mkdirSync(join(proc, pid), { recursive: true });
      writeFileSync(join(proc, pid, 'cgroup'), cg);
    }
    expect(await findProcesses(cfg({ container: id }), { proc, cgroupRoot: join(dir, 'cg') })).toEqual({
      pids: [200, 201],
    });
  });

  it('a pid file that holds no pid says so', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ww-find-'));
    writeFileSync(join(dir, 'x.pid'), 'not a pid; rm -rf /\n');
    expect((await findProcesses(cfg({ pidFile: join(dir, 'x.pid') }))).problem).toMatch(
      /does not hold a process id/,
    );
  });
});
