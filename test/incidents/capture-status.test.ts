// A capture's engine fetches count only a 2xx as the endpoint's answer: a 302 (or any non-2xx) is a failed
// piece whose record names the status, and the capture is partial, not captured.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incidentsSchema, targetSchema } from '../../src/config/schema.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { initialState } from '../../src/core/memory.js';
import { captureIncident } from '../../src/outputs/incidents/capture.js';
import { LogWindows } from '../../src/outputs/incidents/log-window.js';
import type { IncidentManifest } from '../../src/outputs/incidents/manifest.js';

let dir: string;
let server: Server | undefined;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-capture-status-'))));
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function serve(status: number, headers: Record<string, string> = {}): Promise<string> {
  server = createServer((_q, res) => {
    res.writeHead(status, headers);
    res.end('<html>moved</html>');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function capture(base: string) {
  const stateDir = join(dir, 'state');
  const t = Date.now();
  const out = await captureIncident(
    {
      target: targetSchema.parse({
        name: 't',
        endpoints: [{ name: 'router', url: base }],
        engines: [{ service: 'decode', metrics: `${base}/metrics` }],
      }),
      config: incidentsSchema.parse({}),
      stateDir,
      windows: new LogWindows(),
      journal: new Journal({ logger: pino({ level: 'silent' }) }),
      status: () => ({ targets: [] }),
      redact: (x) => x,
    },
    { ...initialState('t', t - 1000), state: 'wedged' as const },
  );
  const manifest = JSON.parse(readFileSync(join(out.dir!, 'manifest.json'), 'utf8')) as IncidentManifest;
  return { out, engine: manifest.pieces.filter((p) => p.kind === 'engine') };
}

describe('capture fetch status', () => {
  it('a 302 from the engine is a failed piece that names the status, and the capture is partial', async () => {
    const base = await serve(302, { location: 'http://127.0.0.1:1/elsewhere' });
    const { out, engine } = await capture(base);
    expect(engine.map((p) => p.name).sort()).toEqual(['decode /get_server_info', 'decode /metrics']);
    for (const p of engine) {
      expect(p.status).toBe('error');
      expect(p.detail).toMatch(/^HTTP 302 \(Location: http:\/\/127\.0\.0\.1:1\/elsewhere\)/);
      expect(p.files).toEqual([]);
    }
    expect(out.result).toBe('partial');
  });

  it('a 204 is an answer (2xx); a 304 is not', async () => {
    const ok = await capture(await serve(204));
    expect(ok.engine.map((p) => p.status)).toEqual(['ok', 'ok']);
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const bad = await capture(await serve(304));
    expect(bad.engine.map((p) => [p.status, p.detail?.slice(0, 8)])).toEqual([
      ['error', 'HTTP 304'],
      ['error', 'HTTP 304'],
    ]);
  });
});
