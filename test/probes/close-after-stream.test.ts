// A server that closes the connection after each streamed response (llama-server, issue 38): every probe's
// next request goes over a new connection, the tool-call matrix passes, one cell that fails fails alone with its
// own status, and the timeline's connection labels say what happened.
import { afterEach, describe, expect, it } from 'vitest';
import { runProbe } from '../../src/sources/probes/runner.js';
import type { ConnKind } from '../../src/core/signals.js';
import { startVllmSim, type VllmSim } from '../../src/sim/vllm/index.js';
import { healthyHandler, startServer, type TestServer } from './hostile.js';
import { hop, probe } from './fixtures.js';

let sim: VllmSim | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await sim?.stop();
  await server?.close();
  sim = undefined;
  server = undefined;
});

const count = (lines: string[], re: RegExp) => lines.filter((l) => re.test(l)).length;

async function run(url: string, kind: 'toolcall' | 'chat', conn: ConnKind, extra = {}) {
  const h = hop(url);
  try {
    return await runProbe({
      target: 't',
      model: 'sim-model',
      probe: probe(kind, { timeout: '20s', ...extra }),
      hop: h,
      conn,
      headers: {},
      timeline: true,
    });
  } finally {
    await h.close();
  }
}

describe('a server that closes after each streamed response', () => {
  for (const conn of ['fresh', 'keepalive'] as const) {
    it(`the whole tool-call matrix passes over ${conn}, and the labels match the connections opened`, async () => {
      sim = await startVllmSim({ closeAfterStream: true, engine: { statsIntervalMs: 100 } });
      const { signal, progress } = await run(sim.urls.server, 'toolcall', conn);
      expect(signal.error).toBeUndefined();
      expect(signal.result).toBe('ok');
      const cells = signal.detail?.cells ?? [];
      expect(cells.length).toBeGreaterThan(1);
      expect(cells.every((c) => c.result === 'ok')).toBe(true);
      // The sim dropped the requests written on the sockets it had closed: the path was taken.
      expect(sim.state().droppedOnClosed).toBeGreaterThan(0);
      const lines = progress.lines();
      // Each connection opened is either one the request said was new, or a resend after the server's close.
      expect(count(lines, /\bconnected$/)).toBe(
        count(lines, /\(new connection\)$/) + count(lines, /sent again over a new connection$/),
      );
      // A request that said it reused the connection either got headers on it or was sent again, never
      // an unlabelled new connection.
      expect(count(lines, /sent again over a new connection$/)).toBe(sim.state().droppedOnClosed);
    });
  }

  it('a plain chat run over keepalive passes (the priming request is not streamed, the run goes second)', async () => {
    sim = await startVllmSim({ closeAfterStream: true, engine: { statsIntervalMs: 100 } });
    const h = hop(sim.urls.server);
    try {
      for (let i = 0; i < 3; i++) {
        const { signal } = await runProbe({
          target: 't',
          model: 'sim-model',
          probe: probe('chat', { timeout: '20s' }),
          hop: h,
          conn: 'keepalive',
          headers: {},
        });
        expect(signal.result).toBe('ok');
      }
    } finally {
      await h.close();
    }
  });

  it('one cell whose connection is dropped every time fails alone, with no status of its own', async () => {
    server = await startServer((req, res, body) => {
      if (
        req.url === '/v1/chat/completions' &&
        (JSON.parse(body) as { tool_choice?: unknown }).tool_choice === 'required'
      ) {
        req.socket.destroy();
        return;
      }
      healthyHandler(req, res, body);
    });
    const { signal } = await run(server.url, 'toolcall', 'fresh', { cells: ['auto', 'required', 'named'] });
    expect(signal.result).toBe('bad_response');
    expect(signal.detail?.cells?.map((c) => [c.cell, c.result, c.status])).toEqual([
      ['auto', 'ok', undefined],
      ['required', 'bad_response', undefined],
      ['named', 'ok', undefined],
    ]);
    expect(signal.detail?.cells?.[1]?.error).toMatch(/^connection closed before response headers/);
    // The run's status is the failing cell's (none), not cell 1's HTTP 200.
    expect(signal.status).toBeUndefined();
    expect(signal.error).not.toMatch(/after the headers/);
  });

  it('a refused server fails every cell as connect_error, and so the matrix: the detector reads refused, not bad', async () => {
    // A port that was just free: nothing listens there (a kill -9'd engine).
    server = await startServer(healthyHandler);
    const url = server.url;
    await server.close();
    server = undefined;
    const { signal } = await run(url, 'toolcall', 'fresh', { cells: ['auto', 'none'] });
    expect(signal.result, JSON.stringify(signal)).toBe('connect_error');
    expect(signal.detail?.cells?.map((c) => c.result)).toEqual(['connect_error', 'connect_error']);
    expect(signal.detail?.cells?.[0]?.error).toMatch(/^no connection: .*ECONNREFUSED/);
    // Over keep-alive the priming request meets the refusal first: the run's own connect_error, no cell run.
    const kept = await run(url, 'toolcall', 'keepalive', { cells: ['auto', 'none'] });
    expect(kept.signal.result).toBe('connect_error');
  });

  it('a refused cell beside cells that reached the server is not the matrix result', async () => {
    let refused = false;
    server = await startServer((req, res, body) => {
      if (
        req.url === '/v1/chat/completions' &&
        (JSON.parse(body) as { tool_choice?: unknown }).tool_choice === 'required'
      ) {
        refused = true;
        req.socket.destroy();
        return;
      }
      healthyHandler(req, res, body);
    });
    const { signal } = await run(server.url, 'toolcall', 'fresh', { cells: ['required', 'auto'] });
    expect(refused).toBe(true);
    expect(signal.result).toBe('bad_response');
  });
});
