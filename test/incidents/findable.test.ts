// A real capture (log window with the NIXL traceback), then every way to find it: the HTTP API with its .tar.gz
// (checked by the system tar), the CLI's list/show/export, and replay over the bundle's log windows.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incidentsSchema, targetSchema } from '../../src/config/schema.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { initialState } from '../../src/core/memory.js';
import { captureIncident } from '../../src/outputs/incidents/capture.js';
import { LogWindows } from '../../src/outputs/incidents/log-window.js';
import { incidentRoutes } from '../../src/outputs/server/incident-routes.js';
import { bootstrapThreadTraceback, httpLine } from '../../src/sim/logfmt.js';
import { runCli } from '../helpers/cli.js';

let dir: string;
let stateDir: string;
let id: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ww-findable-'));
  stateDir = join(dir, 'state');
  const log = join(dir, 'prefill.log');
  const before = `${httpLine(new Date(), 'INFO:     127.0.0.1:40001 - "GET /health HTTP/1.1" 200 OK')}\n`;
  writeFileSync(log, before + bootstrapThreadTraceback(1).join('\n') + '\n');
  const windows = new LogWindows();
  const t = Date.now();
  windows.noteRead('prefill', log, 0, t - 60_000);
  windows.noteMatch({
    kind: 'log',
    target: 't',
    service: 'prefill',
    rule: 'nixl_bootstrap_thread_died',
    class: 'kv_bootstrap_dead',
    severity: 'critical',
    line: bootstrapThreadTraceback(1)[0]!,
    file: log,
    offset: Buffer.byteLength(before),
    time: t,
    fields: {},
  });
  const s = {
    ...initialState('t', t - 1000),
    state: 'wedged' as const,
    diagnosis: 'kv_bootstrap_thread_dead',
  };
  const out = await captureIncident(
    {
      target: targetSchema.parse({ name: 't', endpoints: [{ name: 'router', url: 'http://127.0.0.1:9' }] }),
      config: incidentsSchema.parse({}),
      stateDir,
      windows,
      journal: new Journal({ logger: pino({ level: 'silent' }) }),
      status: () => ({ targets: [] }),
      redact: (x) => x,
    },
    s,
  );
  expect(out.result).toBe('captured');
  id = out.id!;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('finding a bundle', () => {
  it('GET /api/incidents, /api/incidents/:id, its files and its .tar.gz', async () => {
    const app = Fastify();
    await app.register(incidentRoutes({ stateDir: () => stateDir }));
    const list = (await app.inject('/api/incidents')).json() as {
      incidents: Array<{ id: string; url: string }>;
    };
    expect(list.incidents.map((i) => i.id)).toEqual([id]);
    expect((await app.inject('/api/incidents?target=other')).json()).toEqual({ incidents: [] });
    const one = (await app.inject(list.incidents[0]!.url)).json() as {
      manifest: {
        diagnosis: string;
        logs: Array<{ path: string; marks: Array<{ line: number; trigger: boolean }> }>;
      };
      files: Array<{ path: string }>;
    };
    expect(one.manifest.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(one.manifest.logs[0]!.marks[0]).toMatchObject({ line: 2, trigger: true });
    expect(one.files.map((f) => f.path)).toContain('logs/prefill.log');
    const file = await app.inject(`/api/incidents/${id}/files/logs/prefill.log`);
    expect(file.body).toContain('(bootstrap_thread):');
    for (const bad of [
      `/api/incidents/${id}/files/../../etc/passwd`,
      '/api/incidents/..%2F..',
      '/api/incidents/nope.tar.gz',
    ])
      expect((await app.inject(bad)).statusCode).toBe(404);

    const tgz = await app.inject(`/api/incidents/${id}.tar.gz`);
    expect(tgz.statusCode).toBe(200);
    expect(tgz.headers['content-type']).toBe('application/gzip');
    const archive = join(dir, 'api.tar.gz');
    writeFileSync(archive, tgz.rawPayload);
    const listing = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }).trim().split('\n');
    expect(listing).toContain(`${id}/manifest.json`);
    expect(listing).toContain(`${id}/logs/prefill.log`);
    const out = join(dir, 'untar');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archive, '-C', out]);
    expect(readFileSync(join(out, id, 'logs/prefill.log'))).toEqual(
      readFileSync(join(stateDir, 'incidents', id, 'logs/prefill.log')),
    );
    await app.close();
  });

  it('wedgewatch incidents list|show|export and replay over the bundle', async () => {
    const list = await runCli(['incidents', 'list', '--state-dir', stateDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`${id}  wedged/kv_bootstrap_thread_dead  captured`);
    const show = await runCli(['incidents', 'show', id, '--state-dir', stateDir]);
    expect(show.stdout).toContain('logs/prefill.log:2  TRIGGER nixl_bootstrap_thread_died');
    const missing = await runCli(['incidents', 'show', 'nope', '--state-dir', stateDir]);
    expect(missing.code).toBe(2);
    const archive = join(dir, 'cli.tar.gz');
    const exp = await runCli(['incidents', 'export', id, '--state-dir', stateDir, '-o', archive]);
    expect(exp.code).toBe(0);
    expect(execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' })).toContain(`${id}/logs/prefill.log`);
    const replay = await runCli([
      'replay',
      '--pack',
      'nixl',
      '--pack',
      'python',
      join(stateDir, 'incidents', id),
    ]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/critical\s+\S+/);
    expect(replay.stdout).toContain('service="prefill"');
  }, 60_000);
});
