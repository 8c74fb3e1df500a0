// Each hostile behaviour is classified right, and none of them can hold the probe past its timeout.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  chunk,
  goodStream,
  healthyHandler,
  selfSignedCert,
  startServer,
  startTlsServer,
  type TestServer,
} from './hostile.js';
import { hop, probe, runOnce } from './fixtures.js';
import { runProbe } from '../../src/sources/probes/runner.js';
import { waitFor } from '../helpers/wait.js';

let servers: TestServer[] = [];
const timers = new Set<NodeJS.Timeout>();
afterEach(async () => {
  for (const t of timers) clearInterval(t);
  timers.clear();
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function serve(...args: Parameters<typeof startServer>) {
  const s = await startServer(...args);
  servers.push(s);
  return s;
}
const SSE = { 'content-type': 'text/event-stream' };

describe('hostile servers', () => {
  it('never answers: timeout in phase headers', async () => {
    const s = await serve(() => {});
    // 1s: the shortest completion timeout check accepts (issue 24 #15).
    const { signal } = await runOnce(s.url, 'chat', { probe: { timeout: '1s' } });
    expect(signal).toMatchObject({ result: 'timeout', phase: 'headers' });
    expect(signal.error).toMatch(/no response headers within 1000 ms/);
  });

  it('headers then silence: chat times out in first_token, health in stream', async () => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.flushHeaders();
    });
    expect((await runOnce(s.url, 'chat', { probe: { timeout: '1s' } })).signal).toMatchObject({
      result: 'timeout',
      phase: 'first_token',
      status: 200,
    });
    expect((await runOnce(s.url, 'health', { probe: { timeout: '500ms' } })).signal).toMatchObject({
      result: 'timeout',
      phase: 'stream',
    });
  });

  it('first token then silence: timeout in phase stream, with ttft kept', async () => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.write(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'O' }));
    });
    const { signal } = await runOnce(s.url, 'chat', { probe: { timeout: '1s' } });
    expect(signal).toMatchObject({ result: 'timeout', phase: 'stream' });
    expect(signal.ttftMs).toBeGreaterThan(0);
  });

  it('1 byte/s drip: timeout in phase first_token (the first event never completes)', async () => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      const text = goodStream().join('');
      let i = 0;
      res.write(text[i++]);
      const t = setInterval(() => res.write(text[i++] ?? ''), 1000);
      timers.add(t);
      res.on('close', () => clearInterval(t));
    });
    const { signal } = await runOnce(s.url, 'chat', { probe: { timeout: '2500ms' } });
    expect(signal).toMatchObject({ result: 'timeout', phase: 'first_token' });
  });

  it('endless stream of valid chunks: bad_response, and the client stops reading', async () => {
    let closed = false;
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      const t = setInterval(() => res.write(chunk({ content: 'x' })), 1);
      timers.add(t);
      res.on('close', () => {
        closed = true;
        clearInterval(t);
      });
    });
    const { signal } = await runOnce(s.url, 'chat', { probe: { timeout: '20s' } });
    expect(signal.result).toBe('bad_response');
    expect(signal.error).toMatch(/did not finish after \d+ events/);
    await waitFor(() => closed, { what: 'server to see the client go away' });
  });

  it.each([
    ['a non-SSE line', 'hello world\n\n'],
    ['invalid JSON', 'data: {"choices": [\n\n'],
    ['a JSON array', 'data: [1,2]\n\n'],
    ['no [DONE]', chunk({ content: 'a' }) + chunk({}, 'stop')],
    ['no finish_reason', chunk({ content: 'a' }) + 'data: [DONE]\n\n'],
    ['an unterminated event', chunk({ content: 'a' }) + chunk({}, 'stop') + 'data: [DONE]'],
    ['an error chunk', 'data: {"error": {"message": "boom"}}\n\ndata: [DONE]\n\n'],
    ['finish_reason abort', chunk({ content: 'a' }) + chunk({}, 'abort') + 'data: [DONE]\n\n'],
    ['data after [DONE]', goodStream().join('') + chunk({ content: 'late' })],
  ])('malformed SSE (%s): bad_response', async (_what, body) => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.end(body);
    });
    const { signal } = await runOnce(s.url, 'chat');
    expect(signal).toMatchObject({ result: 'bad_response', status: 200 });
    expect(signal.error).toBeTruthy();
  });

  it("names the engine's message from SGLang's streaming error response", async () => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.end(
        'data: {"object": "error", "message": "Request 7 timed out after 300.0s in KVPoll.WaitingForInput", "type": "BadRequestError", "param": null, "code": 400}\n\ndata: [DONE]\n\n',
      );
    });
    const { signal } = await runOnce(s.url, 'chat');
    expect(signal.result).toBe('bad_response');
    expect(signal.error).toBe(
      'error chunk in stream: Request 7 timed out after 300.0s in KVPoll.WaitingForInput',
    );
  });

  it('wrong content type is bad_response; an empty stream or no tokens is empty', async () => {
    const json = await serve((_q, res) => res.end('{"choices":[]}'));
    expect((await runOnce(json.url, 'chat')).signal).toMatchObject({ result: 'bad_response' });
    const blank = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.end();
    });
    expect((await runOnce(blank.url, 'chat')).signal).toMatchObject({ result: 'empty' });
    const noTokens = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.end(chunk({ role: 'assistant', content: '' }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    expect((await runOnce(noTokens.url, 'chat')).signal).toMatchObject({ result: 'empty' });
  });

  it.each([500, 429, 503])('HTTP %i: http_error with the status kept', async (code) => {
    const s = await serve((_q, res) => {
      res.statusCode = code;
      res.end('{"error":{"message":"No available servers"}}');
    });
    const chat = (await runOnce(s.url, 'chat')).signal;
    expect(chat).toMatchObject({ result: 'http_error', status: code });
    expect(chat.error).toContain('No available servers');
    expect((await runOnce(s.url, 'health')).signal).toMatchObject({ result: 'http_error', status: code });
  });

  it('reset mid-stream: bad_response (after headers); reset after accept, before headers: bad_response', async () => {
    const mid = await serve((_q, res) => {
      res.writeHead(200, SSE);
      res.write(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'O' }), () =>
        res.socket?.resetAndDestroy(),
      );
    });
    const r1 = (await runOnce(mid.url, 'chat')).signal;
    expect(r1.result).toBe('bad_response');
    expect(r1.error).toMatch(/connection broke after the headers/);
    // The server accepted the connection and read the request before resetting it: the engine is reachable
    // but broken, which is bad_response; connect_error (read as "refused", i.e. down) is for no connection.
    const early = await serve((req) => req.socket.resetAndDestroy());
    const r2 = (await runOnce(early.url, 'chat')).signal;
    expect(r2.result).toBe('bad_response');
    expect(r2.error).toMatch(/connection closed before response headers/);
  });

  it('a run on closed dispatchers reports connect_error and still clears its timer and cancel listener', async () => {
    const h = hop('http://127.0.0.1:9');
    await h.close();
    const cancel = new AbortController();
    const removed: string[] = [];
    const origRemove = cancel.signal.removeEventListener.bind(cancel.signal);
    type Remove = AbortSignal['removeEventListener'];
    cancel.signal.removeEventListener = ((type: string, ...rest: unknown[]) => {
      removed.push(type);
      (origRemove as (...args: unknown[]) => void)(type, ...rest);
    }) as Remove;
    const cleared = vi.spyOn(globalThis, 'clearTimeout');
    try {
      const { signal } = await runProbe({
        target: 't',
        model: 'm',
        probe: probe('health'),
        hop: h,
        conn: 'fresh',
        headers: {},
        cancel: cancel.signal,
      });
      expect(signal.result).toBe('connect_error');
      expect(signal.error).toMatch(/dispatchers are closed/);
      expect(removed).toEqual(['abort']);
      expect(cleared).toHaveBeenCalled();
    } finally {
      cleared.mockRestore();
    }
  });

  it('connection refused: connect_error', async () => {
    const s = await serve(() => {});
    const url = s.url;
    await s.close();
    servers = [];
    const { signal } = await runOnce(url, 'health');
    expect(signal.result).toBe('connect_error');
    expect(signal.error).toMatch(/ECONNREFUSED/);
  });

  it('50 MB body is capped: bad_response and the server is cut off long before the end', async () => {
    const total = 50 * 1024 * 1024;
    let written = 0;
    let finished = false;
    const block = Buffer.alloc(64 * 1024, 'a');
    const s = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total) });
      const pump = () => {
        while (written < total) {
          written += block.length;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        finished = true;
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const health = (await runOnce(s.url, 'health')).signal;
    expect(health.result).toBe('bad_response');
    expect(health.error).toMatch(/exceeds 65536 bytes/);
    const info = (await runOnce(s.url, 'serverinfo')).signal;
    expect(info.result).toBe('bad_response');
    expect(info.error).toMatch(/exceeds 4194304 bytes/);
    // The server queued at most the cap plus socket buffers before the client hung up.
    expect(finished).toBe(false);
    expect(written).toBeLessThan(total / 2);
  });

  it('50 MB SSE stream is capped for chat too', async () => {
    const s = await serve((_q, res) => {
      res.writeHead(200, SSE);
      // One event that never ends: a single data line growing without a newline.
      res.write('data: ');
      const block = 'x'.repeat(64 * 1024);
      let n = 0;
      const pump = () => {
        while (n++ < 800) if (!res.write(block)) return void res.once('drain', pump);
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const { signal } = await runOnce(s.url, 'chat');
    expect(signal.result).toBe('bad_response');
    expect(signal.error).toMatch(/longer than|exceeds/);
  });
});

describe('TLS', () => {
  it('self-signed: connect_error when verifying, ok with insecureSkipVerify or the CA file', async () => {
    const cert = selfSignedCert();
    try {
      const s = await startTlsServer(healthyHandler, cert);
      servers.push(s);
      const strict = (await runOnce(s.url, 'chat')).signal;
      expect(strict.result).toBe('connect_error');
      expect(strict.error).toMatch(/self[- ]signed|SELF_SIGNED/i);
      const skip = await runOnce(s.url, 'chat', { endpoint: { tls: { insecureSkipVerify: true } } });
      expect(skip.signal.result).toBe('ok');
      const ca = await runOnce(s.url, 'health', { endpoint: { tls: { caFile: cert.certFile } } });
      expect(ca.signal.result).toBe('ok');
      const sni = await runOnce(s.url, 'health', {
        endpoint: { tls: { caFile: cert.certFile, serverName: 'localhost' } },
      });
      expect(sni.signal.result).toBe('ok');
      const wrongName = await runOnce(s.url, 'health', {
        endpoint: { tls: { caFile: cert.certFile, serverName: 'other.example' } },
      });
      expect(wrongName.signal.result).toBe('connect_error');
      expect(s.connections).toBeGreaterThanOrEqual(3);
    } finally {
      cert.cleanup();
    }
  });
});
