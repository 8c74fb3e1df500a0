import { afterEach, describe, expect, it } from 'vitest';
import { findToolMarkup } from '../../src/sources/probes/toolcall.js';
import { findMarkup } from '../../src/sources/probes/leak-markup.js';
import { runProbe } from '../../src/sources/probes/runner.js';
import { probeConns } from '../../src/sources/probes/schedule.js';
import {
  chunk,
  healthyHandler,
  sendSse,
  startServer,
  toolStream,
  usageChunk,
  type TestServer,
} from './hostile.js';
import { hop, probe, runOnce } from './fixtures.js';

/** The one-request matrix these single-answer servers can pass (the full matrix is in toolcall-matrix.test.ts). */
const AUTO_ONLY = { probe: { cells: ['auto'] } };

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function serve(...args: Parameters<typeof startServer>) {
  const s = await startServer(...args);
  servers.push(s);
  return s;
}

describe('probe kinds against a healthy server', () => {
  it('chat passes and measures ttft, tokens (from usage) and tokens/s', async () => {
    const s = await serve(healthyHandler);
    const { signal } = await runOnce(s.url, 'chat');
    expect(signal).toMatchObject({ result: 'ok', status: 200, tokens: 3, probeKind: 'chat', conn: 'fresh' });
    expect(signal.ttftMs).toBeGreaterThan(0);
    expect(signal.connectMs).toBeGreaterThan(0);
    expect(signal.headersMs).toBeGreaterThanOrEqual(signal.connectMs!);
    const req = JSON.parse(s.requests[0]!.body);
    expect(req).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 8,
      temperature: 0,
      model: 'm',
    });
    expect(s.requests[0]!.path).toBe('/v1/chat/completions');
  });

  it('chat counts token chunks when there is no usage chunk', async () => {
    const s = await serve((_q, res) =>
      sendSse(res, [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'a' }),
        chunk({ content: 'b' }),
        chunk({}, 'length'),
        'data: [DONE]\n\n',
      ]),
    );
    const { signal } = await runOnce(s.url, 'chat');
    expect(signal).toMatchObject({ result: 'ok', tokens: 2 });
  });

  it('health and serverinfo pass; health checks the expected status', async () => {
    const s = await serve(healthyHandler);
    expect((await runOnce(s.url, 'health')).signal.result).toBe('ok');
    expect((await runOnce(s.url, 'serverinfo')).signal.result).toBe('ok');
    const r = await runOnce(s.url, 'health', { probe: { path: '/nope' } });
    expect(r.signal).toMatchObject({ result: 'http_error', status: 404 });
    expect(s.requests.map((q) => q.path)).toEqual(['/health', '/get_server_info', '/nope']);
  });

  it('toolcall passes with structured tool_calls and valid JSON arguments', async () => {
    const s = await serve(healthyHandler);
    const { signal } = await runOnce(s.url, 'toolcall', AUTO_ONLY);
    expect(signal.result).toBe('ok');
    const req = JSON.parse(s.requests[0]!.body);
    expect(req.tools).toHaveLength(1);
  });

  it('toolcall runs over one fresh connection by default, and its whole matrix goes over it', async () => {
    // One slot per hop: a run's first cell opens the connection and the other seven reuse it, so both kinds are
    // exercised without a second (keep-alive) slot doubling the matrix's completions.
    expect(probeConns(probe('toolcall'))).toEqual(['fresh']);
    expect(probeConns(probe('chat'))).toEqual(['fresh', 'keepalive']);
    const s = await serve(healthyHandler);
    const { signal } = await runOnce(s.url, 'toolcall');
    const cells = (signal.detail as { cells: unknown[] }).cells;
    expect(cells).toHaveLength(8);
    expect(s.requests).toHaveLength(8);
    expect(s.connections).toBe(1);
  });

  it('toolcall: a long healthy answer within the max_tokens it sent (64) is not cut off by the event cap', async () => {
    // 60 argument pieces, one token each: more events than the default maxTokens (8) allows, fewer tokens
    // than the 64 the toolcall probe asks for.
    const pieces = ['{"timezone": "', ...Array.from({ length: 58 }, () => 'U'), '"}'];
    const stream = toolStream('');
    const argChunks = pieces.map((a) =>
      chunk({ tool_calls: [{ id: null, index: 0, function: { name: null, arguments: a } }] }),
    );
    const parts = [
      stream[0]!,
      stream[1]!,
      ...argChunks,
      chunk({}, 'tool_calls'),
      usageChunk(60),
      'data: [DONE]\n\n',
    ];
    const s = await serve((_q, res) => sendSse(res, parts));
    const { signal } = await runOnce(s.url, 'toolcall', AUTO_ONLY);
    expect(JSON.parse(s.requests[0]!.body).max_tokens).toBe(64);
    expect(signal.error).toBeUndefined();
    expect(signal.result).toBe('ok');
  });

  it('toolcall: invalid JSON arguments and a missing call are bad_response', async () => {
    const bad = await serve((_q, res) => sendSse(res, toolStream('{"timezone": ')));
    expect((await runOnce(bad.url, 'toolcall', AUTO_ONLY)).signal).toMatchObject({ result: 'bad_response' });
    const none = await serve((_q, res) =>
      sendSse(res, [chunk({ content: 'It is noon.' }), chunk({}, 'stop'), usageChunk(4), 'data: [DONE]\n\n']),
    );
    const r = (await runOnce(none.url, 'toolcall', AUTO_ONLY)).signal;
    expect(r.result).toBe('bad_response');
    expect(r.error).toMatch(/no tool_calls/);
  });

  const leaks = [
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_current_time">{"timezone":"UTC"}</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
    '<｜DSML｜function_calls><｜DSML｜invoke name="get_current_time"></｜DSML｜invoke></｜DSML｜function_calls>',
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_current_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    '<|DSML|tool_calls><|DSML|invoke name="get_current_time">',
    '<｜｜DSML｜｜tool_calls>',
    '<‖DSML‖invoke name="x">',
  ];
  it.each(leaks)('toolcall classifies leaked markup as toolcall_leak: %s', async (markup) => {
    // The markup arrives split across chunks, as a streaming engine would send it.
    const half = Math.floor(markup.length / 2);
    const s = await serve((_q, res) =>
      sendSse(res, [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: markup.slice(0, half) }),
        chunk({ content: markup.slice(half) }),
        chunk({}, 'stop'),
        usageChunk(30),
        'data: [DONE]\n\n',
      ]),
    );
    const r = (await runOnce(s.url, 'toolcall', AUTO_ONLY)).signal;
    expect(r.result).toBe('toolcall_leak');
  });

  it('markup patterns do not match ordinary text', () => {
    for (const text of [
      'It is 12:00 UTC | noon',
      'tool_calls begin',
      'a ‖ b',
      'use the <tool_call> tag for it',
      'DSML is a format',
      'Call f(x) later',
    ]) {
      expect(findToolMarkup(text)).toBeUndefined();
    }
  });

  it('orphan and unbalanced tags are found: a closing tag alone, an opening tag the text ends on, a special token', () => {
    expect(findMarkup('It is noon.</tool_call>')).toEqual({
      family: 'hermes',
      shape: 'orphan',
      text: '</tool_call>',
    });
    expect(findMarkup('Sure. <tool_call>\n')).toEqual({
      family: 'hermes',
      shape: 'unbalanced',
      text: '<tool_call>',
    });
    expect(findMarkup('done <|END_ACTION|>')).toMatchObject({ family: 'cohere' });
    expect(findMarkup('<|tool_call>call:get_current_time{timezone:<|"|>UTC<|"|>}<tool_call|>')).toMatchObject(
      {
        family: 'gemma4',
        shape: 'call',
      },
    );
    expect(findMarkup('12:00 <tool_call|>')).toMatchObject({ family: 'gemma4' });
  });

  it('an endpoint URL with a path prefix is honoured', async () => {
    const s = await serve((req, res, body) => {
      req.url = req.url?.replace(/^\/prefix/, '');
      healthyHandler(req, res, body);
    });
    const { signal } = await runOnce(`${s.url}/prefix/`, 'chat');
    expect(signal.result).toBe('ok');
    expect(s.requests[0]!.path).toBe('/prefix/v1/chat/completions');
  });
});

describe('connection kinds', () => {
  it('fresh opens one TCP connection per probe; keepalive reuses one', async () => {
    const s = await serve(healthyHandler);
    const h = hop(s.url);
    const p = probe('chat');
    try {
      for (let i = 0; i < 4; i++) {
        const { signal } = await runProbe({
          target: 't',
          model: 'm',
          probe: p,
          hop: h,
          conn: 'fresh',
          headers: {},
        });
        expect(signal).toMatchObject({ result: 'ok', reusedConnection: false });
      }
      expect(s.connections).toBe(4);
      const reused: boolean[] = [];
      const primed: boolean[] = [];
      for (let i = 0; i < 4; i++) {
        const { signal } = await runProbe({
          target: 't',
          model: 'm',
          probe: p,
          hop: h,
          conn: 'keepalive',
          headers: {},
        });
        expect(signal.result).toBe('ok');
        reused.push(signal.reusedConnection!);
        primed.push(signal.primedConnection === true);
      }
      expect(s.connections).toBe(5);
      // The first run opens the connection with a cheap request and goes second on it: every run is a reuse.
      expect(reused).toEqual([true, true, true, true]);
      expect(primed).toEqual([true, false, false, false]);
      expect(s.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('keepalive still reuses a connection when the hop closes idle ones before the next run', async () => {
    const s = await serve(healthyHandler);
    const h = hop(s.url);
    const p = probe('chat');
    // Close every connection between runs, as uvicorn's 5 s idle timeout does at a 15 s cadence.
    const closeIdle = () => h.close();
    try {
      for (let i = 0; i < 3; i++) {
        const run = hop(s.url);
        const { signal } = await runProbe({
          target: 't',
          model: 'm',
          probe: p,
          hop: run,
          conn: 'keepalive',
          headers: {},
        });
        await run.close();
        expect(signal).toMatchObject({ result: 'ok', reusedConnection: true, primedConnection: true });
      }
      expect(s.connections).toBe(3);
      const paths = s.requests.map((r) => r.path);
      expect(paths).toEqual(Array(3).fill(['/v1/models', '/v1/chat/completions']).flat());
    } finally {
      await closeIdle();
    }
  });

  it('keepalive is not a reuse when the hop closes the primed connection', async () => {
    const s = await serve((req, res, body) => {
      if (req.url === '/v1/models') {
        res.setHeader('connection', 'close');
        return void res.end('{"data":[]}');
      }
      healthyHandler(req, res, body);
    });
    const h = hop(s.url);
    try {
      const { signal } = await runProbe({
        target: 't',
        model: 'm',
        probe: probe('chat'),
        hop: h,
        conn: 'keepalive',
        headers: {},
      });
      expect(signal).toMatchObject({ result: 'ok', reusedConnection: false, primedConnection: true });
      expect(s.connections).toBe(2);
    } finally {
      await h.close();
    }
  });
});
