// src/lib/http/undici.ts takes Agent, Client and Pool from undici's own files instead of its index (which also loads
// fetch, WebSocket and the caches): these tests pin that the deep paths still resolve to working dispatchers with
// the index's request API, and that loading them leaves the index's extra modules unloaded.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import * as Index from 'undici';
import { Agent, Client, Pool, request } from '../../src/lib/http/undici.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** An HTTP server on 127.0.0.1 that answers each request with its method, URL and body. */
async function echo(): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, body })));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

describe('undici from its own files', () => {
  it('are the same classes the index exports', () => {
    expect(Agent).toBe(Index.Agent);
    expect(Client).toBe(Index.Client);
    expect(Pool).toBe(Index.Pool);
  });

  it('request() splits the URL into origin and path (query kept), GET unless told', async () => {
    const base = await echo();
    const agent = new Agent();
    try {
      const get = await request(`${base}/metrics?x=1`, { dispatcher: agent });
      expect(get.statusCode).toBe(200);
      expect(await get.body.json()).toEqual({ method: 'GET', url: '/metrics?x=1', body: '' });
      const post = await request(new URL(`${base}/v1/chat`), {
        dispatcher: agent,
        method: 'POST',
        body: 'hi',
      });
      expect(await post.body.json()).toEqual({ method: 'POST', url: '/v1/chat', body: 'hi' });
    } finally {
      await agent.close();
    }
  });

  it('Client and Pool have the request API (undici mixes it into Dispatcher.prototype)', async () => {
    const base = await echo();
    const client = new Client(base);
    const pool = new Pool(base, { connections: 1 });
    try {
      const a = await client.request({ path: '/a', method: 'GET' });
      expect(await a.body.json()).toMatchObject({ url: '/a' });
      const b = await pool.request({ path: '/b', method: 'GET' });
      expect(await b.body.json()).toMatchObject({ url: '/b' });
    } finally {
      await client.close();
      await pool.close();
    }
  });

  it('loading them leaves undici’s index, fetch and WebSocket unloaded', () => {
    const mod = fileURLToPath(new URL('../../dist/lib/http/undici.js', import.meta.url));
    const script = `import { createRequire } from 'node:module';
await import(${JSON.stringify(mod)});
console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const loaded = JSON.parse(r.stdout) as string[];
    expect(loaded.some((f) => /undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/.test(f))).toBe(true);
    expect(loaded.filter((f) => /undici[\\/](index\.js$|lib[\\/](web|cache|mock)[\\/])/.test(f))).toEqual([]);
  });
});
