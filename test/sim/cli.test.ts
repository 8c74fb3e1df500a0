// `wedgewatch sim` and `wedgewatch demo` as a user runs them: the built CLI, real processes and signals.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { get } from './client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = `${root}dist/cli.js`;
const children: ChildProcess[] = [];

beforeAll(() => {
  // tsc emits even when another area's files have type errors; what matters here is that the CLI is built. As
  // `npm run build` does it (incremental, the bundle written only where it changed): after that build this writes
  // nothing, so the files other tests and the real-engine lane are running from are never rewritten under them.
  try {
    execFileSync(
      process.execPath,
      [
        `${root}node_modules/typescript/bin/tsc`,
        '-p',
        root,
        '--incremental',
        '--tsBuildInfoFile',
        `${root}dist/.tsbuildinfo`,
      ],
      { stdio: 'pipe' },
    );
  } catch {
    /* type errors elsewhere do not stop the emit */
  }
  // A tsc that emitted wrote its own dist/cli.js over the bundle; the shipped one is the bundle (scripts/bundle.mjs).
  execFileSync(process.execPath, [`${root}scripts/bundle.mjs`], { stdio: 'pipe' });
  if (!existsSync(`${root}dist/commands/sim.js`))
    throw new Error('the build did not produce dist/commands/sim.js');
}, 120_000);

let blocker: Server | undefined;
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
  blocker = undefined;
});

/** Holds a loopback port so a command that wants it finds it busy. */
async function busyPort(): Promise<number> {
  blocker = createServer();
  await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', r));
  return (blocker.address() as { port: number }).port;
}

/** A start failure is one line on stderr, not an unhandled rejection with a stack trace. */
function expectOneLine(stderr: string, what: RegExp) {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(what);
  expect(stderr).not.toMatch(/^\s+at /m);
}

function run(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out, exited };
}

describe('wedgewatch sim', () => {
  it('prints its urls and log dir, serves /health, and exits 0 on SIGTERM', async () => {
    const p = run(['sim', '--proxy', '--fault', 'slow:factor=2']);
    const urls = await waitFor(
      () => {
        const m = (name: string) =>
          new RegExp(`^\\s+${name}\\s+(http://127\\.0\\.0\\.1:\\d+)$`, 'm').exec(p.out.stdout)?.[1];
        const logs = /^\s+logs\s+(\S+)$/m.exec(p.out.stdout)?.[1];
        return m('router') && m('proxy') && m('control') && logs
          ? { router: m('router')!, proxy: m('proxy')!, control: m('control')!, logs }
          : undefined;
      },
      { timeoutMs: 15_000, what: `the printed urls (stdout: ${p.out.stdout}, stderr: ${p.out.stderr})` },
    );
    expect((await get(`${urls.router}/health`)).status).toBe(200);
    expect((await get(`${urls.proxy}/health`)).status).toBe(200);
    expect(JSON.parse((await get(`${urls.control}/state`)).text).faults).toEqual({ slow: { factor: 2 } });
    expect(existsSync(`${urls.logs}/prefill.log`)).toBe(true);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('--engine vllm: one API server with vLLM logs; a fault for the other engine is refused in one line', async () => {
    const p = run(['sim', '--engine', 'vllm', '--fault', 'slow:factor=2']);
    const urls = await waitFor(
      () => {
        const m = (name: string) =>
          new RegExp(`^\\s+${name}\\s+(http://127\\.0\\.0\\.1:\\d+)$`, 'm').exec(p.out.stdout)?.[1];
        const logs = /^\s+logs\s+(\S+)$/m.exec(p.out.stdout)?.[1];
        return m('server') && m('control') && logs
          ? { server: m('server')!, control: m('control')!, logs }
          : undefined;
      },
      { timeoutMs: 15_000, what: `the printed urls (stdout: ${p.out.stdout}, stderr: ${p.out.stderr})` },
    );
    expect(p.out.stdout).toContain('simulated vLLM V1 API server');
    expect((await get(`${urls.server}/health`)).status).toBe(200);
    expect(readFileSync(`${urls.logs}/vllm.log`, 'utf8')).toMatch(/^\(APIServer pid=\d+\) INFO /m);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);

    const refused = run(['sim', '--engine', 'vllm', '--fault', 'decode_stall']);
    expect(await refused.exited).toBe(2);
    expectOneLine(refused.out.stderr, /decode_stall applies to the SGLang simulator only/);
  });

  it('rejects an unknown fault with exit code 2', async () => {
    const p = run(['sim', '--fault', 'nope']);
    expect(await p.exited).toBe(2);
    expect(p.out.stderr).toContain('unknown fault "nope"');
  });

  it('exits 2 with one line on bad fault params or a busy port', async () => {
    const bad = run(['sim', '--fault', 'slow:factor=0']);
    expect(await bad.exited).toBe(2);
    expectOneLine(bad.out.stderr, /^wedgewatch sim: cannot start: .*factor must be a number from 1 to 1000/);
    const port = await busyPort();
    const busy = run(['sim', '--port-base', String(port)]);
    expect(await busy.exited).toBe(2);
    expectOneLine(busy.out.stderr, /^wedgewatch sim: cannot start: .*EADDRINUSE/);
  });
});

describe('wedgewatch demo', () => {
  it('replays the incident through detection, remediation and recovery, prints only the timeline, and exits 0 on Ctrl-C', async () => {
    const p = run(['demo', '--web.listen-address', '127.0.0.1:0', '--replay-after', '1s']);
    const base = await waitFor(() => /status page\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(p.out.stdout)?.[1], {
      timeoutMs: 20_000,
      what: `the status page line (stdout: ${p.out.stdout}, stderr: ${p.out.stderr})`,
    });
    expect(p.out.stdout).toMatch(/metrics\s+http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect((await get(`${base}/metrics`)).status).toBe(200);
    await waitFor(() => p.out.stdout.includes('bootstrap thread is dead'), {
      timeoutMs: 20_000,
      what: `the replayed thread death (stdout: ${p.out.stdout})`,
    });
    expect(p.out.stdout).toContain("AssertionError: First message should be b'NixlMsgGuard'");
    // Issue 43: on the wedged verdict the deployment leaves the model gateway, and the status page says so.
    const drained = await waitFor(
      () =>
        /gateway\s+removed sim-pd \((http:\/\/127\.0\.0\.1:\d+)\); users now go to: sim-pd-b$/m.exec(
          p.out.stdout,
        )?.[1],
      { timeoutMs: 120_000, intervalMs: 200, what: `the drain on the timeline (stdout: ${p.out.stdout})` },
    );
    // The gateway prints its line when the drain request reaches it; the daemon journals the drain's success
    // only once the gateway's answer is back, so on a loaded machine that line can come a moment later.
    await waitFor(
      () =>
        /state \S+ → wedged[^\n]*\n(?:.*\n)*?.*traffic\s+sim-pd: drain http:\/\/\S+ from http:\/\/\S+ success/.test(
          p.out.stdout,
        ),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: () => `the drain's success after the gateway's line (stdout: ${p.out.stdout})`,
      },
    );
    const page = (await get(`${base}/`)).text;
    expect(page).toMatch(/data-backend="sim-pd" data-in-rotation="false" data-held="false"/);
    expect(page).toContain(`worker <code>${drained}</code> <b>drained</b>`);
    // Through the whole incident (about 40 s): wedged, restarted by the remediation, back to ok. The daemon logs
    // at warn and error level all along; none of it may reach the timeline.
    await waitFor(() => /remediation \S+ success[\s\S]*state wedged → ok/.test(p.out.stdout), {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: `remediation and recovery (stdout: ${p.out.stdout})`,
    });
    // Back in rotation after the recovery, and the second deployment (never unhealthy) never left.
    await waitFor(
      () =>
        /state wedged → ok[^\n]*\n(?:.*\n)*?.*traffic\s+sim-pd: undrain http:\/\/\S+ from http:\/\/\S+ success/.test(
          p.out.stdout,
        ),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `the undrain after the recovery (stdout: ${p.out.stdout})`,
      },
    );
    expect(p.out.stdout).toMatch(/gateway\s+added back sim-pd \(\S+\); users now go to: sim-pd-b, sim-pd$/m);
    expect(p.out.stdout).not.toMatch(/sim-pd-b: (?:un)?drain|removed sim-pd-b/);
    // A terminal shows both streams: neither may carry a JSON log line.
    const jsonLines = (text: string) =>
      text.split('\n').filter((l) => {
        try {
          JSON.parse(l);
          return l.trim() !== '';
        } catch {
          return false;
        }
      });
    expect(jsonLines(p.out.stdout)).toEqual([]);
    expect(jsonLines(p.out.stderr)).toEqual([]);
    // The daemon's log went to the file named at start instead.
    const logFile = /^\s+daemon log\s+(\S+)$/m.exec(p.out.stdout)?.[1];
    expect(logFile).toBeDefined();
    const logged = readFileSync(logFile!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(logged.some((l) => l.level === 40 && /^target state \S+ → wedged/.test(l.msg))).toBe(true);
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
  }, 180_000);
});

describe('wedgewatch demo start failure', () => {
  it('exits 2 with one line when its listen address is busy', async () => {
    const port = await busyPort();
    const p = run(['demo', '--web.listen-address', `127.0.0.1:${port}`]);
    expect(await p.exited).toBe(2);
    expect(p.out.stderr).toMatch(/^wedgewatch demo: cannot start: .*EADDRINUSE/m);
    expect(p.out.stderr).not.toMatch(/^\s+at /m);
  });
});
