// The vLLM V1 API server simulator (`sim --engine vllm`): its endpoints, its log format (process prefixes,
// `\r`-framed records, the stats line, uvicorn access lines), its vllm:* metrics as the engine mapping reads
// them, and each vLLM fault replayed through the built-in packs: a healthy run is silent, engine core death is
// critical, a shared-memory broadcast hang is a warning.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { vllmMapping } from '../../src/sources/engines/mappings/vllm.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import { faultHelp } from '../../src/sim/faults/help.js';
import { startSim } from '../../src/sim/index.js';
import { startVllmSim, type VllmSim } from '../../src/sim/vllm/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream, post, streamChat } from './client.js';

let sim: VllmSim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const FAST = { statsIntervalMs: 100 };
const logText = () => readFileSync(sim!.logFiles.server, 'utf8');
const replay = () => replayFiles({ files: [sim!.logFiles.server], packs: [...LOG_PACKS] }).events;
const PREFIX = String.raw`\((?:APIServer|EngineCore_DP0) pid=\d+\) `;
const STAMP = String.raw`\d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+\.py:\d+\] `;
const HEADER = `(?:DEBUG|INFO|WARNING|ERROR) ${STAMP}`;

describe('vLLM simulator', () => {
  it('healthy: answers canaries, serves /v1/models /health /load /metrics, logs in vLLM format, replays silent', async () => {
    sim = await startVllmSim({ engine: FAST });
    const url = sim.urls.server;
    const streamed = await streamChat(
      url,
      chatBody({ messages: [{ role: 'user', content: 'What is 2 + 3?' }] }),
    );
    expect(streamed.status).toBe(200);
    expect(streamed.done).toBe(true);
    const text = streamed.events
      .map((e) => (e.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('5');
    const plain = await post(`${url}/v1/chat/completions`, {
      ...chatBody({ max_tokens: 20 }),
      messages: [{ role: 'user', content: 'Repeat exactly: K7QZ' }],
    });
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.text).choices[0].message.content).toBe('K7QZ');
    expect((await get(`${url}/health`)).status).toBe(200);
    expect(JSON.parse((await get(`${url}/load`)).text)).toEqual({ server_load: 0 });
    expect(JSON.parse((await get(`${url}/v1/models`)).text).data[0]).toMatchObject({
      id: 'sim-model',
      owned_by: 'vllm',
    });
    const metricsText = (await get(`${url}/metrics`)).text;
    expect(metricsText).toContain(
      'vllm:request_success_total{model_name="sim-model",engine="0",finished_reason="stop"} 2.0',
    );
    const fields = vllmMapping.map(parsePrometheusText(metricsText).samples);
    expect(fields).toMatchObject({ running: 0, queued: 0, finishedTotal: 2, abortedTotal: 0 });
    expect(fields.generatedTokensTotal).toBeGreaterThan(0);

    // The stats line is printed at INFO for the interval that saw tokens (and the next), then drops to DEBUG.
    await waitFor(() => /Engine 000: Avg prompt throughput/.test(logText()), { what: 'a stats line' });
    const lines = logText()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.find((l) => l.includes('Engine 000:'))).toMatch(
      new RegExp(
        `^${PREFIX}${HEADER}Engine 000: Avg prompt throughput: \\d+\\.\\d tokens/s, Avg generation throughput: \\d+\\.\\d tokens/s, Running: \\d+ reqs, Waiting: \\d+ reqs, GPU KV cache usage: \\d+\\.\\d%, Prefix cache hit rate: \\d+\\.\\d%$`,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\(APIServer pid=\d+\) INFO: {5}127\.0\.0\.1:\d+ - "GET \/health HTTP\/1\.1" 200 OK$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${PREFIX}${HEADER}Initializing a V1 LLM engine`)),
    );
    expect(replay()).toEqual([]);
  });

  it('engine_core_death (keep_alive=1): fatal traceback in \\r-framed records, 500s, /health 503; replay is critical engine_death', async () => {
    sim = await startVllmSim({ engine: FAST });
    const url = sim.urls.server;
    const inflight = openStream(url, chatBody({ max_tokens: 100_000 }));
    await inflight.firstData;
    sim.enableFault('engine_core_death', { keep_alive: 1 });
    await waitFor(() => inflight.ended, { what: 'the in-flight stream to end' });
    expect(inflight.raw).toContain('EngineCore encountered an issue');
    expect((await get(`${url}/health`)).status).toBe(503);
    const r = await post(`${url}/v1/chat/completions`, chatBody());
    expect(r.status).toBe(500);
    // Kept alive: the port still answers after the failed request.
    expect((await get(`${url}/health`)).status).toBe(503);

    const raw = logText();
    const fatal = raw.split('\n').filter((l) => l.includes('[core.py:868]'));
    expect(fatal[0]).toMatch(
      new RegExp(`^\\(EngineCore_DP0 pid=\\d+\\) ERROR ${STAMP}EngineCore encountered a fatal error\\.\\r$`),
    );
    // Every line of the record carries both prefixes; all but the last end in \r (NewLineFormatter).
    expect(fatal.slice(0, -1).every((l) => l.endsWith('\r'))).toBe(true);
    expect(fatal.at(-1)).toMatch(/\] RuntimeError: Worker failed with error .*[^\r]$/);
    expect(raw).toMatch(
      /\(APIServer pid=\d+\) ERROR .*\[async_llm\.py:\d+\] vllm\.v1\.engine\.exceptions\.EngineDeadError: /,
    );

    const events = replay();
    const critical = events.filter((e) => e.severity === 'critical');
    expect(critical.length).toBeGreaterThan(0);
    expect(new Set(critical.map((e) => e.class))).toEqual(new Set(['engine_death']));
    const core = critical.find((e) => e.rule === 'vllm_engine_core_fatal');
    expect(core?.fields.exception).toBe('RuntimeError');
    // The test's own two GET /health → 503 are the only warning: the engine said it is unhealthy.
    const warnings = events.filter((e) => e.severity === 'warning');
    expect(new Set(warnings.map((e) => e.rule))).toEqual(new Set(['python_health_503']));
  });

  it('engine_core_death (default): the API server exits after the watchdog interval and the port closes', async () => {
    sim = await startVllmSim({ engine: FAST, watchdogMs: 200 });
    sim.enableFault('engine_core_death');
    await waitFor(() => sim!.state().up === false, { what: 'the API server to exit' });
    await expect(get(`${sim.urls.server}/health`, { timeoutMs: 2000 })).rejects.toThrow();
    expect(logText()).toMatch(/\(APIServer pid=(\d+)\) INFO: {5}Finished server process \[\d+\]/);
    // Restarting (the container) brings a fresh engine core back.
    await sim.restart();
    expect((await get(`${sim.urls.server}/health`)).status).toBe(200);
    expect((await streamChat(sim.urls.server, chatBody())).done).toBe(true);
  });

  it('shm_broadcast_hang: requests hang, the wait line repeats, gauges freeze, /health 200; replay warns only', async () => {
    sim = await startVllmSim({ engine: FAST });
    const url = sim.urls.server;
    const stuck = openStream(url, chatBody({ max_tokens: 100_000 }));
    await stuck.firstData;
    sim.enableFault('shm_broadcast_hang', { interval: 1 });
    const count = () =>
      (logText().match(/No available shared memory broadcast block found in 1 seconds/g) ?? []).length;
    await waitFor(() => count() >= 2, { timeoutMs: 5000, what: 'two shm broadcast wait lines' });
    expect(logText()).toMatch(
      new RegExp(
        `\\(EngineCore_DP0 pid=\\d+\\) INFO ${STAMP}No available shared memory broadcast block found in 1 seconds\\. This typically happens`,
      ),
    );
    // The stats line after the stall: the request still running, no tokens.
    await waitFor(() => /Avg generation throughput: 0\.0 tokens\/s, Running: 1 reqs/.test(logText()), {
      what: 'a stalled stats line',
    });
    expect(stuck.ended).toBe(false);
    const before = stuck.raw.length;
    expect((await get(`${url}/health`)).status).toBe(200);
    const m1 = vllmMapping.map(parsePrometheusText((await get(`${url}/metrics`)).text).samples);
    expect(m1.running).toBe(1);
    expect(stuck.raw.length).toBe(before);
    const m2 = vllmMapping.map(parsePrometheusText((await get(`${url}/metrics`)).text).samples);
    expect(m2.generatedTokensTotal).toBe(m1.generatedTokensTotal);

    const events = replay();
    expect(events.filter((e) => e.severity === 'critical')).toEqual([]);
    const warn = events.filter((e) => e.severity === 'warning');
    expect(warn.length).toBeGreaterThanOrEqual(2);
    expect(new Set(warn.map((e) => e.rule))).toEqual(new Set(['vllm_shm_broadcast_wait']));

    // The hang ends: tokens flow again.
    sim.disableFault('shm_broadcast_hang');
    await waitFor(() => stuck.raw.length > before, { what: 'tokens after the hang' });
    stuck.cut();
  });

  it('nixl_transfer_failure: the connector logs each failed KV read and counts it; the request still completes', async () => {
    sim = await startVllmSim({
      engine: FAST,
      faults: [{ name: 'nixl_transfer_failure', params: { rate: 1 } }],
    });
    const url = sim.urls.server;
    const r = await post(`${url}/v1/chat/completions`, {
      ...chatBody({ max_tokens: 20 }),
      messages: [{ role: 'user', content: 'What is 40 + 2?' }],
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).choices[0].message.content).toBe('42');
    expect(logText()).toMatch(
      new RegExp(
        `\\(EngineCore_DP0 pid=\\d+\\) ERROR ${STAMP}NIXL transfer failure: transfer_failed\\. Marking blocks as invalid \\| Context: \\{'failure_type': 'transfer_failed', 'request_id': 'chatcmpl-[0-9a-f]+', .*'xfer_state': 'ERR'\\}$`,
        'm',
      ),
    );
    const metricsText = (await get(`${url}/metrics`)).text;
    expect(metricsText).toContain(
      'vllm:nixl_num_failed_transfers_total{model_name="sim-model",engine="0"} 1.0',
    );
    expect(vllmMapping.map(parsePrometheusText(metricsText).samples).kvTransferFailedTotal).toBe(1);
    // A recomputed prefill is an error the engine recovered from: a warning per failed read, never critical.
    const events = replay();
    expect(events.filter((e) => e.severity === 'critical')).toEqual([]);
    expect(events.some((e) => e.rule === 'vllm_nixl_transfer_failed' && e.severity === 'warning')).toBe(true);
  });

  it('faults for one engine are refused on the other, with a clear message; --help says which', async () => {
    sim = await startVllmSim();
    expect(() => sim!.enableFault('decode_stall')).toThrow(
      /decode_stall applies to the SGLang simulator only/,
    );
    const sglang = await startSim();
    try {
      expect(() => sglang.enableFault('engine_core_death')).toThrow(
        /engine_core_death applies to the vLLM simulator only \(sim --engine vllm\)/,
      );
    } finally {
      await sglang.stop();
    }
    // The control API lists only this simulator's faults and refuses the others (400).
    const list = JSON.parse((await get(`${sim.urls.control}/faults`)).text) as {
      available: { name: string }[];
    };
    expect(list.available.map((f) => f.name).sort()).toEqual([
      'crawl',
      'engine_core_death',
      'kv_corruption',
      'metrics_frozen',
      'nixl_transfer_failure',
      'queue_starvation',
      'rank_stall',
      'reasoning_runaway',
      'recurring_stall',
      'requests_lost',
      'saturation',
      'shm_broadcast_hang',
      'slow',
      'toolcall_in_reasoning',
    ]);
    const r = await post(`${sim.urls.control}/faults/nixl_abort_unhandled`, {});
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(/nixl_abort_unhandled applies to the SGLang simulator only/);
    const help = faultHelp();
    expect(help).toContain('engine_core_death (vLLM only: --engine vllm)');
    expect(help).toContain('nixl_abort_unhandled (SGLang only)');
    expect(help).toMatch(/\n {2}slow\n/);
  });
});
