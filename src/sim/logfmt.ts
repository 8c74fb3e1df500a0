// SGLang's log line formats (engine-signals.md §0, §1, §2). Every literal here is quoted from the reference;
// values are the simulator's. Kept free of I/O so a fixture test can compare them with the reference strings.
import { STATUS_CODES } from 'node:http';

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

/** log_prefill_stats @01bb3c8 with disaggregation_mode == PREFILL (note the trailing ", "). */
export function prefillBatchMessage(f: PrefillBatchFields): string {
  return (
    `Prefill batch, #new-seq: ${f.newSeq}, #new-token: ${f.newToken}, #cached-token: ${f.cachedToken}, ` +
    `token usage: ${f.tokenUsage.toFixed(2)}, #running-req: ${f.runningReq}, #queue-req: ${f.queueReq}, ` +
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

/** log_decode_stats @01bb3c8 with disaggregation_mode == DECODE on a CUDA device. */
export function decodeBatchMessage(f: DecodeBatchFields): string {
  return (
    `Decode batch, #running-req: ${f.runningReq}, #token: ${f.tokens}, token usage: ${f.tokenUsage.toFixed(2)}, ` +
    `pre-allocated usage: ${f.preallocatedUsage.toFixed(2)}, #prealloc-req: ${f.preallocReq}, ` +
    `#transfer-req: ${f.transferReq}, #retracted-req: ${f.retractedReq}, cuda graph: True, ` +
    `gen throughput (token/s): ${f.genThroughput.toFixed(2)}, #queue-req: ${f.queueReq}, `
  );
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

const hms = (at: Date) => `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;

/** http_server.py health_generate, on timeout (engine-signals.md §1.8). */
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

export function waitingTimeoutError(room: number): string {
  return `Request ${room} waiting_timeout`;
}

export function lostPrefillConnection(bootstrapAddr: string, affected: number): string {
  return `Lost connection with prefill instance (bootstrap_addr: ${bootstrapAddr}), ${affected} transfers affected`;
}

/**
 * CPython threading.excepthook output for the NIXL bootstrap_thread assertion (§1.1), written to stderr with
 * no timestamp prefix. Paths and line numbers vary per install; these are a plausible container layout.
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
