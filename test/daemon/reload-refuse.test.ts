// Issue 16 item 10: a changed web.listenAddress was ignored while the reload reported success, and a changed
// stateDir re-read logs and left the journal behind. Both are now refused whole, with reload-failed and a message.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-reload-refuse-'));
let daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (o: { listen?: string; state?: string; target?: string; agent?: string } = {}) =>
  `web: { listenAddress: "${o.listen ?? '127.0.0.1:0'}", enableLifecycle: true }
stateDir: ${o.state ?? `${dir}/state`}
targets:
  - name: ${o.target ?? 'first'}
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
${o.agent === undefined ? '' : `agent: { listenAddress: "${o.agent}", servers: [{ name: s1, target: ${o.target ?? 'first'} }] }\n`}`;

async function start(file: string, listenAddress?: string) {
  const { logger, lines } = capturingLogger();
  const d = new Daemon({ configPath: file, logger, listenAddress });
  daemons.push(d);
  await d.start();
  const base = `http://${d.address()}`;
  const reload = async () => {
    const res = await request(`${base}/-/reload`, { method: 'POST' });
    return { status: res.statusCode, body: await res.body.text() };
  };
  const metrics = async () => (await (await request(`${base}/metrics`)).body.text()) as string;
  return { d, base, reload, metrics, lines };
}

it.each([
  {
    what: 'a new listen address',
    change: { listen: '127.0.0.1:1', target: 'second' },
    message:
      /web\.listenAddress: changed from "127\.0\.0\.1:0" to "127\.0\.0\.1:1"; a new listen address needs a restart/,
  },
  {
    // HAProxy's agent-check port (issue 43): HAProxy keeps checking the old one, so it cannot move in place.
    what: 'a new agent-check port',
    change: { agent: '127.0.0.1:1', target: 'second' },
    message:
      /agent\.listenAddress: changed from no agent port to "127\.0\.0\.1:1"; opening or moving the agent-check port needs a restart/,
  },
  {
    what: 'a new stateDir',
    change: { state: `${dir}/elsewhere`, target: 'second' },
    message: /stateDir: changed from ".*\/state" to ".*\/elsewhere"; a new state directory needs a restart/,
  },
])(
  '$what is refused with reload-failed and a clear message, and nothing else of the file is applied',
  async ({ change, message }) => {
    const file = join(dir, `cfg-${Object.keys(change).join('-')}.yaml`);
    writeFileSync(file, config());
    const { d, reload, metrics, lines } = await start(file);
    const address = d.address();
    writeFileSync(file, config(change));
    const out = await reload();
    expect(out.status).toBe(500);
    expect(out.body).toMatch(message);
    expect(await metrics()).toMatch(/^wedgewatch_config_last_reload_successful 0$/m);
    expect(lines.some((l) => l.includes('reload refused'))).toBe(true);
    // Still the old configuration, whole: same listener, same targets.
    expect(d.address()).toBe(address);
    expect([...d.runtime!.probes!.keys()]).toEqual(['first']);
    // Put back, the reload succeeds again.
    writeFileSync(file, config({ target: 'second' }));
    expect((await reload()).status).toBe(200);
    expect([...d.runtime!.probes!.keys()]).toEqual(['second']);
  },
);

it('a listen address given by --web.listen-address wins: a change in the file is moot and the reload applies', async () => {
  const file = join(dir, 'flag.yaml');
  writeFileSync(file, config());
  const { d, reload } = await start(file, '127.0.0.1:0');
  writeFileSync(file, config({ listen: '127.0.0.1:1', target: 'second' }));
  expect((await reload()).status).toBe(200);
  expect([...d.runtime!.probes!.keys()]).toEqual(['second']);
});

it('--web.enable-lifecycle turns the lifecycle API on, as Prometheus’s flag does, whatever the file says', async () => {
  const file = join(dir, 'lifecycle.yaml');
  writeFileSync(file, config().replace('enableLifecycle: true', 'enableLifecycle: false'));
  for (const [flags, status] of [
    [[], 404],
    [['--web.enable-lifecycle'], 200],
  ] as const) {
    const { child, out, exited } = startCli(['run', '--config', file, ...flags]);
    try {
      const addr = await waitFor(() => /"address":"([^"]+)"/.exec(out.stderr)?.[1], {
        timeoutMs: 20_000,
        what: 'the daemon to listen',
      });
      const res = await request(`http://${addr}/-/reload`, { method: 'POST' });
      await res.body.text();
      expect(res.statusCode, flags.join(' ')).toBe(status);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }
});
