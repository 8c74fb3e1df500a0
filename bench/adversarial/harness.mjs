// The machinery bench:adversarial runs on: child processes that are always killed, bounded waits, loopback-only
// HTTP helpers, the real daemon as a child process (`node <the unit's flags> dist/cli.js run`) with a monitor of
// its event-loop lag and RSS, CLI runs (`check`, `replay`) with a wall-clock and RSS bound, and fake engines.
/* global fetch, AbortSignal, Buffer, setInterval, clearInterval, clearTimeout, URLSearchParams */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killAll, sleep, track, until as untilOr } from '../lib/index.mjs';

export { freePort, killAll, sleep, track };

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CLI = join(ROOT, 'dist/cli.js');
export const DIST = join(ROOT, 'dist');
export const UNIT = join(ROOT, 'systemd/wedgewatch.service');
export const RULES = join(ROOT, 'alerts/wedgewatch.rules.yml');

/**
 * Polls `fn` until it returns a truthy value or `timeoutMs` passes (then undefined, or throws with `what`): the
 * findings' form of bench/lib's `until`, which always throws.
 */
export async function until(fn, { timeoutMs = 10_000, intervalMs = 100, what } = {}) {
  try {
    return await untilOr(what ?? 'a condition', fn, { timeoutMs, intervalMs });
  } catch (err) {
    if (what || !String(err).includes('timed out after')) throw err;
    return undefined;
  }
}

/** A fake engine on 127.0.0.1: `handler(req, res, body)`; counts requests per path. */
export async function fakeEngine(handler) {
  const counts = new Map();
  const seen = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (seen.length < 1000) seen.push({ path, headers: req.headers });
    let body = '';
    req.on('data', (d) => {
      if (body.length < 1 << 20) body += d;
    });
    req.on('end', () => handler(req, res, body, path));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    port: server.address().port,
    count: (path) => counts.get(path) ?? 0,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

/**
 * A raw HTTP request to 127.0.0.1 (fetch may not set Host): resolves { status, headers, body (Buffer) } or
 * { status: 0, error } on a timeout or a refused connection.
 */
export function rawRequest(port, { method = 'GET', path = '/', headers = {}, body, timeoutMs = 5000 } = {}) {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, timeout: timeoutMs, agent: false },
      (res) => {
        const parts = [];
        res.on('data', (d) => parts.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }),
        );
        res.on('error', (e) => resolve({ status: 0, error: e.message }));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: 0, error: `no answer within ${timeoutMs} ms` });
    });
    req.on('error', (e) => resolve({ status: 0, error: e.message }));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The node flags of the shipped unit's ExecStart, so the daemon runs as deployed. */
export function unitNodeFlags() {
  const exec = /^ExecStart=\S*node\s+(.*?)\s+\S*dist\/cli\.js/m.exec(readFileSync(UNIT, 'utf8'));
  return exec ? exec[1].split(/\s+/).filter(Boolean) : [];
}

/** MemoryHigh= of the shipped unit, in bytes. */
export function unitMemoryHigh() {
  const m = /^MemoryHigh=(\d+)([KMG]?)$/m.exec(readFileSync(UNIT, 'utf8'));
  if (!m) throw new Error(`no MemoryHigh= in ${UNIT}`);
  return Number(m[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]];
}

/** kB figures from /proc/PID/status (VmRSS, VmHWM), or undefined once the process is gone. */
export function procMem(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

const CLK_TCK = 100; // USER_HZ: /proc/PID/stat counts CPU time in 1/100 s on every Linux architecture we run on

/**
 * CPU time (user + system, every thread) the process has used, in ms, from /proc/PID/stat; undefined once it is
 * gone. The process's own work: other load on the host slows it but does not add to it.
 */
export function procCpuMs(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** A process killed once its RSS passes this: a hostile input must not take the machine down with it. */
export const RSS_KILL = 1.2 * 1024 ** 3;

/**
 * Runs `node dist/cli.js ...args` to completion, at most `timeoutMs` (then SIGKILL); samples its RSS every 50 ms
 * and kills it above `rssKillAt`. Resolves { code, signal, ms, timedOut, peakRss, stdout (Buffer), stderr }.
 */
export function runCli(args, { timeoutMs = 10_000, env, rssKillAt = RSS_KILL } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = track(
      spawn(process.execPath, [CLI, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      }),
    );
    const out = [];
    let err = '';
    let outBytes = 0;
    child.stdout.on('data', (d) => {
      if ((outBytes += d.length) < 4 << 20) out.push(d);
    });
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    let peakRss = 0;
    let timedOut = false;
    let rssKilled = false;
    const sampler = setInterval(() => {
      const m = procMem(child.pid);
      if (m) peakRss = Math.max(peakRss, m.hwm || 0, m.rss || 0);
      if (peakRss > rssKillAt) {
        rssKilled = true;
        child.kill('SIGKILL');
      }
    }, 50);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(timer);
      resolve({
        code,
        signal,
        ms: Date.now() - t0,
        timedOut,
        rssKilled,
        peakRss,
        stdout: Buffer.concat(out),
        stderr: err,
      });
    });
  });
}

/**
 * The real daemon as a child process, monitored: every `monitorMs` it scrapes /metrics (3 s timeout) for
 * nodejs_eventloop_lag_max_seconds, and samples VmRSS/VmHWM. A scrape that gets no answer counts as a stall
 * of at least its wait. RSS past RSS_KILL kills it.
 */
export class Daemon {
  constructor(name, configPath, { port, extraArgs = [], env = {}, nodeArgs = [], authorization } = {}) {
    this.name = name;
    this.headers = authorization ? { authorization } : {};
    this.configPath = configPath;
    this.port = port;
    this.base = `http://127.0.0.1:${port}`;
    this.extraArgs = extraArgs;
    this.env = env;
    this.nodeArgs = nodeArgs;
    this.maxLagS = 0;
    this.maxStallS = 0;
    this.peakRss = 0;
    this.rssKilled = false;
    this.stderr = '';
    /** False where the bench itself slows the daemon down (finding 5's injected delays). */
    this.inSummary = true;
  }

  async start({ readyMs = 20_000 } = {}) {
    const args = [
      ...unitNodeFlags(),
      ...this.nodeArgs,
      CLI,
      'run',
      '--config',
      this.configPath,
      '--log.level',
      'warn',
      ...this.extraArgs,
    ];
    const child = track(
      spawn(process.execPath, args, {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ...this.env },
      }),
    );
    this.child = child;
    child.stderr.on('data', (d) => (this.stderr = (this.stderr + d).slice(-8000)));
    this.exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
    const ready = await until(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) return 'exited';
        return fetch(`${this.base}/-/ready`, {
          signal: AbortSignal.timeout(2000),
          headers: this.headers,
        }).then(
          (r) => r.ok,
          () => false,
        );
      },
      { timeoutMs: readyMs, intervalMs: 100 },
    );
    if (ready !== true)
      throw new Error(
        `daemon ${this.name} ${ready === 'exited' ? 'exited' : 'not ready'}: ${this.stderr.slice(-600)}`,
      );
    // The lag gauge holds the worst sample since the last scrape: one scrape now drops start-up's (config load,
    // module compile), so what is measured is the daemon under the bench's inputs.
    await this.metrics();
    this.startMonitor();
    return this;
  }

  get pid() {
    return this.child?.pid;
  }

  alive() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  startMonitor(monitorMs = 1000) {
    this.stopMonitor();
    let busy = false;
    this.monitor = setInterval(async () => {
      if (!this.alive()) return;
      const m = procMem(this.pid);
      if (m) this.peakRss = Math.max(this.peakRss, m.hwm || 0, m.rss || 0);
      if (this.peakRss > RSS_KILL) {
        this.rssKilled = true;
        this.child.kill('SIGKILL');
        return;
      }
      if (busy) return;
      busy = true;
      try {
        await this.sampleLag();
      } finally {
        busy = false;
      }
    }, monitorMs);
  }

  stopMonitor() {
    if (this.monitor) clearInterval(this.monitor);
    this.monitor = undefined;
  }

  /** One /metrics scrape: the lag gauge, or the wait as a stall when no answer came. */
  async sampleLag(timeoutMs = 3000) {
    const t0 = Date.now();
    const text = await this.metrics(timeoutMs);
    const took = (Date.now() - t0) / 1000;
    if (text === undefined) {
      if (this.alive()) this.maxStallS = Math.max(this.maxStallS, took);
      return undefined;
    }
    const lag = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? 0);
    this.maxLagS = Math.max(this.maxLagS, lag);
    return lag;
  }

  /** The worst of the lag gauge and an unanswered scrape's wait, in seconds. */
  worstLagS() {
    return Math.max(this.maxLagS, this.maxStallS);
  }

  async metrics(timeoutMs = 3000) {
    try {
      const r = await fetch(`${this.base}/metrics`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: this.headers,
      });
      return r.ok ? await r.text() : undefined;
    } catch {
      return undefined;
    }
  }

  async json(path, timeoutMs = 5000) {
    try {
      const r = await fetch(`${this.base}${path}`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: this.headers,
      });
      return await r.json();
    } catch {
      return undefined;
    }
  }

  async text(path, timeoutMs = 5000) {
    try {
      const r = await fetch(`${this.base}${path}`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: this.headers,
      });
      return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
    } catch (e) {
      return { status: 0, body: Buffer.from(String(e)) };
    }
  }

  /** Journal events of `target` (optionally of `type`) since `since` (Unix ms). */
  async events(target, { since, type } = {}) {
    const q = new URLSearchParams({ target, limit: '10000' });
    if (since !== undefined) q.set('since', String(since));
    if (type !== undefined) q.set('type', type);
    return (await this.json(`/api/events?${q}`))?.events;
  }

  /** Sends `signal` and waits at most `waitMs` for the exit; true if it exited. */
  async signal(signal, waitMs = 10_000) {
    if (!this.alive()) return true;
    this.child.kill(signal);
    const r = await Promise.race([this.exited.then(() => true), sleep(waitMs).then(() => false)]);
    return r;
  }

  /** Records the final high-water mark, then SIGKILLs whatever is left. */
  async kill() {
    this.stopMonitor();
    if (!this.alive()) return;
    const m = procMem(this.pid);
    if (m) this.peakRss = Math.max(this.peakRss, m.hwm || 0);
    this.child.kill('SIGKILL');
    await Promise.race([this.exited, sleep(5000)]);
  }

  /** A graceful stop (SIGTERM, up to waitMs), SIGKILL after. */
  async stop(waitMs = 15_000) {
    const m = this.alive() ? procMem(this.pid) : undefined;
    if (m) this.peakRss = Math.max(this.peakRss, m.hwm || 0);
    this.stopMonitor();
    const ok = await this.signal('SIGTERM', waitMs);
    if (!ok) await this.kill();
    return ok;
  }
}

/** Counts a metric's samples matching `labels` (a substring filter) in exposition text; sum of values. */
export function metricSum(text, name, labelFilter = () => true) {
  let sum = 0;
  let found = false;
  for (const line of (text ?? '').split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    if (!labelFilter(m[2] ?? '')) continue;
    sum += Number(m[3]);
    found = true;
  }
  return found ? sum : undefined;
}

export function whichBinary(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}
