// A real HAProxy (Debian's haproxy 2.6, installed by .ci/run) for the traffic tests: started in the foreground
// (-db) on 127.0.0.1 with a stats socket, and stopped by the test. A missing binary fails the test loudly.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

/** A free loopback port (bound and released: HAProxy binds it next). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface HaproxyServer {
  name: string;
  /** host:port user requests go to. */
  addr: string;
  /** What follows `check` on the server line (agent-check or httpchk settings). */
  checks: string;
}

export interface Haproxy {
  port: number;
  /** Each server's status column of `show stat` (UP, DOWN, DRAIN, MAINT, …). */
  status(): Promise<Map<string, string>>;
  /** `show servers state` for the backend, as HAProxy prints it (the proof a test quotes). */
  serversState(): Promise<string>;
  log(): string;
  stop(): Promise<void>;
}

async function ask(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socket);
    let out = '';
    c.setTimeout(5_000, () => c.destroy(new Error(`stats socket: no answer to ${command}`)));
    c.on('data', (d) => (out += d.toString()));
    c.on('end', () => resolve(out));
    c.on('error', reject);
    c.end(`${command}\n`);
  });
}

export async function startHaproxy(
  dir: string,
  servers: HaproxyServer[],
  backendExtra: string[] = [],
): Promise<Haproxy> {
  execFileSync('haproxy', ['-v']); // throws (ENOENT) when HAProxy is not installed
  const port = await freePort();
  const socket = join(dir, 'haproxy.sock');
  const cfg = [
    'global',
    `  stats socket ${socket} mode 600 level admin`,
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend fe',
    `  bind 127.0.0.1:${port}`,
    '  default_backend engines',
    'backend engines',
    '  balance roundrobin',
    ...backendExtra.map((l) => `  ${l}`),
    // shutdown-sessions: requests already on a server marked down are cut, not left to hang.
    ...servers.map((s) => `  server ${s.name} ${s.addr} ${s.checks} on-marked-down shutdown-sessions`),
    '',
  ].join('\n');
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, cfg);
  execFileSync('haproxy', ['-c', '-q', '-f', file]);
  const proc: ChildProcess = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout?.on('data', (d) => (log = (log + d.toString()).slice(-20_000)));
  proc.stderr?.on('data', (d) => (log = (log + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const h: Haproxy = {
    port,
    async status() {
      const csv = await ask(socket, 'show stat');
      const lines = csv.split('\n').filter((l) => l.startsWith('engines,'));
      const header = csv.split('\n')[0]!.replace(/^# /, '').split(',');
      const col = header.indexOf('status');
      return new Map(
        lines
          .map((l) => l.split(','))
          .filter((f) => f[1] !== 'BACKEND' && f[1] !== 'FRONTEND')
          .map((f) => [f[1]!, f[col]!]),
      );
    },
    serversState: () => ask(socket, 'show servers state engines'),
    log: () => log,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
  return h;
}
