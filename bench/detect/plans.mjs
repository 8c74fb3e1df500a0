// The fault matrix (issue 26): every simulator fault, what a correct diagnosis of it is, and how it is injected
// and ended. A plan per fault (and per engine where a fault runs in both simulators); a new fault is a new entry.
// `expect.states` / `expect.diagnoses`: the verdict the fault must reach (diagnoses null: any); `final`: every
// diagnosis the fault may show while it holds (the one change allowed is an escalation to stronger evidence).
import { readFileSync, statSync } from 'node:fs';

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
      expect: { states: ['degraded'], diagnoses: ['slow'] },
      // TTFT = (prefill 5 ms + a 10 ms step) × factor over the 5 s objective, and 8 tokens within the 30 s
      // timeout: 333 < factor < 353 at the example's settings.
      ...toggle('slow', { factor: 345 }),
    },
    {
      // One chat request in three hangs until its 30 s timeout (issue 13): no two failures in a row on a slot, so
      // only the window sees it; the tool-call matrix (7 requests a run) hangs too.
      name: 'intermittent_hang',
      engine: 'sglang',
      expect: { states: ['degraded', 'wedged'], diagnoses: ['intermittent'] },
      ...toggle('intermittent_hang', { every: 3 }),
    },
    {
      name: 'kv_corruption',
      engine: 'sglang',
      probes: [CANARY],
      expect: { states: ['degraded'], diagnoses: ['wrong_output'] },
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
      name: 'vllm_engine_core_death',
      fault: 'engine_core_death',
      engine: 'vllm',
      expect: { states: ['wedged', 'down'], diagnoses: null },
      ...toggle('engine_core_death', { keep_alive: 1 }, true),
    },
    {
      name: 'vllm_shm_broadcast_hang',
      fault: 'shm_broadcast_hang',
      engine: 'vllm',
      expect: { states: ['wedged'], diagnoses: null },
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
      ...toggle('kv_corruption', { rate: 0.5 }),
    },
    {
      name: 'vllm_nixl_transfer_failure',
      fault: 'nixl_transfer_failure',
      engine: 'vllm',
      expect: { states: ['degraded', 'wedged'], diagnoses: null },
      ...toggle('nixl_transfer_failure', { rate: 0.3 }),
    },
    {
      name: 'vllm_slow',
      fault: 'slow',
      engine: 'vllm',
      expect: { states: ['degraded'], diagnoses: ['slow'] },
      ...toggle('slow', { factor: 345 }),
    },
  ];
}
