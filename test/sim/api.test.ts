// The simulator's HTTP surface as a watchdog sees it: OpenAI stream/non-stream shapes (SGLang serving_chat.py
// _generate_chat_stream), tool calls, router and engine endpoints, sglang:* metrics, AbortReq on disconnect,
// and the control API.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream, post, streamChat } from './client.js';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

type Chunk = { choices: { delta: Record<string, unknown>; finish_reason: string | null }[]; usage?: unknown };

describe('simulator API', () => {
  let sim: Sim;
  beforeAll(async () => {
    sim = await startSim();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('streams a role chunk, content chunks, a separate finish chunk, a usage chunk with choices: [] and [DONE]', async () => {
    const r = await streamChat(
      sim.urls.router,
      chatBody({ max_tokens: 5, stream_options: { include_usage: true } }),
    );
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/event-stream');
    expect(r.done).toBe(true);
    expect(r.raw.endsWith('data: [DONE]\n\n')).toBe(true);
    const ev = r.events as unknown as Chunk[];
    expect(ev[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const content = ev.slice(1, 6).map((e) => e.choices[0]!.delta.content);
    expect(content).toHaveLength(5);
    expect(content.every((c) => typeof c === 'string' && c.length > 0)).toBe(true);
    expect(ev.slice(0, 6).every((e) => e.choices[0]!.finish_reason === null)).toBe(true);
    expect(ev[6]!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(ev[7]!.choices).toEqual([]);
    expect(ev[7]!.usage).toMatchObject({ completion_tokens: 5 });
    expect(ev).toHaveLength(8);
  });

  it('omits the usage chunk without include_usage and answers non-streaming requests', async () => {
    const r = await streamChat(sim.urls.router, chatBody({ max_tokens: 2 }));
    expect(r.events.every((e) => Array.isArray(e.choices) && (e.choices as unknown[]).length === 1)).toBe(
      true,
    );
    const ns = await post(`${sim.urls.router}/v1/chat/completions`, chatBody({ max_tokens: 3 }));
    expect(ns.status).toBe(200);
    const body = JSON.parse(ns.text);
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].message.content).toBe('OK. The');
    expect(body.usage.completion_tokens).toBe(3);
  });

  it('returns tool calls as delta.tool_calls with a call_<24 hex> id and finish_reason tool_calls', async () => {
    const r = await streamChat(sim.urls.router, chatBody({ tools: TOOLS, max_tokens: 16 }));
    const ev = r.events as unknown as Chunk[];
    const calls = ev.flatMap(
      (e) => (e.choices[0]?.delta.tool_calls as Record<string, unknown>[] | undefined) ?? [],
    );
    expect(calls.length).toBeGreaterThan(1);
    const first = calls[0] as { id: string; function: { name: string; arguments: string } };
    expect(first.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(first.function).toEqual({ name: 'get_weather', arguments: '' });
    const args = calls
      .slice(1)
      .map((c) => (c as { id: unknown; function: { arguments: string } }).function.arguments)
      .join('');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(calls.slice(1).every((c) => c.id === null)).toBe(true);
    expect(ev.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(
      ev.some((e) => typeof e.choices[0]?.delta.content === 'string' && e.choices[0].delta.content !== ''),
    ).toBe(false);

    const ns = JSON.parse(
      (await post(`${sim.urls.router}/v1/chat/completions`, chatBody({ tools: TOOLS }))).text,
    );
    expect(ns.choices[0].finish_reason).toBe('tool_calls');
    expect(ns.choices[0].message.content).toBeNull();
    expect(ns.choices[0].message.tool_calls[0].id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(JSON.parse(ns.choices[0].message.tool_calls[0].function.arguments)).toEqual({ city: 'Paris' });
  });

  it('rejects a malformed request with 400', async () => {
    const r = await post(`${sim.urls.router}/v1/chat/completions`, { messages: [] });
    expect(r.status).toBe(400);
    expect(r.text).toContain('messages');
  });

  it('serves router /health, /readiness, /v1/models and engine /health, /get_server_info, /server_info', async () => {
    expect((await get(`${sim.urls.router}/health`)).status).toBe(200);
    const ready = await get(`${sim.urls.router}/readiness`);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', healthy_workers: 2, total_workers: 2 });
    expect(JSON.parse((await get(`${sim.urls.router}/v1/models`)).text).data[0].id).toBe('sim-model');
    for (const engine of [sim.urls.prefill, sim.urls.decode]) {
      expect((await get(`${engine}/health`)).status).toBe(200);
      for (const path of ['/get_server_info', '/server_info']) {
        const info = await get(`${engine}${path}`);
        expect(info.status).toBe(200);
        expect(JSON.parse(info.text).internal_states).toBeInstanceOf(Array);
      }
    }
  });

  it('exports sglang:* metrics; num_requests_total and generation_tokens_total move when requests finish', async () => {
    const read = async () => (await get(`${sim.urls.decode}/metrics`)).text;
    const value = (text: string, name: string) =>
      Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    const before = await read();
    for (const name of [
      'sglang:num_running_reqs',
      'sglang:num_queue_reqs',
      'sglang:gen_throughput',
      'sglang:token_usage',
      'sglang:num_decode_transfer_queue_reqs',
      'sglang:num_requests_total',
      'sglang:generation_tokens_total',
    ]) {
      expect(before).toMatch(new RegExp(`^${name}\\{model_name="sim-model"`, 'm'));
    }
    expect(before).toContain('engine_type="decode"');
    await streamChat(sim.urls.router, chatBody({ max_tokens: 7 }));
    const after = await read();
    expect(value(after, 'sglang:num_requests_total') - value(before, 'sglang:num_requests_total')).toBe(1);
    expect(
      value(after, 'sglang:generation_tokens_total') - value(before, 'sglang:generation_tokens_total'),
    ).toBe(7);
    expect((await get(`${sim.urls.prefill}/metrics`)).text).toContain(
      'sglang:num_prefill_bootstrap_queue_reqs{',
    );
  });

  it('turns a client disconnect mid-stream into AbortReq lines in both engine logs', async () => {
    const s = openStream(sim.urls.router, chatBody({ max_tokens: 500 }));
    await s.firstData;
    const aborted = sim.state().abortedTotal as number;
    s.cut();
    await waitFor(() => (sim.state().abortedTotal as number) > aborted, { what: 'the abort' });
    const line =
      /^\[\S+ \S+ TP0\] (Prefill bootstrap|Decode transfer) failed for request .*: Aborted by AbortReq\.$/m;
    await waitFor(() => line.test(readFileSync(sim.logFiles.prefill, 'utf8')), {
      what: 'prefill AbortReq line',
    });
    expect(readFileSync(sim.logFiles.decode, 'utf8')).toMatch(line);
    // Without the fault, the ABORT frame is handled and the next request completes.
    expect(sim.state().bootstrapThreadAlive).toBe(true);
    expect((await streamChat(sim.urls.router, chatBody())).done).toBe(true);
  });

  it('control API lists, enables and disables faults, restarts services and reports state', async () => {
    const c = sim.urls.control;
    const list = JSON.parse((await get(`${c}/faults`)).text);
    expect(list.available.map((f: { name: string }) => f.name).sort()).toEqual([
      'context_ttft_growth',
      'crash',
      'crawl',
      'decode_stall',
      'grammar_stall',
      'health_503',
      'health_fail',
      'intermittent_hang',
      'keepalive_stall',
      'kv_corruption',
      'kv_transfer_failure',
      'long_prompt_hang',
      'nixl_abort_unhandled',
      'orphaned_requests',
      'pd_half_failed',
      'queue_leak',
      'reasoning_garbage',
      'reasoning_runaway',
      'router_circuit_open',
      'router_stuck',
      'slow',
      'stranded_queue_entry',
      'toolcall_args_corrupt',
      'toolcall_in_reasoning',
      'toolcall_leak',
    ]);
    const on = await post(`${c}/faults/slow`, { factor: 3 });
    expect(on.status).toBe(200);
    expect(JSON.parse((await get(`${c}/state`)).text).faults).toEqual({ slow: { factor: 3 } });
    expect((await post(`${c}/faults/slow`, { factor: 'x' })).status).toBe(400);
    expect((await post(`${c}/faults/nope`, {})).status).toBe(400);
    // keepalive_stall needs the proxy hop, which this simulator does not have.
    const ka = await post(`${c}/faults/keepalive_stall`, {});
    expect(ka.status).toBe(400);
    expect(ka.text).toContain('proxy');
    expect((await send(`${c}/faults/slow`, 'DELETE')).status).toBe(200);
    expect(sim.state().faults).toEqual({});
    expect((await post(`${c}/services/decode/restart`, {})).status).toBe(200);
    expect((await post(`${c}/services/proxy/restart`, {})).status).toBe(404);
    expect((await streamChat(sim.urls.router, chatBody())).done).toBe(true);
  });
});

async function send(url: string, method: string) {
  const res = await fetch(url, { method });
  return { status: res.status, text: await res.text() };
}
