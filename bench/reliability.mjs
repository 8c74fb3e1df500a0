// @ts-check
// bench:reliability — issue 16 item 4's table against the real daemon process (`node dist/cli.js run`): a
// numbered-line writer in its own process (bench/reliability-writer.mjs, RATE lines/s, every 10th line
// critical) while the daemon is stopped, restarted, rotated under and killed. Counted: the critical lines the
// daemon journaled (events.jsonl, `critical_log`, by seq) and, where the daemon stops cleanly, the lines it
// read (wedgewatch_log_lines_total, summed over its runs). Per case: written vs counted, lost and duplicated.
// A copytruncate destroys the lines written between its copy and its truncate (in neither file afterwards):
// those are reported as the copytruncate window, not as lost. Prints figures; exits 1 when a case loses or
// duplicates anything outside that window.
//   npm run bench:reliability      RATE=2000 KILLS=20 SEED=1 CASES=rename-down,... (default: all)
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep, track, until } from './lib/index.mjs';

/* global fetch, AbortSignal */
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CLI = join(ROOT, 'dist/cli.js');
const WRITER = join(ROOT, 'bench/reliability-writer.mjs');
const RATE = Number(process.env.RATE ?? 2000);
const KILLS = Number(process.env.KILLS ?? 20);
const CRIT_EVERY = 10;
let seed = Number(process.env.SEED ?? 1);
const random = () => {
  // mulberry32: the kill points are reproducible from SEED.
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

/** The engine the health probe hits: 200 on anything. */
async function engine() {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no TCP address for the engine');
  return { url: `http://127.0.0.1:${addr.port}`, close: () => server.close() };
}

/** @param {{ port: number, stateDir: string, logPath: string, engineUrl: string }} where */
function config({ port, stateDir, logPath, engineUrl }) {
  // The example config's health cadence (every 10s, timeout 5s); no completion probes (no model to ask).
  return `web: { listenAddress: '127.0.0.1:${port}' }
stateDir: ${stateDir}
targets:
  - name: rel
    model: m
    endpoints: [{ name: engine, url: '${engineUrl}' }]
    probes:
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }
    logs:
      - { service: app, path: '${logPath}', packs: [], from: start }
rules:
  - { name: seq_crit, severity: critical, match: 'seq=(?<seq>\\d+) CRIT x+ end$' }
`;
}

class Daemon {
  /**
   * @param {string} cfg
   * @param {number} port
   */
  constructor(cfg, port) {
    this.cfg = cfg;
    this.base = `http://127.0.0.1:${port}`;
    this.lines = 0;
    /** @type {import('node:child_process').ChildProcessWithoutNullStreams | import('node:child_process').ChildProcess | undefined} */
    this.child = undefined;
    /** @type {(() => string) | undefined} */
    this.err = undefined;
  }
  /** The running child (start() ran). */
  proc() {
    if (!this.child) throw new Error('the daemon was not started');
    return this.child;
  }
  async start() {
    const child = spawn(
      process.execPath,
      [CLI, 'run', '-c', this.cfg, '--log.level', process.env.DEBUG_SEQ ? 'info' : 'warn'],
      {
        stdio: ['ignore', process.env.DEBUG_SEQ ? 'inherit' : 'ignore', 'pipe'],
      },
    );
    track(child);
    let err = '';
    child.stderr?.on('data', (d) => {
      err = (err + d).slice(-4000);
      if (process.env.DEBUG_SEQ) process.stderr.write(d);
    });
    this.child = child;
    this.err = () => err;
    await until('the daemon ready', () =>
      fetch(`${this.base}/-/ready`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      ),
    );
  }
  async linesRead() {
    const text = await fetch(`${this.base}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((r) =>
      r.text(),
    );
    return Number(/^wedgewatch_log_lines_total\{[^}]*service="app"[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0);
  }
  /**
   * SIGTERM after adding this run's line count. With the writer running, it is paused while the count is
   * taken (else lines read between the scrape and the signal would be read and counted by no one).
   */
  /** @param {Writer} [writer] */
  async stop(writer) {
    await writer?.send('pause');
    let n = -1;
    for (;;) {
      const now = await this.linesRead();
      if (now === n) break;
      n = now;
      await sleep(300);
    }
    this.lines += n;
    const child = this.proc();
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([gone, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) throw new Error('daemon ignored SIGTERM');
    await writer?.send('resume');
  }
  async kill() {
    this.lines = NaN; // a killed run's count is lost with it
    const child = this.proc();
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
}

class Writer {
  /** @param {string} file */
  constructor(file) {
    this.child = spawn(process.execPath, [WRITER, file, String(RATE), String(CRIT_EVERY)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    track(this.child);
    this.out = '';
    /** @type {(() => void)[]} */
    this.waiters = [];
    this.child.stdout.on('data', (d) => {
      this.out += d;
      for (const w of this.waiters.splice(0)) w();
    });
  }
  /** @param {string} cmd */
  async send(cmd) {
    const name = cmd.split(' ')[0];
    const mark = this.out.length;
    this.child.stdin.write(`${cmd}\n`);
    await until(`writer ${name}`, () => this.out.slice(mark).includes(`ok ${name} `), { timeoutMs: 20_000 });
    return Number(new RegExp(`ok ${name} (\\d+)`).exec(this.out.slice(mark))?.[1]);
  }
  async stop() {
    const total = await this.send('stop');
    return total;
  }
}

/** Seqs of critical lines journaled: seq → count. */
/** @param {string} stateDir */
function journaled(stateDir) {
  /** @type {Map<number, number>} */
  const seen = new Map();
  for (const name of ['events.jsonl.1', 'events.jsonl']) {
    const f = join(stateDir, name);
    if (!existsSync(f)) continue;
    for (const l of readFileSync(f, 'utf8').split('\n')) {
      if (!l.includes('critical_log')) continue;
      let e;
      try {
        e = JSON.parse(l);
      } catch {
        continue;
      }
      const m = /seq=(\d+) /.exec(e.data?.line ?? '');
      if (e.type === 'critical_log' && m) seen.set(Number(m[1]), (seen.get(Number(m[1])) ?? 0) + 1);
    }
  }
  return seen;
}

/** Seqs present in any of the log files now (what a copytruncate did not destroy). */
/** @param {string} dir */
function onDisk(dir) {
  /** @type {Set<number>} */
  const have = new Set();
  for (const n of readdirSync(dir)) {
    if (!n.startsWith('app.log')) continue;
    for (const m of readFileSync(join(dir, n), 'utf8').matchAll(/seq=(\d+) /g)) have.add(Number(m[1]));
  }
  return have;
}

/**
 * What a case's body gets: the daemon, the writer, the log and its folder, and notes for the result line.
 * @typedef {{ daemon: Daemon, writer: Writer, logPath: string, dir: string, notes: string[] }} CaseEnv
 */
/**
 * @param {string} name
 * @param {{ glob?: boolean, copytruncate?: boolean }} how
 * @param {(env: CaseEnv) => Promise<void>} body
 */
async function runCase(name, { glob = false, copytruncate = false } = {}, body) {
  const dir = mkdtempSync(join(tmpdir(), `ww-rel-${name}-`));
  const logPath = join(dir, 'app.log');
  writeFileSync(logPath, '');
  const port = await freePort();
  const eng = await engine();
  const cfg = join(dir, 'wedgewatch.yaml');
  const stateDir = join(dir, 'state');
  writeFileSync(cfg, config({ port, stateDir, logPath: glob ? `${logPath}*` : logPath, engineUrl: eng.url }));
  const daemon = new Daemon(cfg, port);
  const writer = new Writer(logPath);
  /** @type {string[]} */
  const notes = [];
  try {
    await daemon.start();
    await body({ daemon, writer, logPath, dir, notes });
    const total = await writer.stop();
    /** @type {number[]} */
    const expected = [];
    for (let s = 0; s < total; s += CRIT_EVERY) expected.push(s);
    // Only a copytruncate destroys lines nobody may have read; elsewhere every line written is expected.
    const onFiles = onDisk(dir);
    const disk = copytruncate ? onFiles : { has: () => true, size: total };
    const window = expected.filter((s) => !disk.has(s));
    const windowLines = total - disk.size;
    // Caught up: every critical line still on disk journaled, or nothing new for 3 s.
    let last = -1;
    let stableSince = Date.now();
    await until(
      'the daemon to catch up',
      () => {
        const seen = journaled(stateDir);
        if (expected.every((s) => seen.has(s) || !disk.has(s))) return true;
        if (seen.size !== last) {
          last = seen.size;
          stableSince = Date.now();
        }
        return Date.now() - stableSince > 3000;
      },
      { timeoutMs: 120_000 },
    );
    await daemon.stop();
    const seen = journaled(stateDir);
    const lost = expected.filter((s) => !seen.has(s) && disk.has(s));
    if (process.env.DEBUG_SEQ)
      console.log({
        dupSeqs: [...seen]
          .filter(([, c]) => c > 1)
          .map(([s]) => s)
          .slice(0, 20),
      });
    const dup = [...seen.values()].filter((c) => c > 1).reduce((a, c) => a + c - 1, 0);
    const counted = [...seen.values()].reduce((a, c) => a + c, 0);
    // Lines of the window the daemon happened to read before the truncate are counted: a range, not a value.
    const linesOk =
      Number.isNaN(daemon.lines) || (daemon.lines >= total - windowLines && daemon.lines <= total);
    const windowRead = window.filter((s) => seen.has(s)).length;
    const lines = Number.isNaN(daemon.lines)
      ? 'lines n/a (killed runs)'
      : `lines counted ${daemon.lines} of ${total}${windowLines ? ` (${total - windowLines} outside the window)` : ''}`;
    const ok = lost.length === 0 && dup === 0 && linesOk;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(26)} written ${String(total).padStart(6)} lines, ${String(expected.length).padStart(5)} critical; ` +
        `journaled ${counted}: lost ${lost.length}, duplicated ${dup}` +
        `${windowLines ? `; copytruncate window: ${windowLines} lines in neither file (${window.length} critical, ${windowRead} of them read before the truncate)` : ''}; ${lines}` +
        (lost.length ? ` [first lost seq ${lost.slice(0, 5).join(',')}]` : '') +
        (notes.length ? ` — ${notes.join('; ')}` : ''),
    );
    return ok;
  } catch (err) {
    console.log(`FAIL ${name}: ${/** @type {Error} */ (err).message}\n${daemon.err?.() ?? ''}`);
    return false;
  } finally {
    writer.child.kill('SIGKILL');
    daemon.child?.kill('SIGKILL');
    eng.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What logrotate's copytruncate does: copy the file, then truncate it (the writer keeps writing). */
/**
 * @param {string} path
 * @param {string} to
 */
function copytruncate(path, to) {
  copyFileSync(path, to);
  truncateSync(path, 0);
}

const CASES = {
  'rename-down': () =>
    runCase('rename-down', {}, async ({ daemon, writer, logPath }) => {
      await sleep(2000);
      await daemon.stop(writer);
      await sleep(1000);
      renameSync(logPath, `${logPath}.1`);
      await writer.send('reopen');
      await sleep(1000);
      await daemon.start();
      await sleep(1500);
    }),
  'copytruncate-down': () =>
    runCase('copytruncate-down', { copytruncate: true }, async ({ daemon, writer, logPath }) => {
      await sleep(2000);
      await daemon.stop(writer);
      await sleep(500);
      copytruncate(logPath, `${logPath}.1`);
      // Long enough for the new content to grow past the saved offset.
      await sleep(3000);
      await daemon.start();
      await sleep(1500);
    }),
  'glob-copytruncate-running': () =>
    runCase('glob-copytruncate-running', { glob: true, copytruncate: true }, async ({ logPath }) => {
      await sleep(2000);
      copytruncate(logPath, `${logPath}.1`);
      await sleep(2000);
      renameSync(`${logPath}.1`, `${logPath}.2`);
      copytruncate(logPath, `${logPath}.1`);
      await sleep(2000);
    }),
  'glob-copytruncate-restart': () =>
    runCase(
      'glob-copytruncate-restart',
      { glob: true, copytruncate: true },
      async ({ daemon, writer, logPath }) => {
        await sleep(2000);
        await daemon.stop(writer);
        await sleep(500);
        copytruncate(logPath, `${logPath}.1`);
        await sleep(1000);
        await daemon.start();
        await sleep(2000);
      },
    ),
  'truncate-regrow': () =>
    runCase('truncate-regrow', {}, async ({ daemon, writer }) => {
      await sleep(1500);
      // Let the daemon read everything first: a truncate destroys what was not read, whoever truncates.
      await writer.send('pause');
      await sleep(500);
      // Truncate and write more than the file held (hundreds of KB, > 49 KB) while the daemon cannot poll:
      // stopped (SIGSTOP), it sees both at once when it continues, as a poll 100 ms apart can.
      daemon.proc().kill('SIGSTOP');
      await writer.send('truncate past');
      daemon.proc().kill('SIGCONT');
      await writer.send('resume');
      await sleep(1500);
    }),
  'kill-9': () =>
    runCase('kill-9', {}, async ({ daemon, notes }) => {
      /** @type {number[]} */
      const points = [];
      for (let i = 0; i < KILLS; i++) {
        const up = 300 + Math.floor(random() * 2200);
        await sleep(up);
        await daemon.kill();
        const down = Math.floor(random() * 1000);
        await sleep(down);
        points.push(up);
        await daemon.start();
      }
      notes.push(`${KILLS} kills after ${Math.min(...points)}–${Math.max(...points)} ms up`);
      await sleep(1000);
    }),
  'partial-idle': () =>
    runCase('partial-idle', {}, async ({ writer }) => {
      await sleep(1000);
      for (let i = 0; i < 3; i++) {
        await writer.send('partial 1500');
        await sleep(300);
      }
    }),
};

if (!existsSync(CLI)) throw new Error(`${CLI} missing: npm run build first`);
const only = process.env.CASES?.split(',');
console.log(
  `bench:reliability: ${CLI} on Node ${process.version}, writer ${RATE} lines/s, every ${CRIT_EVERY}th critical, seed ${process.env.SEED ?? 1}`,
);
let failed = 0;
for (const [name, run] of Object.entries(CASES)) {
  if (only && !only.includes(name)) continue;
  if (!(await run())) failed++;
}
process.exit(failed > 0 ? 1 : 0);
