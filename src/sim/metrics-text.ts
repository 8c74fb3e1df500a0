// An engine's /metrics in Prometheus text format with SGLang's sglang:* names (srt/metrics/collector.py
// @93d0487). Scheduler gauges show what the scheduler last published (frozen while it is stuck); counters
// move when requests finish.
import type { SglangFormat } from './logfmt.js';
import type { Published, EngineCounters } from './pd.js';

interface Family {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  value: number;
  scheduler: boolean;
}

export function engineMetricsText(
  engineType: 'prefill' | 'decode',
  modelName: string,
  pub: Published,
  counters: EngineCounters,
  format: SglangFormat = 'legacy',
): string {
  const sched = `model_name="${modelName}",engine_type="${engineType}",tp_rank="0",pp_rank="0"`;
  const tok = `model_name="${modelName}"`;
  const families: Family[] = [
    g('sglang:num_running_reqs', 'The number of running requests.', pub.running),
    g('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', pub.queued),
    g('sglang:num_used_tokens', 'The number of used tokens.', pub.usedTokens),
    g('sglang:token_usage', 'The token usage.', pub.tokenUsage),
    g('sglang:gen_throughput', 'The generation throughput (token/s).', pub.genThroughput),
    g('sglang:cache_hit_rate', 'The prefix cache hit rate.', 0),
    // metrics/collector.py: `num_prefill_bootstrap_queue_reqs` replaced `num_prefill_prealloc_queue_reqs`
    // (2025-10; the mapping in src/sources/engines/mappings/sglang.ts reads both).
    format === 'current'
      ? g(
          'sglang:num_prefill_bootstrap_queue_reqs',
          'The number of requests in the prefill bootstrap queue.',
          engineType === 'prefill' ? pub.prealloc : 0,
        )
      : g(
          'sglang:num_prefill_prealloc_queue_reqs',
          'The number of requests in the prefill prealloc queue.',
          engineType === 'prefill' ? pub.prealloc : 0,
        ),
    g(
      'sglang:num_prefill_inflight_queue_reqs',
      'The number of requests in the prefill inflight queue.',
      engineType === 'prefill' ? pub.inflight : 0,
    ),
    g('sglang:num_decode_prealloc_queue_reqs', 'The number of requests in the decode prealloc queue.', 0),
    g(
      'sglang:num_decode_transfer_queue_reqs',
      'The number of requests in the decode transfer queue.',
      engineType === 'decode' ? pub.transfer : 0,
    ),
    c(
      'sglang:num_bootstrap_failed_reqs_total',
      'The number of bootstrap failed requests.',
      counters.bootstrapFailed,
      true,
    ),
    c(
      'sglang:num_transfer_failed_reqs_total',
      'The number of transfer failed requests.',
      counters.transferFailed,
      true,
    ),
    c('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', counters.promptTokens),
    c('sglang:generation_tokens_total', 'Number of generation tokens processed.', counters.generationTokens),
    c('sglang:num_requests_total', 'Number of requests processed.', counters.requests),
    c('sglang:num_aborted_requests_total', 'Number of requests aborted.', counters.aborted),
  ];
  const out: string[] = [];
  for (const f of families) {
    // prometheus_client names a counter's family without the _total suffix in HELP/TYPE.
    const family = f.type === 'counter' ? f.name.replace(/_total$/, '') : f.name;
    out.push(
      `# HELP ${family} ${f.help}`,
      `# TYPE ${family} ${f.type}`,
      `${f.name}{${f.scheduler ? sched : tok}} ${num(f.value)}`,
    );
  }
  return out.join('\n') + '\n';
}

function g(name: string, help: string, value: number): Family {
  return { name, type: 'gauge', help, value, scheduler: true };
}

function c(name: string, help: string, value: number, scheduler = false): Family {
  return { name, type: 'counter', help, value, scheduler };
}

/** Python float formatting as prometheus_client prints it (1.0, 0.25). */
function num(v: number): string {
  return Number.isInteger(v) ? `${v}.0` : String(v);
}
