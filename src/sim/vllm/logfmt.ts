// vLLM V1's log line formats (vLLM main 2026-08), kept free of I/O so tests can compare them with upstream.
// Every literal is quoted from the upstream file named next to it; values (and source line numbers, which
// move between builds) are the simulator's.
//
// One logger record, as it reaches the log file:
// - vllm/logger.py: `_FORMAT = "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s"`,
//   `_DATE_FORMAT = "%m-%d %H:%M:%S"` (colour off: not a TTY).
// - vllm/logging_utils/formatter.py NewLineFormatter.format: a multi-line message (a traceback from
//   logger.exception) repeats the header after each newline: `msg.replace("\n", "\r\n" + parts[0])` — so
//   every line of a record but the last ends in `\r`.
// - vllm/utils/system_utils.py decorate_logs/_add_prefix: each process's stdout/stderr writes get
//   `({process_name} pid={pid}) ` after every newline (`APIServer`, `EngineCore_DP0`, `Worker_TP0`).
import { STATUS_CODES } from 'node:http';

export type VllmProcess = 'APIServer' | 'EngineCore_DP0';
export type VllmLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';

const pad = (n: number) => String(n).padStart(2, '0');

/** `%m-%d %H:%M:%S` in local time. */
export function vllmTime(at: Date): string {
  return (
    `${pad(at.getMonth() + 1)}-${pad(at.getDate())} ` +
    `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`
  );
}

/** Where a record comes from: its process and the logger call site (`file.py`, line). */
export interface Site {
  proc: VllmProcess;
  pid: number;
  file: string;
  line: number;
}

/**
 * One logger record as file lines (each without its final newline): every line carries the process prefix and
 * the record header, and every line but the last ends in `\r` (NewLineFormatter).
 */
export function vllmRecord(at: Date, site: Site, level: VllmLevel, message: string | string[]): string[] {
  const lines = Array.isArray(message) ? message : [message];
  const head = `(${site.proc} pid=${site.pid}) ${level} ${vllmTime(at)} [${site.file}:${site.line}] `;
  return lines.map((l, i) => `${head}${l}${i < lines.length - 1 ? '\r' : ''}`);
}

/**
 * A line uvicorn prints through its own logger (`%(levelprefix)s %(message)s`), with the API server's process
 * prefix: access lines `INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK` and lifecycle lines.
 */
export function uvicornLine(pid: number, message: string): string {
  return `(APIServer pid=${pid}) INFO:     ${message}`;
}

export function uvicornAccess(pid: number, clientAddr: string, requestLine: string, status: number): string {
  return uvicornLine(
    pid,
    `${clientAddr} - "${requestLine}" ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd(),
  );
}

export interface StatsFields {
  engine: number;
  promptThroughput: number;
  genThroughput: number;
  running: number;
  waiting: number;
  /** 0..1 */
  kvUsage: number;
  /** 0..1 */
  prefixHitRate: number;
  /** Preemptions in this interval (printed only when > 0). */
  preemptions: number;
}

/**
 * vllm/v1/metrics/loggers.py LoggingStatLogger.log (main 2026-08): `log_prefix` is `"Engine {:03d}: "`, then
 * `", ".join(log_parts)` of "Avg prompt throughput: %.1f tokens/s", "Avg generation throughput: %.1f tokens/s",
 * "Running: %d reqs", "Waiting: %d reqs", ["Preemptions: %d" when > 0], "GPU KV cache usage: %.1f%%",
 * "Prefix cache hit rate: %.1f%%". Logged at INFO unless this and the previous interval both had zero prompt
 * and generation throughput (then DEBUG: "Avoid log noise on an idle production system").
 */
export function statsMessage(f: StatsFields): string {
  const parts = [
    `Avg prompt throughput: ${f.promptThroughput.toFixed(1)} tokens/s`,
    `Avg generation throughput: ${f.genThroughput.toFixed(1)} tokens/s`,
    `Running: ${f.running} reqs`,
    `Waiting: ${f.waiting} reqs`,
  ];
  if (f.preemptions > 0) parts.push(`Preemptions: ${f.preemptions}`);
  parts.push(
    `GPU KV cache usage: ${(f.kvUsage * 100).toFixed(1)}%`,
    `Prefix cache hit rate: ${(f.prefixHitRate * 100).toFixed(1)}%`,
  );
  return `Engine ${String(f.engine).padStart(3, '0')}: ${parts.join(', ')}`;
}

const SITE_PACKAGES = '/usr/local/lib/python3.12/dist-packages';

/**
 * vllm/v1/engine/core.py run_engine_core (0.8 → main 2026-08): `logger.exception("EngineCore encountered a
 * fatal error.")` around `engine_core.run_busy_loop()`, then `engine_core._send_engine_dead()`. The traceback
 * is a plausible CUDA fault in the model step (paths per a pip install; line numbers vary per build).
 */
export const ENGINE_CORE_FATAL = 'EngineCore encountered a fatal error.';
export function engineCoreFatalRecord(): string[] {
  return [
    ENGINE_CORE_FATAL,
    'Traceback (most recent call last):',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/core.py", line 859, in run_engine_core`,
    '    engine_core.run_busy_loop()',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/core.py", line 886, in run_busy_loop`,
    '    self._process_engine_step()',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/core.py", line 915, in _process_engine_step`,
    '    outputs, model_executed = self.step_fn()',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/core.py", line 343, in step`,
    '    model_output = self.model_executor.execute_model(scheduler_output)',
    `  File "${SITE_PACKAGES}/vllm/v1/executor/multiproc_executor.py", line 238, in execute_model`,
    '    (output, ) = self.collective_rpc(',
    `  File "${SITE_PACKAGES}/vllm/v1/executor/multiproc_executor.py", line 305, in collective_rpc`,
    '    raise RuntimeError(',
    "RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was encountered', please check the stack trace above for the root cause",
  ];
}

/**
 * vllm/v1/engine/exceptions.py EngineDeadError.__init__: ENGINE_DEAD_MESSAGE = "EngineCore encountered an
 * issue. See stack trace (above) for the root cause."
 */
export const ENGINE_DEAD_MESSAGE =
  'EngineCore encountered an issue. See stack trace (above) for the root cause.';

/**
 * vllm/v1/engine/async_llm.py AsyncLLM output_handler (0.8 → main 2026-08): `logger.exception("AsyncLLM
 * output_handler failed.")` when the core client raises EngineDeadError (core_client.py
 * _ensure_alive/process_outputs_socket on the ENGINE_CORE_DEAD message), then propagate_error to every
 * request.
 */
export function outputHandlerFailedRecord(): string[] {
  return [
    'AsyncLLM output_handler failed.',
    'Traceback (most recent call last):',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/async_llm.py", line 498, in output_handler`,
    '    outputs = await engine_core.get_output_async()',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/core_client.py", line 894, in get_output_async`,
    '    raise self._format_exception(outputs) from None',
    `vllm.v1.engine.exceptions.EngineDeadError: ${ENGINE_DEAD_MESSAGE}`,
  ];
}

/**
 * vllm/entrypoints/openai/serving_chat.py chat_completion_stream_generator (main 2026-08): an exception inside
 * a stream is logged with `logger.exception("Error in chat completion stream generator.")` and sent to the
 * client as an error chunk (the 200 is already out).
 */
export function streamGeneratorErrorRecord(): string[] {
  return [
    'Error in chat completion stream generator.',
    'Traceback (most recent call last):',
    `  File "${SITE_PACKAGES}/vllm/entrypoints/openai/serving_chat.py", line 592, in chat_completion_stream_generator`,
    '    async for res in result_generator:',
    `  File "${SITE_PACKAGES}/vllm/v1/engine/async_llm.py", line 437, in generate`,
    '    out = q.get_nowait() or await q.get()',
    `vllm.v1.engine.exceptions.EngineDeadError: ${ENGINE_DEAD_MESSAGE}`,
  ];
}

/**
 * vllm/distributed/device_communicators/shm_broadcast.py MessageQueue.acquire_write / acquire_read (0.6 → main
 * 2026-08), logger.info every VLLM_RINGBUFFER_WARNING_INTERVAL seconds (default 60) while no block frees up.
 */
export function shmBroadcastWait(seconds: number): string {
  return (
    `No available shared memory broadcast block found in ${seconds} seconds. This typically happens when ` +
    'some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).'
  );
}

export interface NixlFailure {
  requestId: string;
  engineId: string;
  remoteEngineId: string;
  remoteHost: string;
  remotePort: number;
  blocks: number;
}

/**
 * vllm/distributed/kv_transfer/kv_connector/v1/nixl/worker.py NixlConnectorWorker._log_failure (main 2026-08):
 * `logger.error("NIXL transfer failure: %s | Context: %s", failure_type, context)`, failure_type suffixed with
 * `. {msg}`, context a dict (printed as Python's repr) of failure_type, request_id, engine_id, the remote side
 * from the request's metadata, and the extra fields (`xfer_state` from _pop_done_transfers).
 */
export function nixlTransferFailure(f: NixlFailure): string {
  const blocks = Array.from({ length: Math.min(f.blocks, 10) }, (_, i) => i + 1).join(', ');
  return (
    `NIXL transfer failure: transfer_failed. Marking blocks as invalid | Context: {'failure_type': 'transfer_failed', ` +
    `'request_id': '${f.requestId}', 'engine_id': '${f.engineId}', 'remote_engine_id': '${f.remoteEngineId}', ` +
    `'remote_request_id': '${f.requestId}', 'remote_host': '${f.remoteHost}', 'remote_port': ${f.remotePort}, ` +
    `'num_local_blocks': ${f.blocks}, 'num_remote_blocks': ${f.blocks}, 'local_block_ids_sample': [${blocks}], ` +
    `'xfer_state': 'ERR'}`
  );
}
