// SGLang's log line formats (srt/utils.py configure_logger, the signatures' own files, managers/
// scheduler_metrics_mixin.py). Every literal here is quoted from upstream source (named next to it); values
// are the simulator's. Two dialects: `current` (SGLang main, 2026-08) and `legacy` (mid-2025, @01bb3c8), so
// both stay tested. Kept free of I/O so a fixture test can compare them with the format strings
// in test/fixtures/sim/sglang-formats.json.
import { STATUS_CODES } from 'node:http';

/** Which SGLang build's log lines the simulator prints. */
export type SglangFormat = 'current' | 'legacy';
export const SGLANG_FORMATS: readonly SglangFormat[] = ['current', 'legacy'];

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Python logging datefmt "%Y-%m-%d %H:%M:%S" in local time, as SGLang's configure_logger prints it. */
export function pyTime(at: Date): string {
  return (
    `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ` +
    `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`
  );
}

/** `[time TP0] message`: scheduler-process lines carry the rank prefix. */
export function schedulerLine(at: Date, message: string, tpRank = 0): string {
  return `[${pyTime(at)} TP${tpRank}] ${message}`;
}

/** `[time] message`: tokenizer/HTTP-process lines have no rank prefix. */
export function httpLine(at: Date, message: string): string {
  return `[${pyTime(at)}] ${message}`;
}

/** uvicorn access line: '[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'. */
export function uvicornAccessLine(at: Date, clientAddr: string, requestLine: string, status: number): string {
  return `[${pyTime(at)}] INFO:     ${clientAddr} - "${requestLine}" ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
}

export interface PrefillBatchFields {
  newSeq: number;
  newToken: number;
  cachedToken: number;
  tokenUsage: number;
  runningReq: number;
  queueReq: number;
  preallocReq: number;
  inflightReq: number;
  inputThroughput: number;
}

/**
 * log_prefill_stats with disaggregation_mode == PREFILL. legacy: @01bb3c8 (note the trailing ", "). current
 * (2026; PR sgl-project/sglang#30951 added `#optimistic-req`):
 * `#pending-token` after `#queue-req`, `#bootstrap-req` in place of `#prealloc-req`, `#optimistic-req`, the
 * graph flag, and no trailing comma.
 */
export function prefillBatchMessage(f: PrefillBatchFields, format: SglangFormat = 'legacy'): string {
  const head =
    `Prefill batch, #new-seq: ${f.newSeq}, #new-token: ${f.newToken}, #cached-token: ${f.cachedToken}, ` +
    `token usage: ${f.tokenUsage.toFixed(2)}, #running-req: ${f.runningReq}, #queue-req: ${f.queueReq}, `;
  if (format === 'current') {
    return (
      head +
      `#pending-token: 0, #bootstrap-req: ${f.preallocReq}, #inflight-req: ${f.inflightReq}, #optimistic-req: 0, ` +
      `cuda graph: False, input throughput (token/s): ${f.inputThroughput.toFixed(2)}`
    );
  }
  return (
    head +
    `#prealloc-req: ${f.preallocReq}, #inflight-req: ${f.inflightReq}, ` +
    `input throughput (token/s): ${f.inputThroughput.toFixed(2)}, `
  );
}

export interface DecodeBatchFields {
  runningReq: number;
  tokens: number;
  tokenUsage: number;
  preallocatedUsage: number;
  preallocReq: number;
  transferReq: number;
  retractedReq: number;
  genThroughput: number;
  queueReq: number;
}

/**
 * log_decode_stats with disaggregation_mode == DECODE on a CUDA device (scheduler_metrics_mixin.py). legacy:
 * @01bb3c8 with its trailing ", "; current (2026): the same fields, no trailing
 * comma.
 */
export function decodeBatchMessage(f: DecodeBatchFields, format: SglangFormat = 'legacy'): string {
  const msg =
    `Decode batch, #running-req: ${f.runningReq}, #token: ${f.tokens}, token usage: ${f.tokenUsage.toFixed(2)}, ` +
    `pre-allocated usage: ${f.preallocatedUsage.toFixed(2)}, #prealloc-req: ${f.preallocReq}, ` +
    `#transfer-req: ${f.transferReq}, #retracted-req: ${f.retractedReq}, cuda graph: True, ` +
    `gen throughput (token/s): ${f.genThroughput.toFixed(2)}, #queue-req: ${f.queueReq}`;
  return format === 'current' ? msg : `${msg}, `;
}

/** KVTransferError.__str__: f"KVTransferError(bootstrap_room={room}): {reason}". */
export function kvTransferError(room: number, reason: string): string {
  return `KVTransferError(bootstrap_room=${room}): ${reason}`;
}

export function prefillBootstrapFailed(rid: string, room: number, reason: string, tpRank = 0): string {
  return (
    `Prefill bootstrap failed for request rank=${tpRank} req.rid='${rid}' req.bootstrap_room=${room} ` +
    `with exception ${kvTransferError(room, reason)}`
  );
}

export function decodeTransferFailed(rid: string, room: number, reason: string, tpRank = 0): string {
  return (
    `Decode transfer failed for request rank=${tpRank} decode_req.req.rid='${rid}' ` +
    `decode_req.req.bootstrap_room=${room} with exception ${kvTransferError(room, reason)}`
  );
}

/** disaggregation/prefill.py process_disagg_prefill_inflight_queue: a request already past bootstrap. */
export function prefillTransferFailed(rid: string, room: number, reason: string, tpRank = 0): string {
  return (
    `Prefill transfer failed for request rank=${tpRank} req.rid='${rid}' req.bootstrap_room=${room} ` +
    `with exception ${kvTransferError(room, reason)}`
  );
}

/**
 * disaggregation/decode.py DecodePreallocQueue._update_handshake_waiters (2025-09 → 2026-08): a request still
 * in the handshake (prealloc) stage: `Decode handshake failed for request rank={tp_rank} {decode_req.req.rid=}
 * {decode_req.req.bootstrap_room=} with exception {e}`.
 */
export function decodeHandshakeFailed(rid: string, room: number, reason: string, tpRank = 0): string {
  return (
    `Decode handshake failed for request rank=${tpRank} decode_req.req.rid='${rid}' ` +
    `decode_req.req.bootstrap_room=${room} with exception ${kvTransferError(room, reason)}`
  );
}

const hms = (at: Date) => `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;

/** http_server.py health_generate, on timeout (python/sglang/srt/entrypoints/http_server.py). */
export function healthCheckFailed(seconds: number, tic: Date, lastHeartbeat: Date): string {
  return (
    `Health check failed. Server couldn't get a response from detokenizer for last ${seconds} seconds. ` +
    `tic start time: ${hms(tic)}. last_heartbeat time: ${hms(lastHeartbeat)}`
  );
}

export const ABORTED_BY_ABORTREQ = 'Aborted by AbortReq.';

export function timedOutReason(
  room: number,
  elapsedMs: number,
  poll: 'Bootstrapping' | 'WaitingForInput',
): string {
  return `Request ${room} timed out after ${(elapsedMs / 1000).toFixed(1)}s in KVPoll.${poll}`;
}

export const PREFILL_BOOTSTRAP_TIMEOUT_WARNING =
  'Some requests timed out when bootstrapping, which means prefill instances fail to receive the KV indices ' +
  "from the decode instance of this request. If a greater mean TTFT is acceptable, you can 'export " +
  "SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=600' (10 minutes) to relax the timeout condition.";

export const DECODE_WAITING_TIMEOUT_WARNING =
  'Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater mean TTFT is ' +
  "acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' (10 minutes) to relax the timeout " +
  'condition. ';

/** nixl/conn.py NixlKVReceiver.poll (≤ 2026-05; removed upstream): legacy dialect only. */
export function waitingTimeoutError(room: number): string {
  return `Request ${room} waiting_timeout`;
}

/**
 * disaggregation/common/conn.py CommonKVManager._handle_node_failure (current: `requests affected`, logged once
 * the heartbeat missed SGLANG_DISAGGREGATION_HEARTBEAT_MAX_FAILURE times) and nixl/conn.py (legacy: `transfers
 * affected`, at once).
 */
export function lostPrefillConnection(
  bootstrapAddr: string,
  affected: number,
  format: SglangFormat = 'legacy',
): string {
  return `${lostPrefillReason(bootstrapAddr)}, ${affected} ${format === 'current' ? 'requests' : 'transfers'} affected`;
}

/** The failure reason _handle_node_failure records for each affected room (common/conn.py record_failure). */
export function lostPrefillReason(bootstrapAddr: string): string {
  return `Lost connection with prefill instance (bootstrap_addr: ${bootstrapAddr})`;
}

/** common/conn.py heartbeat_checker, on each failed GET {bootstrap_addr}/health (logger.info). */
export function attemptingReconnect(bootstrapAddr: string): string {
  return `Attempting to reconnect to ${bootstrapAddr}...`;
}

/**
 * CPython threading.excepthook output for the NIXL bootstrap_thread assertion (disaggregation/nixl/conn.py),
 * written to stderr with no timestamp prefix. Paths and line numbers vary per install; these are a plausible
 * container layout.
 */
export function bootstrapThreadTraceback(threadNumber: number): string[] {
  return [
    `Exception in thread Thread-${threadNumber} (bootstrap_thread):`,
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
    '    self.run()',
    '  File "/usr/lib/python3.11/threading.py", line 982, in run',
    '    self._target(*self._args, **self._kwargs)',
    '  File "/sgl-workspace/sglang/python/sglang/srt/disaggregation/nixl/conn.py", line 1352, in bootstrap_thread',
    '    waiting_req_bytes[0] == GUARD',
    "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  ];
}

/** sgl-model-gateway (smg) line shape: `2026-02-26 13:55:38  INFO smg::server: …/src/server.rs:794: …`. */
export function routerLine(
  at: Date,
  level: 'INFO' | 'WARN' | 'ERROR',
  module: string,
  src: string,
  msg: string,
) {
  return `${pyTime(at)} ${level.padStart(5)} ${module}: ${src}: ${msg}`;
}
