// vLLM V1 signatures, read from vLLM main (2026-08). Every line carries the process prefix vLLM adds to each
// process's output (`(EngineCore_DP0 pid=N) `, `(APIServer pid=N) `, `(Worker_TP0 pid=N) `; utils
// decorate_logs) before the logger's `LEVEL MM-DD HH:MM:SS [file.py:line] `, so no rule is anchored. The
// `Engine 000:` stats line feeds engine gauges (v1/metrics/loggers.py LoggingStatLogger).
import { EXCEPTION_LINE } from './patterns.js';
import type { RulePack } from './types.js';

export const vllmPack: RulePack = {
  name: 'vllm',
  engineLines: ['vllm_stats'],
  rules: [
    // v1/engine/core.py EngineCoreProc.run_engine_core (0.8 → main 2026-08): logger.exception("EngineCore
    // encountered a fatal error."), every traceback line with the same prefix; the last names the cause.
    {
      name: 'vllm_engine_core_fatal',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/core.py run_engine_core (0.8 → 2026-08)',
      incident: 'vllm_engine_death',
      logger: 'vllm',
      match: String.raw`EngineCore encountered a fatal error\.`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // v1/executor/multiproc_executor.py WorkerProc.worker_busy_loop (0.10 → 2026-08): logger.exception("WorkerProc
    // hit an exception.") with the traceback on lines of the same prefix (issue reports quote
    // `(Worker_TP0 pid=948496) ERROR 11-06 11:21:05 [multiproc_executor.py:699] WorkerProc hit an exception.`). The
    // failure goes back to the engine core, which dies of it: the first line of vLLM's engine-death chain, and its
    // last exception line (a CUDA error) the chain's root cause.
    {
      name: 'vllm_worker_proc_exception',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py worker_busy_loop (0.10 → 2026-08)',
      incident: 'vllm_engine_death',
      logger: 'vllm',
      match: String.raw`WorkerProc hit an exception\.`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // v1/engine/core.py run_engine_core (0.8 → 2026-08): the engine never came up.
    {
      name: 'vllm_engine_core_start_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/core.py run_engine_core (0.8 → 2026-08)',
      incident: 'vllm_engine_death',
      match: String.raw`EngineCore failed to start\.`,
    },
    // v1/executor/multiproc_executor.py MultiprocExecutor monitor (0.8 → 2026-08).
    {
      name: 'vllm_worker_died',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py start_worker_monitor (0.8 → 2026-08)',
      incident: 'vllm_engine_death',
      match: String.raw`Worker proc (?<worker>[\w.-]+) died unexpectedly`,
    },
    // v1/engine/core_client.py MPClient monitor_engine_cores (0.8 → 2026-08): `Engine core proc {name} died
    // unexpectedly, shutting down client.`; newer MPClient wording `engine core exited unexpectedly`.
    {
      name: 'vllm_engine_core_died',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/core_client.py MPClient monitor_engine_cores (0.8 → 2026-08)',
      incident: 'vllm_engine_death',
      match: String.raw`Engine core proc (?<proc>[\w.-]+) died unexpectedly|MPClient: engine core exited unexpectedly`,
    },
    // v1/engine/exceptions.py EngineDeadError, raised by async_llm.py / core_client.py (0.8 → 2026-08); /health
    // answers 503 from then on.
    {
      name: 'vllm_engine_dead',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/exceptions.py, async_llm.py (0.8 → 2026-08)',
      incident: 'vllm_engine_death',
      match: String.raw`\bEngineDeadError\b`,
    },
    // v1/engine/async_llm.py output_handler (2026-02 → 2026-08): each in-flight request fails with the engine.
    {
      name: 'vllm_request_failed_engine_dead',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/async_llm.py (2026-02 → 2026-08)',
      incident: 'vllm_engine_death',
      perRequest: 'rid',
      match: String.raw`Request (?<rid>\S+) failed \(engine dead\)`,
    },
    // entrypoints/openai/api_server.py run_server_worker (0.6 → 2026-08): `Starting vLLM API server %d on %s`. A
    // (re)started server: the deaths before it are over.
    {
      name: 'vllm_api_server_starting',
      severity: 'info',
      class: 'startup_info',
      upstream: 'vllm/entrypoints/openai/api_server.py run_server_worker (0.6 → 2026-08)',
      logger: 'vllm',
      startup: true,
      match: String.raw`Starting vLLM API server \d+ on `,
    },
    // distributed/device_communicators/shm_broadcast.py MessageQueue.acquire_write/acquire_read (0.6 → 2026-08),
    // every VLLM_RINGBUFFER_WARNING_INTERVAL (60 s): a rank is hanging or compiling. Startup prints it too.
    {
      name: 'vllm_shm_broadcast_wait',
      severity: 'warning',
      class: 'shm_hang',
      upstream: 'vllm/distributed/device_communicators/shm_broadcast.py (0.6 → 2026-08)',
      match: String.raw`No available shared memory broadcast block found in (?<seconds>\d+) seconds?`,
    },
    // v1/structured_output/backend_xgrammar.py XgrammarGrammar.accept_tokens (0.8 → 2026-08).
    {
      name: 'vllm_grammar_fsm_failed',
      severity: 'warning',
      class: 'grammar',
      upstream: 'vllm/v1/structured_output/backend_xgrammar.py accept_tokens (0.8 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`Failed to advance FSM for request (?<rid>\S+)`,
    },
    // distributed/kv_transfer/kv_connector/v1/nixl_connector.py (0.9 → 2026-03) and nixl/worker.py
    // (2026-03 → 2026-08) get_finished: the prefill freed KV blocks no decode fetched in time.
    {
      name: 'vllm_nixl_kv_expired',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py, nixl/worker.py (0.9 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`Releasing expired KV blocks for request (?<rid>\S+) which were retrieved by (?<workers>\d+) (?:decode|remote) worker`,
    },
    // nixl/worker.py (2026-03 → 2026-08): a decode fetched blocks the prefill had already freed.
    {
      name: 'vllm_nixl_invalid_blocks',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'vllm/distributed/kv_transfer/kv_connector/v1/nixl/worker.py (2026-03 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`Potentially invalid KV blocks for unrecognized request (?<rid>\S+)`,
    },
    // nixl/worker.py NixlConnectorWorker._log_failure (2026-03 → 2026-08; nixl_connector.py before):
    // `logger.error("NIXL transfer failure: %s | Context: %s", failure_type, context)`. A failed KV read; under the
    // default kv_load_failure_policy the blocks are recomputed and the request completes: a warning, not a wedge.
    {
      name: 'vllm_nixl_transfer_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/nixl/worker.py _log_failure (2026-03 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`NIXL transfer failure: (?<failure>[a-z_]+)[^|]*\| Context: \{.*?'request_id': '(?<rid>[^']+)'`,
    },
  ],
};
