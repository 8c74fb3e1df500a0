// The fault matrix (issue 26): every simulator fault, what a correct diagnosis of it is, and how it is injected
// and ended. A plan per fault (and per engine where a fault runs in both simulators); a new fault is a new entry.
// `expect.states` / `expect.diagnoses`: the verdict the fault must reach (diagnoses null: any); `final`: every
// diagnosis the fault may show while it holds (the one change allowed is an escalation to stronger evidence).
import { readFileSync, statSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { request } from 'node:http';

/** Resolves with the Unix ms at which `file` first contains `text` past `from` bytes. */
async function whenWritten(file, text, from, deadline = Date.now() + 60_000) {
  while (Date.now() < deadline) {
    if (statSync(file).size > from && readFileSync(file, 'utf8').slice(from).includes(text))
      return Date.now();
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${text} never written to ${file}`);
}

const toggle = (fault, params = {}, restart) => ({
  inject: (sim) => (sim.enableFault(fault, params), Date.now()),
  restore: async (sim) => {
    sim.disableFault(fault);
    if (restart !== undefined) await (restart === true ? sim.restart() : sim.restart(restart));
  },
});

const threadDeath = (abortCascade) => ({
  async inject(sim) {
    const from = statSync(sim.logFiles.prefill).size;
    sim.enableFault('nixl_abort_unhandled');
    const at = whenWritten(sim.logFiles.prefill, '(bootstrap_thread):', from);
    void abortCascade(sim.urls.router, { requests: 1, cutAfterMs: 500 });
    return at; // from the traceback line: the moment the thread is dead
  },
  async restore(sim) {
    sim.disableFault('nixl_abort_unhandled');
    await sim.restart('prefill');
  },
});

/** A user's long streaming generation (the engine's own baseline for a crawl): returns what ends it. */
function longStream(url) {
  const body = JSON.stringify({
    model: 'sim-model',
    messages: [{ role: 'user', content: 'write a long story' }],
    max_tokens: 10_000_000,
    stream: true,
  });
  const req = request(`${url}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  req.on('response', (res) => res.resume());
  req.on('error', () => {});
  req.end(body);
  return () => req.destroy();
}

/** Continuous user traffic, two requests at a time (bounded: at most 20 000), until stopped. */
function traffic(url) {
  let on = true;
  const one = () =>
    new Promise((resolve) => {
      const body = JSON.stringify({
        model: 'sim-model',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 20,
      });
      const req = request(`${url}/v1/chat/completions`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => (res.resume(), res.on('end', resolve), res.on('error', resolve)));
      req.on('error', resolve);
      req.setTimeout(60_000, () => req.destroy());
      req.end(body);
    });
  const loop = (async () => {
    for (let i = 0; i < 10_000 && on; i++) await Promise.all([one(), one()]);
  })();
  return async () => {
    on = false;
    await loop;
  };
}

const routerOf = (sim) => sim.urls.router ?? sim.urls.server;

/** The crawl after a baseline: a long generation runs first, then every step is `factor` times slower. */
const crawlPlan = (factor) => {
  let end;
  return {
    async inject(sim) {
      end = longStream(routerOf(sim));
      await new Promise((r) => setTimeout(r, 15_000));
      sim.enableFault('crawl', { factor });
      return Date.now();
    },
    restore(sim) {
      sim.disableFault('crawl');
      end?.();
    },
  };
};

/** A stranded transfer-queue entry under continuous traffic (the floor, not an idle engine). */
const strandedPlan = () => {
  let stop;
  return {
    inject(sim) {
      stop = traffic(routerOf(sim));
      sim.enableFault('stranded_queue_entry', { count: 1 });
      return Date.now();
    },
    async restore(sim) {
      sim.disableFault('stranded_queue_entry');
      await stop?.();
    },
  };
};

/** Saturation (issue 41 item 9): the scheduler capped at `slots`, `streams` long generations holding every slot. */
const saturationPlan = (slots, streams) => {
  let ends = [];
  return {
    inject(sim) {
      sim.enableFault('saturation', { slots });
      ends = Array.from({ length: streams }, () => longStream(routerOf(sim)));
      return Date.now();
    },
    restore(sim) {
      for (const end of ends) end();
      ends = [];
      sim.disableFault('saturation');
    },
  };
};

/** Probes the plan needs beside the example's own (added when the example does not have them). */
const CANARY = { name: 'canary', kind: 'canary', every: '30s', timeout: '30s', endpoints: ['router'] };
const STRUCTURED = {
  name: 'structured',
  kind: 'structured',
  every: '1m',
  timeout: '30s',
  endpoints: ['router'],
};

export function plans({ abortCascade }) {
  return [
    {
      name: 'nixl_abort_unhandled',
      engine: 'sglang',
      expect: { states: ['wedged'], diagnoses: ['kv_bootstrap_thread_dead'] },
      ...threadDeath(abortCascade),
    },
    {
      // No log sources: nothing says the thread died; only hung completions (and engine gauges) can tell.
      name: 'silent_wedge',
      fault: 'nixl_abort_unhandled',
      engine: 'sglang',
      logs: false,
      expect: { states: ['wedged'], diagnoses: ['engine_stalled', 'completions_hung'] },
      ...threadDeath(abortCascade),
    },
    {
      // No log sources either, but the node source reads the PD legs' worker processes (issue 42): the bootstrap
      // thread that went away names the wedge.
      name: 'silent_wedge_node',
      fault: 'nixl_abort_unhandled',
      engine: 'sglang',
      logs: false,
      node: true,
      expect: { states: ['wedged'], diagnoses: ['thread_lost'] },
      ...threadDeath(abortCascade),
    },
    {
      name: 'decode_stall',
      engine: 'sglang',
      expect: { states: ['wedged'], diagnoses: ['engine_stalled'] },
      ...toggle('decode_stall', {}, 'decode'),
    },
    {
      name: 'crash',
      engine: 'sglang',
      // Decode logs that it lost prefill before the health probe sees the refused port: a signature the
      // incident keeps into down ("down after log:sglang_disagg_lost_prefill_connection").
      expect: {
        states: ['down'],
        diagnoses: ['health_failing', 'connection_refused', 'log:sglang_disagg_lost_prefill_connection'],
      },
      inject: (sim) => (sim.enableFault('crash', { service: 'prefill' }), Date.now()),
      restore: (sim) => sim.restart('prefill'),
    },
    {
      name: 'crash_proxy',
      fault: 'crash',
      engine: 'sglang',
      proxy: true,
      expect: { states: ['degraded'], diagnoses: ['hop:proxy'] },
      inject: (sim) => (sim.enableFault('crash', { service: 'proxy' }), Date.now()),
      restore: (sim) => sim.restart('proxy'),
    },
    {
      name: 'health_fail',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['hop:prefill', 'health_failing'] },
      ...toggle('health_fail', { service: 'prefill' }, 'prefill'),
    },
    {
      name: 'health_503',
      engine: 'sglang',
      expect: { states: ['wedged'], diagnoses: ['health_generate_failing'] },
      ...toggle('health_503', {}, 'decode'),
    },
    {
      name: 'keepalive_stall',
      engine: 'sglang',
      proxy: true,
      expect: { states: ['degraded'], diagnoses: ['keepalive_only'] },
      ...toggle('keepalive_stall'),
    },
    {
      name: 'toolcall_leak',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['toolcall_leak'] },
      ...toggle('toolcall_leak'),
    },
    {
      name: 'slow',
      engine: 'sglang',
      // TTFT over the example's 5 s objective needs (prefill 5 ms + a 10 ms step) × 345: every step 3.5 s, a crawl
      // (0.3 tokens/s), which is what the engine's state says first. `slow` at these settings comes from queueing,
      // not from a uniformly slower engine (the 30 s timeout leaves no factor with a late first token and no hang).
      // A tool-call matrix in flight past hangAfter (20 s) with nothing finished is hung by definition. Where the
      // chat-sized runs time out first (the canary's short answers still pass), the incident is completions_failing
      // and the hang that follows is the same kind of evidence: the hold keeps the first. SGLang refreshes its
      // gauges with each Decode batch line, every 40 decode steps (140 s at this factor), so the engine's own
      // crawl can come after the plan's 6 minutes, or not at all.
      expect: {
        states: ['wedged', 'degraded'],
        diagnoses: ['engine_stalled', 'engine_crawling', 'completions_hung', 'completions_failing'],
      },
      ...toggle('slow', { factor: 345 }),
    },
    {
      // One chat request in three hangs until its 30 s timeout (issue 13): no two failures in a row on a slot, so
      // only the window sees it; the tool-call matrix (7 requests a run) hangs too.
      name: 'intermittent_hang',
      engine: 'sglang',
      // The router holds the request: the engines report nothing running or waiting while they serve the other
      // probes, which is a request lost before the engine (issue 41 item 4), named from the engines' own state.
      expect: { states: ['degraded', 'wedged'], diagnoses: ['intermittent', 'requests_lost'] },
      recoverMs: 8 * 60_000, // requests_lost holds 5 min after the last one
      ...toggle('intermittent_hang', { every: 3 }),
    },
    {
      name: 'kv_corruption',
      engine: 'sglang',
      probes: [CANARY],
      expect: { states: ['degraded'], diagnoses: ['wrong_output'] },
      recoverMs: 25 * 60_000, // wrong_output holds until 40 clean answers (issue 26 item 3): ~20 min
      ...toggle('kv_corruption', { rate: 0.5 }),
    },
    {
      name: 'grammar_stall',
      engine: 'sglang',
      probes: [STRUCTURED],
      expect: { states: ['degraded'], diagnoses: ['structured_output_stalled'] },
      ...toggle('grammar_stall'),
    },
    {
      name: 'router_stuck',
      engine: 'sglang',
      routerMetrics: true,
      expect: { states: ['wedged'], diagnoses: ['router_stuck'] },
      ...toggle('router_stuck', {}, 'router'),
    },
    {
      name: 'queue_leak',
      engine: 'sglang',
      slow: true, // leakAfter is 10 minutes at the example's settings
      expect: { states: ['degraded'], diagnoses: ['queue_leak'] },
      ...toggle('queue_leak', { count: 3 }),
    },
    {
      name: 'kv_transfer_failure',
      engine: 'sglang',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['kv_transfer_failing'] },
      ...toggle('kv_transfer_failure', { rate: 0.3 }),
    },
    {
      name: 'crawl',
      engine: 'sglang',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['engine_crawling'] },
      ...crawlPlan(30),
    },
    {
      name: 'orphaned_requests',
      engine: 'sglang',
      routerMetrics: true,
      slow: true, // orphanAfter is 10 minutes at the example's settings
      expect: { states: ['degraded'], diagnoses: ['requests_orphaned'] },
      ...toggle('orphaned_requests', { count: 2 }),
    },
    {
      name: 'stranded_queue_entry',
      engine: 'sglang',
      slow: true, // leakAfter is 10 minutes at the example's settings
      expect: { states: ['degraded'], diagnoses: ['queue_leak'] },
      ...strandedPlan(),
    },
    {
      name: 'pd_half_failed',
      engine: 'sglang',
      routerMetrics: true,
      // Per-leg health probes see the refused leg first (down); the router's view names the pair.
      // Decode's own line that it lost prefill (a signature) may come before the router's gauges say it.
      expect: {
        states: ['wedged'],
        diagnoses: ['pd_pair_half_failed', 'log:sglang_disagg_lost_prefill_connection'],
      },
      inject: (sim) => (sim.enableFault('pd_half_failed', { leg: 'prefill' }), Date.now()),
      restore: (sim) => sim.disableFault('pd_half_failed'),
    },
    {
      name: 'toolcall_args_corrupt',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['wrong_output'] },
      recoverMs: 25 * 60_000, // 20 minutes of clean answers (WRONG_HOLD_MS) at one matrix every 90 s
      ...toggle('toolcall_args_corrupt'),
    },
    {
      name: 'toolcall_leak_gemma4',
      fault: 'toolcall_leak',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['toolcall_leak'] },
      ...toggle('toolcall_leak', { family: 'gemma4' }),
    },
    {
      name: 'toolcall_none_ignored',
      fault: 'toolcall_leak',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['toolcall_leak'] },
      ...toggle('toolcall_leak', { mode: 'none_ignored' }),
    },
    {
      name: 'reasoning_garbage',
      engine: 'sglang',
      expect: { states: ['degraded'], diagnoses: ['wrong_output'] },
      recoverMs: 25 * 60_000,
      ...toggle('reasoning_garbage'),
    },
    {
      name: 'long_prompt_hang',
      engine: 'sglang',
      slow: true, // the long-input probe runs every 10 m
      // wedgeAfter (2) failed runs in a row: the second comes 10–20 minutes after the fault (plus 10 % jitter); back
      // to ok, recoverAfter (2) passes of it.
      detectMinutes: 30,
      recoverMs: 25 * 60_000,
      probes: [
        {
          name: 'long',
          kind: 'longinput',
          every: '10m',
          timeout: '60s',
          endpoints: ['router'],
          promptTokens: 8192,
        },
      ],
      expect: { states: ['degraded'], diagnoses: ['long_context_failing'] },
      ...toggle('long_prompt_hang', { above: 4096 }),
    },
    {
      name: 'context_ttft_growth',
      engine: 'sglang',
      slow: true, // the conversation probe runs every 5 m
      probes: [
        {
          name: 'conversation',
          kind: 'conversation',
          every: '5m',
          timeout: '120s',
          endpoints: ['router'],
          conn: ['keepalive'],
          rounds: 4,
          roundTokens: 512,
        },
      ],
      expect: { states: ['degraded'], diagnoses: ['conversation_stalls'] },
      // Back to ok takes recoverAfter (2) passing conversations 5 m apart, after a phase of up to 5 m.
      recoverMs: 16 * 60_000,
      ...toggle('context_ttft_growth', { ms_per_ktok: 3000 }),
    },
    {
      name: 'vllm_crawl',
      fault: 'crawl',
      engine: 'vllm',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['engine_crawling'] },
      ...crawlPlan(30),
    },
    {
      name: 'vllm_engine_core_death',
      fault: 'engine_core_death',
      engine: 'vllm',
      expect: { states: ['wedged', 'down'], diagnoses: ['log:vllm_engine_core_fatal'] },
      ...toggle('engine_core_death', { keep_alive: 1 }, true),
    },
    {
      name: 'vllm_shm_broadcast_hang',
      fault: 'shm_broadcast_hang',
      engine: 'vllm',
      // vLLM's `No available shared memory broadcast block found in N seconds` is a warning: it names the hang.
      // With a request of ours running when the worker stops reading, the frozen gauges name it first (engine).
      expect: { states: ['wedged'], diagnoses: ['warning:shm_hang', 'engine_stalled'] },
      ...toggle('shm_broadcast_hang', { interval: 10 }, true),
    },
    {
      name: 'vllm_rank_stall',
      fault: 'rank_stall',
      engine: 'vllm',
      expect: { states: ['degraded'], diagnoses: ['rank_stalled'] },
      ...toggle('rank_stall', { engine: 1, running: 2 }),
    },
    {
      name: 'vllm_kv_corruption',
      fault: 'kv_corruption',
      engine: 'vllm',
      expect: { states: ['degraded'], diagnoses: ['wrong_output'] },
      recoverMs: 25 * 60_000, // wrong_output holds until 40 clean answers (issue 26 item 3): ~20 min
      ...toggle('kv_corruption', { rate: 0.5 }),
    },
    {
      name: 'vllm_nixl_transfer_failure',
      fault: 'nixl_transfer_failure',
      engine: 'vllm',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['kv_transfer_failing'] },
      ...toggle('nixl_transfer_failure', { rate: 0.3 }),
    },
    {
      // Issue 41 item 1: the core hangs in a collective with no log line and its gauges frozen at their last values
      // (0 running / 0 waiting between requests): the engine's own progress stopped while our requests wait.
      name: 'vllm_metrics_frozen',
      fault: 'metrics_frozen',
      engine: 'vllm',
      expect: { states: ['wedged'], diagnoses: ['engine_stalled'] },
      ...toggle('metrics_frozen', { mode: 'frozen' }, true),
    },
    {
      // The same hang with /metrics no longer answering.
      name: 'vllm_metrics_absent',
      fault: 'metrics_frozen',
      engine: 'vllm',
      expect: { states: ['wedged'], diagnoses: ['engine_stalled'] },
      ...toggle('metrics_frozen', { mode: 'absent' }, true),
    },
    {
      // Issue 41 item 2: 25 s stalls a minute apart, each clearing by itself.
      name: 'vllm_recurring_stall',
      fault: 'recurring_stall',
      engine: 'vllm',
      expect: { states: ['degraded'], diagnoses: ['stalls_recurring'] },
      recoverMs: 8 * 60_000, // episodes count for 5 min
      ...toggle('recurring_stall', { stall: 25, every: 60 }),
    },
    {
      // Issue 41 item 4: one chat request in three accepted and never handed to the engine.
      name: 'vllm_requests_lost',
      fault: 'requests_lost',
      engine: 'vllm',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['requests_lost'] },
      recoverMs: 8 * 60_000, // a lost request holds the diagnosis 5 min
      ...toggle('requests_lost', { every: 3 }),
    },
    {
      // Issue 41 item 9 / issue 38: 4 slots, 32 long generations: our probes wait for a slot while tokens flow.
      // Busy, never wedged.
      name: 'vllm_saturation',
      fault: 'saturation',
      engine: 'vllm',
      expect: { states: ['degraded'], diagnoses: ['engine_saturated'] },
      ...saturationPlan(4, 32),
    },
    {
      name: 'vllm_slow',
      fault: 'slow',
      engine: 'vllm',
      // As the SGLang plan: at the example's settings a 345× step slowdown is a crawl, or, before the crawl clock
      // has run stallAfter, completions hung or failing (one kind of evidence).
      expect: {
        states: ['wedged', 'degraded'],
        diagnoses: ['engine_crawling', 'completions_hung', 'completions_failing'],
      },
      ...toggle('slow', { factor: 345 }),
    },
  ];
}
