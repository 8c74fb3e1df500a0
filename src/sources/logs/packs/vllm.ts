// vLLM V1 signatures, read from vLLM main (2026-08). Every line carries the process prefix vLLM adds to each
// process's output (`(EngineCore_DP0 pid=N) `, `(APIServer pid=N) `, `(Worker_TP0 pid=N) `; utils
// decorate_logs) before the logger's `LEVEL MM-DD HH:MM:SS [file.py:line] `, so no rule is anchored. The
// `Engine 000:` stats line feeds engine gauges (v1/metrics/loggers.py LoggingStatLogger).
import { EXCEPTION_LINE, PROCESS_DEATH } from './patterns.js';
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
      incident: PROCESS_DEATH,
      logger: 'vllm',
      match: String.raw`EngineCore encountered a fatal error\.`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // v1/engine/core.py run_engine_core (0.8 → 2026-08): the engine never came up.
    {
      name: 'vllm_engine_core_start_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/core.py run_engine_core (0.8 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`EngineCore failed to start\.`,
    },
    // v1/executor/multiproc_executor.py MultiprocExecutor monitor (0.8 → 2026-08).
    {
      name: 'vllm_worker_died',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py start_worker_monitor (0.8 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`Worker proc (?<worker>[\w.-]+) died unexpectedly`,
    },
    // v1/engine/core_client.py MPClient monitor_engine_cores (0.8 → 2026-08): `Engine core proc {name} died
    // unexpectedly, shutting down client.`; newer MPClient wording `engine core exited unexpectedly`.
    {
      name: 'vllm_engine_core_died',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/core_client.py MPClient monitor_engine_cores (0.8 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`Engine core proc (?<proc>[\w.-]+) died unexpectedly|MPClient: engine core exited unexpectedly`,
    },
    // v1/engine/exceptions.py EngineDeadError, raised by async_llm.py / core_client.py (0.8 → 2026-08); /health
    // answers 503 from then on.
    {
      name: 'vllm_engine_dead',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/exceptions.py, async_llm.py (0.8 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`\bEngineDeadError\b`,
    },
    // v1/engine/async_llm.py output_handler (2026-02 → 2026-08): each in-flight request fails with the engine.
    {
      name: 'vllm_request_failed_engine_dead',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/async_llm.py (2026-02 → 2026-08)',
      incident: PROCESS_DEATH,
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
    // every VLLM_RINGBUFFER_WARNING_INTERVAL (60 s): a rank is hanging or compiling. Startup prints it too. Both
    // wordings read in the index copies of shm_broadcast.py (old: `logger.warning("No available block found in %s
    // second. ", …)`).
    {
      name: 'vllm_shm_broadcast_wait',
      severity: 'warning',
      class: 'shm_hang',
      upstream: 'vllm/distributed/device_communicators/shm_broadcast.py (0.6 → 2026-08)',
      // Newer: `No available shared memory broadcast block found in %s seconds. This typically happens when some
      // processes are hanging or doing some time-consuming work (e.g. compilation, …)` (INFO since 2026-02);
      // 0.6 → 0.10: `No available block found in %s second. ` (a WARNING; SGLang's copy of the ring buffer too).
      match: String.raw`No available (?:shared memory broadcast )?block found in (?<seconds>\d+) seconds?`,
    },
    // v1/engine/utils.py wait_for_engine_startup (0.9 → 2026-08; index copies): `raise RuntimeError("Engine core
    // initialization failed. See root cause above. Failed core proc(s): {…}")` in the API server when an engine core
    // (this node's, or with data parallel another node's) died during start-up. The server never comes up.
    {
      name: 'vllm_engine_core_init_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/engine/utils.py wait_for_engine_startup (0.9 → 2026-08, index copies and reports)',
      incident: PROCESS_DEATH,
      match: String.raw`Engine core initialization failed\. See root cause above\.(?: Failed core proc\(s\): (?<procs>\{[^}\n]{0,500}\}))?`,
    },
    // v1/executor/multiproc_executor.py WorkerProc.worker_main (0.9 → 2026-08; index copies): `logger.exception(
    // "WorkerProc failed to start.")` while the ready pipe is open (the worker died during init: weights, NCCL,
    // CUDA), its traceback on lines with the same prefix; the last names the cause.
    {
      name: 'vllm_worker_start_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py WorkerProc.worker_main (0.9 → 2026-08, index copies)',
      incident: PROCESS_DEATH,
      match: String.raw`WorkerProc failed to start\.`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // Same file after start-up (index copies and public reports, vLLM 0.9 → 2026-03): worker_busy_loop's
    // `logger.exception("WorkerProc hit an exception.")` when an RPC (execute_model, sample_tokens) raised (the
    // FAILURE reply makes the engine core die with `Worker failed with error …`), and worker_main's
    // `logger.exception("WorkerProc failed.")` when the busy loop itself ended on an exception (the worker exits).
    // The worker's record names the root cause; the engine core's death after it is the same incident.
    {
      name: 'vllm_worker_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py worker_busy_loop/worker_main (0.9 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`WorkerProc (?:failed|hit an exception)\.`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // Same file, the worker's output thread under async scheduling (WorkerProc.enqueue_output, run by the
    // `WorkerAsyncOutputCopy` thread's async_output_busy_loop): `logger.exception("Error getting async model runner
    // output")` when waiting for the step's device-to-host copy raised (a CUDA error surfaces there first); the
    // exception becomes the step's FAILURE reply and the engine core dies on it. Index copies of 2025-10 → 2026 (no
    // commit named) and a public report quote it (`(Worker_DP0_TP2_EP2 pid=36191) ERROR 08-05 05:55:40
    // [multiproc_executor.py:945] Error getting async model runner output`). Its traceback names the root cause.
    {
      name: 'vllm_worker_output_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream:
        'vllm/v1/executor/multiproc_executor.py WorkerProc.enqueue_output (async scheduling, index copies 2025-10 → 2026)',
      incident: PROCESS_DEATH,
      logger: 'vllm',
      match: String.raw`Error getting async model runner output\s*$`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // v1/executor/multiproc_executor.py MultiprocExecutor.collective_rpc (at 00f6c9bf92aa69c72d5828d28d029129775223b7,
    // 0.10): `raise TimeoutError(f"RPC call to {method} timed out.") from e` (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS and
    // the 10 s check_health): a worker stopped answering; the engine core dies on it.
    {
      name: 'vllm_rpc_timeout',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'vllm/v1/executor/multiproc_executor.py collective_rpc (0.10 at 00f6c9bf → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`TimeoutError: RPC call to (?<method>\w{1,64}) timed out\.`,
    },
    // logging_utils/dump_input.py _dump_engine_exception (0.10 → 2026-08; index copies): before `EngineCore encountered
    // a fatal error.`, `Dumping scheduler stats: SchedulerStats(num_running_reqs=N, num_waiting_reqs=N, …)`. Its own
    // class, no incident key: the death after it stays the event (with its exception), this adds the load it died under.
    {
      name: 'vllm_scheduler_stats_dump',
      severity: 'warning',
      class: 'engine_dump',
      upstream:
        'vllm/logging_utils/dump_input.py _dump_engine_exception (0.10 → 2026-08, index copies and reports)',
      match: String.raw`Dumping scheduler stats: SchedulerStats\(num_running_reqs=(?<running>\d+), num_waiting_reqs=(?<waiting>\d+)`,
    },
    // v1/core/sched/scheduler.py, the KV-load failure recovery (index copies of main 2026; first version not checked):
    // kv_load_failure_policy=fail: `Failing %d request(s) due to KV load failure (failure_policy=fail, %d tokens
    // affected). Request IDs: %s` (the requests end with an error, the engine serves on); =recompute: `Recovered
    // from KV load failure: %d request(s) rescheduled (%d tokens affected).` (recomputed, slower).
    {
      name: 'vllm_kv_load_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/v1/core/sched/scheduler.py KV-load failure handling (main 2026; first version not checked)',
      match: String.raw`Failing (?<requests>\d+) request\(s\) due to KV load failure \(failure_policy=fail, (?<tokens>\d+) tokens affected\)`,
    },
    {
      name: 'vllm_kv_load_recovered',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/v1/core/sched/scheduler.py KV-load failure handling (main 2026; first version not checked)',
      match: String.raw`Recovered from KV load failure: (?<requests>\d+) request\(s\) rescheduled \((?<tokens>\d+) tokens affected\)`,
    },
    // NIXL push mode (P WRITEs into D's blocks; vllm/distributed/kv_transfer/kv_connector/v1/nixl/push_worker.py at 039e79a67a8416957c1875f9e73655a705bbcbe7, main 2026):
    // the `nixl-push-writer` thread's catch-all `logger.exception("nixl-push-writer error; continuing")` (it keeps
    // running; the pushes of that pass fail or retry), and the D side's `No remote agents for engine %s; cannot send
    // registration for %s` (that request's receive fails). Push failures of one request go through _log_failure
    // (push_reg_handshake_failed, push_handshake_failed, transfer_setup_failed): vllm_nixl_transfer_failed below.
    {
      name: 'vllm_nixl_push_writer_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/nixl/push_worker.py _push_writer_loop (read at 039e79a6)',
      match: String.raw`nixl-push-writer error; continuing`,
    },
    {
      name: 'vllm_nixl_push_no_remote_agents',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/nixl/push_worker.py _do_send_reg_notif (read at 039e79a6)',
      perRequest: 'rid',
      match: String.raw`No remote agents for engine (?<engine>[^\s;]{1,256}); cannot send registration for (?<rid>\S{1,256})`,
    },
    // nixl/worker.py (nixl_connector.py before 2026-03) _ensure_handshake done_callback: `self._log_failure(
    // failure_type="handshake_setup_failed", req_id=None, error=e, remote_engine_id=eid)`, so the context dict
    // carries `'request_id': None`: an engine-level handshake with a remote engine failed, every request routed
    // to it fails until a retry succeeds. The per-request rule below needs a request id, so this is its own rule.
    {
      name: 'vllm_nixl_engine_failure',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/nixl/worker.py _log_failure req_id=None (main 2026; first version not checked)',
      match: String.raw`NIXL transfer failure: (?<failure>[a-z_]{1,64})[^|\n]{0,500}\| Context: \{'failure_type': '[a-z_]{1,64}', 'request_id': None`,
    },
    // vLLM's MooncakeConnector (MC, below: vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py at 00f4240ee6458263d76cf51ca7901ce1350bb4d1, main 2026;
    // mooncake_connector.py one directory up before the move; older builds not checked). P pushes KV with the
    // Mooncake transfer engine (batch_transfer_sync_write) to the D that asked for it over ZMQ.
    // Sender, MooncakeConnectorWorker._mooncake_sender_listener: `Error in Mooncake sender thread: %s. Exiting
    // thread.` The prefill's sender loop is gone: no decode gets KV from this worker again (every such request
    // waits out VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT). Critical.
    {
      name: 'vllm_mooncake_sender_thread_died',
      severity: 'critical',
      class: 'thread_death',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py _mooncake_sender_listener (read at 00f4240e)',
      match: String.raw`Error in Mooncake sender thread: `,
    },
    // Sender, _send_blocks: `Sending to %s failed (ret=%s) after %s (%d descriptors, %d bytes)` (the transfer
    // engine failed the batch; the requests get an error reply) and _sender_worker: `Error processing Mooncake xfer
    // request: %s`.
    {
      name: 'vllm_mooncake_send_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py _send_blocks, _sender_worker (read at 00f4240e)',
      match: String.raw`Sending to (?<session>[^\s()]{1,300}) failed \(ret=(?<ret>-?\d+)\)|Error processing Mooncake xfer request: `,
    },
    // Sender, send_kv_to_decode / fetch_finished_sending_reqs: `Timeout waiting for P side ready: %s` (the decode's
    // pull waited VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT for the prefill) and `Request %s timed out after %d seconds
    // without being sent. Freeing its blocks on the producer side.` (no decode came for the KV).
    {
      name: 'vllm_mooncake_send_timeout',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py send_kv_to_decode, fetch_finished_sending_reqs (read at 00f4240e)',
      match: String.raw`Timeout waiting for P side ready: |Request (?<rid>\S{1,256}) timed out after (?<seconds>\d+) seconds without being sent\. Freeing its blocks on the producer side\.`,
    },
    // Receiver, _handle_failed_recv: `pulling kv_caches for %s failed: %s` (the request list, then the reason:
    // the prefill's error reply, `transfer failed: …`, `remote engine_id … not found from bootstrap server …`); the
    // scheduler then fails or recomputes the requests (kv_load_failure_policy).
    {
      name: 'vllm_mooncake_pull_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py _handle_failed_recv (read at 00f4240e)',
      // The id list is bounded (600 characters: a dozen vLLM request ids) so a line repeating the opening words costs
      // 600 per copy, not the rest of the line (test/logs/rule-linearity.test.ts); a longer list is not matched.
      match: String.raw`pulling kv_caches for \[[^\]\n]{0,600}\] failed: `,
    },
    // Receiver, _connect_to_prefiller_bootstrap: `Failed to connect to bootstrap server %s: %s`; every request of
    // that prefill fails until a later query succeeds.
    {
      name: 'vllm_mooncake_bootstrap_unreachable',
      severity: 'warning',
      class: 'connection_lost',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py _connect_to_prefiller_bootstrap (read at 00f4240e)',
      match: String.raw`Failed to connect to bootstrap server (?<addr>\S{1,300}): `,
    },
    // Sender start-up, register_worker_with_bootstrap: retried `Bootstrap registration attempt %d/%d for %s failed
    // with %s: %s. Retrying in %.1fs.`, then `RuntimeError: Failed to register {payload} with the Mooncake bootstrap
    // server at {url} after {n} attempts.`, which ends the worker's start-up (its own death chain).
    {
      name: 'vllm_mooncake_bootstrap_register_retry',
      severity: 'warning',
      class: 'connection_lost',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py register_worker_with_bootstrap (read at 00f4240e)',
      match: String.raw`Bootstrap registration attempt (?<attempt>\d+)/(?<max>\d+) for `,
    },
    {
      name: 'vllm_mooncake_bootstrap_register_failed',
      severity: 'critical',
      class: 'connection_lost',
      upstream:
        'vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py register_worker_with_bootstrap give-up (read at 00f4240e)',
      incident: PROCESS_DEATH,
      // The payload is a pydantic RegisterWorkerPayload printed as `engine_id='…' dp_rank=N …`: the rule stops before its
      // first quote (built-in rules see no text after a quote, request-echo.ts).
      match: String.raw`Failed to register engine_id=`,
    },
    // entrypoints/openai/tool_parsers/*_tool_parser.py (hermes_tool_parser.py read at
    // 836d1f31211015f62485b0151fbbf85b6cc7a934; the same calls in the other parsers, 0.6 → 2026-08):
    // `logger.exception("Error in extracting tool call from response.")` and, streaming, `logger.exception("Error trying
    // to handle streaming tool call.")`. The model's output was not a tool call the parser could read; it is returned
    // as content. The traceback after it (same prefix, NewLineFormatter) can quote that output: the carrier
    // `vllm_tool_parser` (../carriers.ts) shields every line of the record, this rule alone sees the header, and only
    // when the message is exactly the parser's. A model steered by the user: a warning whose class names nothing.
    {
      name: 'vllm_tool_parser_error',
      severity: 'warning',
      class: 'tool_call_parse_error',
      upstream:
        'vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py extract_tool_calls(_streaming) (read at 836d1f31; the other parsers alike)',
      logger: 'vllm',
      // Two top-level branches, so each gives the chunk prefilter its literal (a group would give none).
      match: String.raw`Error in extracting tool call from response\.\s*$|Error trying to handle streaming tool call\.\s*$`,
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
