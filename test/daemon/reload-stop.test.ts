// A reload racing stop(), and a reload whose runtime factory fails quoting a newly configured secret.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import type { Runtime, RuntimeFactory } from '../../src/runtime.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-reload-stop-'));

function config(name: string, token = ''): string {
  return `web: { listenAddress: "127.0.0.1:0", enableLifecycle: true }
stateDir: ${dir}/state
targets:
  - name: ${name}
    endpoints: [{ name: router, url: "http://127.0.0.1:9"${token ? `, bearerToken: "${token}"` : ''} }]
`;
}

interface FakeRuntime extends Runtime {
  name: string;
  activated: boolean;
  stopped: boolean;
}

let daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
});

describe('reload and stop', () => {
  it('a reload in flight when stop() is called never activates its runtime, and the runtime is stopped', async () => {
    const file = join(dir, 'race.yaml');
    writeFileSync(file, config('first'));
    const made: FakeRuntime[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let entered: () => void = () => {};
    const inFactory = new Promise<void>((r) => (entered = r));
    const factory: RuntimeFactory = async (loaded, ctx) => {
      const rt: FakeRuntime = {
        name: loaded.config.targets[0]!.name,
        activated: false,
        stopped: false,
        stop: async () => {
          rt.stopped = true;
        },
      };
      if (ctx.previous !== undefined) {
        rt.activate = async () => {
          rt.activated = true;
        };
        entered();
        await gate;
      }
      made.push(rt);
      return rt;
    };
    const d = new Daemon({ configPath: file, logger: capturingLogger().logger, runtimeFactory: factory });
    await d.start();
    writeFileSync(file, config('second'));
    const reloading = d.reload();
    // The config loads asynchronously (in a child process under `run`): stop while the new runtime is being made.
    await inFactory;
    const stopping = d.stop();
    release();
    await stopping;
    const outcome = await reloading;
    expect(outcome.ok).toBe(false);
    expect(made.map((r) => r.name)).toEqual(['first', 'second']);
    expect(made[1]!.activated).toBe(false);
    expect(made.every((r) => r.stopped)).toBe(true);
  });

  it('a reload whose config is still loading when stop() is called makes no runtime', async () => {
    const file = join(dir, 'loading.yaml');
    writeFileSync(file, config('first'));
    const made: string[] = [];
    const factory: RuntimeFactory = async (loaded) => {
      made.push(loaded.config.targets[0]!.name);
      return { stop: async () => {} } as Runtime;
    };
    const d = new Daemon({ configPath: file, logger: capturingLogger().logger, runtimeFactory: factory });
    await d.start();
    writeFileSync(file, config('second'));
    // The config loads asynchronously (a child process under `run`, a dynamic import here): stop() comes first.
    const reloading = d.reload();
    await d.stop();
    expect(await reloading).toEqual({ ok: false, errors: ['the daemon is stopping'] });
    expect(made).toEqual(['first']);
  });

  it('redacts a new secret quoted by a failing runtime factory in the /-/reload answer and the log', async () => {
    const SECRET = 'tok-new-5b1e0c9d77aa';
    const file = join(dir, 'secret.yaml');
    writeFileSync(file, config('first'));
    const factory: RuntimeFactory = async (loaded) => {
      const token = loaded.config.targets[0]!.endpoints[0]!.bearerToken;
      if (token !== undefined) throw new Error(`cannot start: endpoint rejected token ${token}`);
      return { stop: async () => {} };
    };
    const { logger: log, lines } = capturingLogger();
    const d = new Daemon({
      configPath: file,
      logger: log,
      runtimeFactory: factory,
      env: { NEWTOKEN: SECRET },
    });
    daemons.push(d);
    await d.start();
    writeFileSync(file, config('second', '${NEWTOKEN}'));
    const res = await request(`http://${d.address()}/-/reload`, { method: 'POST' });
    const body = await res.body.text();
    expect(res.statusCode).toBe(500);
    expect(body).toContain('endpoint rejected token');
    expect(body).not.toContain(SECRET);
    await waitFor(() => lines.some((l) => l.includes('reload failed to start')), { what: 'failure logged' });
    expect(lines.join('')).not.toContain(SECRET);
  });
});
