// Each fault's observable behaviour, over real sockets, as a watchdog would see it.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Client as UndiciClient } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startSim, type Sim, type SimOptions } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream, parseSse, post, streamChat, tokensIn } from './client.js';

let sim: Sim | undefined;
const start = async (opts: SimOptions) => (sim = await startSim(opts));
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const TRACEBACK_TAIL = [
  '    waiting_req_bytes[0] == GUARD',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
].join('\n');

async function refused(url: string): Promise<boolean> {
  try {
    await get(url, { timeoutMs: 2000 });
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

describe('nixl_abort_unhandled', () => {
  it('one aborted stream kills the bootstrap thread; /health stays 200 while completions get no token; timeouts follow; a prefill restart clears it', async () => {
    const s = await start({
      faults: ['nixl_abort_unhandled'],
      waitingTimeoutMs: 2500,
      bootstrapTimeoutMs: 2000,
    });
    const first = openStream(s.urls.router, chatBody({ max_tokens: 500 }));
    await first.firstData;
    first.cut();
    await waitFor(() => !s.state().bootstrapThreadAlive, { what: 'bootstrap thread death' });
    const prefillLog = readFileSync(s.logFiles.prefill, 'utf8');
    expect(prefillLog).toMatch(
      /^Exception in thread Thread-\d+ \(bootstrap_thread\):\nTraceback \(most recent call last\):\n/m,
    );
    expect(prefillLog).toContain(TRACEBACK_TAIL);
    expect(prefillLog).toContain('Aborted by AbortReq.');

    const stuck = openStream(s.urls.router, chatBody());
    expect(await stuck.headers).toBe(200);
    for (const url of [s.urls.router, s.urls.prefill, s.urls.decode]) {
      expect((await get(`${url}/health`)).status).toBe(200);
    }
    await waitFor(() => s.state().decodeTransferQueue === 1, { what: 'the request waiting for KV' });
    const gauges = (await get(`${s.urls.decode}/metrics`)).text;
    expect(gauges).toMatch(/^sglang:num_decode_transfer_queue_reqs\{.*\} 1\.0$/m);
    expect(tokensIn(stuck.raw)).toBe(0);

    // After the waiting timeout the client gets an error and both engines log the real timeout lines.
    await waitFor(() => stuck.ended, { timeoutMs: 8000, what: 'the stuck stream to end' });
    expect(tokensIn(stuck.raw)).toBe(0);
    const { events, done } = parseSse(stuck.raw);
    expect(done).toBe(true);
    expect(String(events.at(-1)?.message)).toMatch(/timed out after \d+\.\ds in KVPoll\.WaitingForInput/);
    const decodeLog = readFileSync(s.logFiles.decode, 'utf8');
    expect(decodeLog).toContain(
      'Some requests fail to receive KV Cache transfer done signal after bootstrapping.',
    );
    expect(decodeLog).toMatch(
      /Decode transfer failed for request rank=0 decode_req\.req\.rid='[0-9a-f]{32}' decode_req\.req\.bootstrap_room=\d+ with exception KVTransferError\(bootstrap_room=\d+\): Request \d+ timed out after \d+\.\ds in KVPoll\.WaitingForInput/,
    );
    await waitFor(() => /KVPoll\.Bootstrapping$/m.test(readFileSync(s.logFiles.prefill, 'utf8')), {
      what: 'the prefill bootstrap timeout line',
    });
    expect(readFileSync(s.logFiles.prefill, 'utf8')).toContain('Some requests timed out when bootstrapping');

    await s.restart('prefill');
    expect(s.state().bootstrapThreadAlive).toBe(true);
    const ok = await streamChat(s.urls.router, chatBody());
    expect(ok.done).toBe(true);
    expect(tokensIn(ok.raw)).toBe(4);
  });
});

describe('decode_stall', () => {
  it('stops tokens, batch lines and gauges; get_server_info blocks on decode only; disabling resumes', async () => {
    const s = await start({ healthGenerateTimeoutMs: 300 });
    const long = openStream(s.urls.router, chatBody({ max_tokens: 100_000 }));
    await waitFor(() => /Decode batch, #running-req: 1,/.test(readFileSync(s.logFiles.decode, 'utf8')), {
      what: 'a decode batch line',
    });
    s.enableFault('decode_stall');
    const batchLines = () => readFileSync(s.logFiles.decode, 'utf8').match(/Decode batch/g)?.length ?? 0;
    const linesAtStall = batchLines();
    const metricsAtStall = (await get(`${s.urls.decode}/metrics`)).text;
    const tokensAtStall = s.state().generatedTokensTotal;
    expect(metricsAtStall).toMatch(/^sglang:num_running_reqs\{.*\} 1\.0$/m);

    await expect(get(`${s.urls.decode}/get_server_info`, { timeoutMs: 1000 })).rejects.toThrow(
      /no full response/,
    );
    expect((await get(`${s.urls.prefill}/get_server_info`, { timeoutMs: 1000 })).status).toBe(200);
    expect((await get(`${s.urls.decode}/health`)).status).toBe(200);
    // health_generate runs a 1-token generation through the stuck scheduler: 503 after its timeout.
    expect((await get(`${s.urls.decode}/health_generate`, { timeoutMs: 5000 })).status).toBe(503);
    expect(readFileSync(s.logFiles.decode, 'utf8')).toMatch(
      /^\[[\d-]+ [\d:]+\] Health check failed\. Server couldn't get a response from detokenizer for last 1 seconds\. tic start time: \d\d:\d\d:\d\d\. last_heartbeat time: \d\d:\d\d:\d\d$/m,
    );
    expect((await get(`${s.urls.prefill}/health_generate`, { timeoutMs: 1000 })).status).toBe(200);
    const fresh = openStream(s.urls.router, chatBody());
    expect(await fresh.headers).toBe(200);
    const pendingInfo = get(`${s.urls.decode}/server_info`, { timeoutMs: 10_000 });
    await expect(get(`${s.urls.decode}/get_server_info`, { timeoutMs: 500 })).rejects.toThrow();
    expect(s.state().generatedTokensTotal).toBe(tokensAtStall);
    expect(batchLines()).toBe(linesAtStall);
    expect((await get(`${s.urls.decode}/metrics`)).text).toBe(metricsAtStall);
    expect(tokensIn(fresh.raw)).toBe(0);

    s.disableFault('decode_stall');
    expect((await pendingInfo).status).toBe(200);
    expect((await get(`${s.urls.decode}/health_generate`, { timeoutMs: 1000 })).status).toBe(200);
    await waitFor(() => fresh.ended, { what: 'the queued request to finish' });
    expect(tokensIn(fresh.raw)).toBe(4);
    await waitFor(() => batchLines() > linesAtStall, { what: 'batch lines again' });
    long.cut();
  });
});

describe('decode_stall with a client disconnect', () => {
  it('holds the AbortReq (no log line, no ABORT frame) until the scheduler runs again', async () => {
    const s = await start({ faults: ['nixl_abort_unhandled'] });
    const long = openStream(s.urls.router, chatBody({ max_tokens: 100_000 }));
    await long.firstData;
    s.enableFault('decode_stall');
    long.cut();
    await waitFor(() => s.state().decodePendingAborts === 1, { what: 'the AbortReq to reach decode' });
    expect(readFileSync(s.logFiles.decode, 'utf8')).not.toContain('Aborted by AbortReq.');
    expect(s.state().bootstrapThreadAlive).toBe(true);
    expect(s.state().abortedTotal).toBe(0);

    s.disableFault('decode_stall');
    await waitFor(() => readFileSync(s.logFiles.decode, 'utf8').includes('Aborted by AbortReq.'), {
      what: 'the abort to be handled after the stall',
    });
    // The ABORT frame goes out only now, and this fault's bootstrap thread dies of it.
    await waitFor(() => !s.state().bootstrapThreadAlive, { what: 'the ABORT frame after the stall' });
    expect(s.state().decodePendingAborts).toBe(0);
  });
});

describe('keepalive_stall', () => {
  it('enables the proxy hop and stalls only reused connections; disabling releases them', async () => {
    const s = await start({ faults: ['keepalive_stall'] });
    expect(s.urls.proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const reused: boolean[] = [];
      const viaAgent = (timeoutMs: number) =>
        new Promise<number>((resolve, reject) => {
          const body = JSON.stringify(chatBody());
          const req = request(`${s.urls.proxy}/v1/chat/completions`, {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          });
          req.on('socket', () => reused.push(req.reusedSocket));
          const t = setTimeout(() => reject(new Error('stalled')), timeoutMs);
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => {
              clearTimeout(t);
              resolve(res.statusCode ?? 0);
            });
          });
          req.on('error', reject);
          req.end(body);
        });
      expect(await viaAgent(5000)).toBe(200);
      const second = viaAgent(10_000);
      await waitFor(() => s.events().some((e) => e.kind === 'stall'), {
        what: 'the proxy to hold a reused request',
      });
      // A fresh connection through the same proxy is served meanwhile.
      expect(
        (await post(`${s.urls.proxy}/v1/chat/completions`, chatBody(), { timeoutMs: 5000 })).status,
      ).toBe(200);
      expect((await get(`${s.urls.proxy}/health`)).status).toBe(200);
      expect(reused).toEqual([false, true]);
      s.disableFault('keepalive_stall');
      expect(await second).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});

describe('toolcall_leak', () => {
  it('puts DSML markup in content with no tool_calls and finish_reason stop', async () => {
    const s = await start({ faults: ['toolcall_leak'] });
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const r = await streamChat(s.urls.router, chatBody({ tools }));
    const deltas = r.events.map((e) => (e.choices as { delta: Record<string, unknown> }[])[0]?.delta ?? {});
    const content = deltas.map((d) => (typeof d.content === 'string' ? d.content : '')).join('');
    expect(content).toContain('<｜DSML｜function_calls>');
    expect(content).toContain('<｜DSML｜invoke name="get_weather">');
    expect(content).toContain('<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>');
    expect(deltas.some((d) => d.tool_calls)).toBe(false);
    expect((r.events.at(-1)!.choices as { finish_reason: string }[])[0]!.finish_reason).toBe('stop');
    const ns = JSON.parse((await post(`${s.urls.router}/v1/chat/completions`, chatBody({ tools }))).text);
    expect(ns.choices[0].message.tool_calls).toBeNull();
    expect(ns.choices[0].message.content).toMatch(/^<｜DSML｜function_calls>/);
  });
});

describe('slow', () => {
  it('multiplies the decode step time', async () => {
    const s = await start({});
    const timeFor = async () => {
      const t = performance.now();
      await post(`${s.urls.router}/v1/chat/completions`, chatBody({ max_tokens: 30 }));
      return performance.now() - t;
    };
    const normal = await timeFor();
    s.enableFault('slow', { factor: 6 });
    const slowed = await timeFor();
    expect(slowed / normal).toBeGreaterThan(2.5);
  });
});

describe('crash', () => {
  it("closes the service's port; the router answers 503 for a crashed engine; restart brings it back", async () => {
    const s = await start({ proxy: true });
    s.enableFault('crash', { service: 'decode' });
    await waitFor(() => refused(`${s.urls.decode}/health`), { what: 'the decode port to close' });
    expect((await get(`${s.urls.router}/health`)).status).toBe(200);
    expect((await get(`${s.urls.router}/readiness`)).status).toBe(503);
    const r = await post(`${s.urls.router}/v1/chat/completions`, chatBody());
    expect(r.status).toBe(503);
    expect(r.text).toContain('server_selection_failed');
    await s.restart('decode');
    expect((await get(`${s.urls.decode}/health`)).status).toBe(200);
    expect(s.state().faults).toEqual({});
    expect((await streamChat(s.urls.router, chatBody())).done).toBe(true);

    s.enableFault('crash', { service: 'router' });
    await waitFor(() => refused(`${s.urls.router}/health`), { what: 'the router port to close' });
    expect((await get(`${s.urls.proxy}/health`)).status).toBe(502);
    s.disableFault('crash');
    await waitFor(async () => (await get(`${s.urls.router}/health`)).status === 200, {
      what: 'the router back',
    });
  });
});

describe('health_fail', () => {
  it("makes one service's /health 503 while completions still work", async () => {
    const s = await start({ faults: [{ name: 'health_fail', params: { service: 'decode' } }] });
    expect((await get(`${s.urls.decode}/health`)).status).toBe(503);
    expect((await get(`${s.urls.prefill}/health`)).status).toBe(200);
    expect((await get(`${s.urls.router}/health`)).status).toBe(200);
    expect((await streamChat(s.urls.router, chatBody())).done).toBe(true);
    s.disableFault('health_fail');
    expect((await get(`${s.urls.decode}/health`)).status).toBe(200);
  });

  it('service=proxy makes the proxy answer its own /health 503 and needs the proxy hop', async () => {
    const s = await start({ proxy: true });
    s.enableFault('health_fail', { service: 'proxy' });
    expect((await get(`${s.urls.proxy!}/health`)).status).toBe(503);
    expect((await get(`${s.urls.router}/health`)).status).toBe(200);
    expect((await streamChat(s.urls.proxy!, chatBody())).done).toBe(true);
    s.disableFault('health_fail');
    expect((await get(`${s.urls.proxy!}/health`)).status).toBe(200);
    await s.stop();
    sim = undefined;

    const bare = await start({});
    expect(() => bare.enableFault('health_fail', { service: 'proxy' })).toThrow(/without the proxy hop/);
  });
});

describe('context_ttft_growth', () => {
  // A prompt of about `ktok` thousand tokens (the simulator counts 8 + chars/4).
  const longBody = (ktok: number) =>
    JSON.stringify(
      chatBody({ messages: [{ role: 'user', content: 'x'.repeat(ktok * 4000) }], stream: true }),
    );
  /** One streamed chat over `client`; resolves with the time to its first body bytes (ms) once it ends. */
  async function timedChat(client: UndiciClient, body: string, signal?: AbortSignal): Promise<number> {
    const t0 = performance.now();
    const res = await client.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body,
      signal,
    });
    let first = NaN;
    for await (const _chunk of res.body) if (Number.isNaN(first)) first = performance.now() - t0;
    expect(res.statusCode).toBe(200);
    return first;
  }

  it('delays the first token by the prompt length on a reused connection only', async () => {
    const s = await start({ faults: [{ name: 'context_ttft_growth', params: { ms_per_ktok: 500 } }] });
    const reused = new UndiciClient(s.urls.router, { pipelining: 1 });
    try {
      // The first request on a connection is fresh: no added wait even for a 4k-token prompt.
      const fresh = await timedChat(reused, longBody(4));
      const again = await timedChat(reused, longBody(4));
      const short = await timedChat(reused, longBody(0));
      // 4k tokens at 500 ms per 1k: at least 2 s on the reused connection (a timer's floor, never early).
      expect(again).toBeGreaterThanOrEqual(2000);
      expect(again - fresh).toBeGreaterThan(1000);
      expect(again - short).toBeGreaterThan(1000);
    } finally {
      await reused.close();
    }
  });

  it('through the proxy hop: a fresh client connection is served, a reused one past hang_ktok hangs until disabled', async () => {
    const s = await start({
      proxy: true,
      faults: [{ name: 'context_ttft_growth', params: { ms_per_ktok: 0, hang_ktok: 2 } }],
    });
    const warm = new UndiciClient(s.urls.proxy!, { pipelining: 1 });
    const other = new UndiciClient(s.urls.proxy!, { pipelining: 1 });
    try {
      await timedChat(warm, longBody(0));
      // The proxy's pooled upstream socket is reused here, the client's connection is not: served.
      expect(Number.isFinite(await timedChat(other, longBody(3)))).toBe(true);
      const ac = new AbortController();
      let settled = false;
      const hung = timedChat(warm, longBody(3), ac.signal).finally(() => (settled = true));
      await waitFor(() => s.state().running === 0 && s.state().finishedTotal === 2, {
        what: 'the first two requests to finish',
      });
      // A short prompt on a third (reused) connection still runs while the long one is held before the scheduler.
      expect(Number.isFinite(await timedChat(other, longBody(0)))).toBe(true);
      expect(settled).toBe(false);
      s.disableFault('context_ttft_growth');
      expect(Number.isFinite(await hung)).toBe(true);
    } finally {
      await warm.close();
      await other.close();
    }
  });

  it('refuses bad params', async () => {
    await expect(
      startSim({ faults: [{ name: 'context_ttft_growth', params: { ms_per_ktok: -1 } }] }),
    ).rejects.toThrow(/ms_per_ktok/);
  });
});
