// Engine gauges from the periodic lines engines print: SGLang `Prefill batch` / `Decode batch` (SGLang
// managers/scheduler_metrics_mixin.py, all variants since @01bb3c8) and vLLM's `Engine 000:` stats line
// (vllm/v1/metrics/loggers.py LoggingStatLogger.log @a6f0308).
import type { EngineGauge } from '../../config/schema.js';
import { setEngineGauges } from '../engines/gauges.js';
import type { EngineMetrics } from '../../metrics.js';
import type { EngineSignal } from '../../core/signals.js';
import type { EngineLineKind } from './packs/index.js';
import { LINE_STAMP, stampToMs } from './line-time.js';
import { batchLineClose } from './batch-lines.js';
import { MAX_PREFIX, prefixAllows } from './request-echo.js';

export type EngineValues = Partial<Record<EngineGauge, number>>;

/** One periodic engine line: its values, the rank that printed it, and whether it reports work done. */
export interface EngineLine {
  values: EngineValues;
  /** SGLang `DP1` of `[time DP1 TP1 EP1]` → `1`; vLLM `Engine 001:` → `1`; `0` when the line names none. */
  rank: string;
  /** False when the line itself says nothing was computed (vLLM prints its stats line every 10 s regardless). */
  progress: boolean;
  /** The line's own timestamp text (`2026-08-10 14:00:01` or vLLM's `08-10 14:00:01`), when it has one. */
  stamp?: string;
  /**
   * The engine prints the line every interval whether or not the rank works (vLLM's stats line), so the rank's
   * own running count and tokens are judged per rank. SGLang prints batch lines only when a batch ran: a rank
   * that stops printing may be idle or stuck, and its last line is no per-rank evidence.
   */
  periodic?: boolean;
}

/** A log line's own timestamp (line-time.ts: SGLang, vLLM, glog/torch, ISO 8601, Rust tracing). */
export { LINE_STAMP };
/** SGLang's `[YYYY-MM-DD HH:MM:SS…` read by position (most engine lines), else the regex over the prefix. */
const stampOf = (line: string): string | undefined => stampIn(line, 0, line.length);
/** stampOf of the line s[from, end): nothing past `end` is read (s may be a whole chunk). */
const stampIn = (s: string, from: number, end: number): string | undefined =>
  end - from > 11 &&
  s.charCodeAt(from) === 91 /* [ */ &&
  s.charCodeAt(from + 5) === 45 /* - */ &&
  s.charCodeAt(from + 11) === 32
    ? s.slice(from + 1, Math.min(end, from + 20))
    : LINE_STAMP.exec(s.slice(from, Math.min(end, from + 160)))?.[0];

/** The literal that finds each kind of line in a chunk (searched backwards: only the last one counts). */
export const ENGINE_LINE_MARKERS: Record<EngineLineKind, string[]> = {
  sglang_batch: ['Prefill batch', 'Decode batch'],
  vllm_stats: ['Avg prompt throughput:'],
};

/** The header of a batch line, read where the engine's logger puts it (batchHeaderAt): sticky, never searched for. */
const BATCH = /(?:Prefill|Decode) batch(?: \[\d+\])?[.,] /y;
/** A `docker compose logs` service prefix (`svc-1  | `) before the engine's own (loggers.ts COMPOSE). */
const COMPOSE = /[\w.-]{1,64} {1,16}\| /y;

/**
 * Where the batch header of the line s[from, end) starts, or -1: only where SGLang's logger prints it, right
 * after the record's prefix at the line's start, `[%(asctime)s{prefix}] %(message)s` (sgl-project/sglang
 * python/sglang/srt/utils/common.py configure_logger @ a343daaf), or at the start of a record's message (a JSON
 * formatter's `message` field; scanner.ts viewOf). The message itself is the scheduler's own f-string, which
 * starts with the header: `f"Prefill batch{iter_msg}, "` and `msg = f"Decode batch{iter_msg}, #running-req: …"`
 * (python/sglang/srt/managers/scheduler_metrics_mixin.py log_prefill_stats:139 / log_decode_stats:267 @ 01bb3c80,
 * each then `logger.info(…)`). A header anywhere else is user text: a `--log-requests` echo quoting a prompt
 * (`Receive: obj=GenerateReqInput(text='… Decode batch, #running-req: 64 …')`) or a prompt's raw line inside
 * some other record (issue 37 item 4: one prompt set running=64 and token usage 0.95).
 */
function batchHeaderAt(s: string, from: number, end: number): number {
  if (s.startsWith('Decode batch', from) || s.startsWith('Prefill batch', from)) return from;
  let p = from;
  if (s.charCodeAt(p) !== 91 /* [ */) {
    COMPOSE.lastIndex = p;
    if (!COMPOSE.test(s) || COMPOSE.lastIndex >= end) return -1;
    p = COMPOSE.lastIndex;
  }
  const close = batchLineClose(s, p, end);
  return close < 0 ? -1 : close + 2;
}

// managers/scheduler_metrics_mixin.py log_prefill_stats / log_decode_stats, SGLang 2025-05 → main 2026-08.
// Current PD prefill: `#unbootstrapped-req`, `#transferring-req`; older: `#bootstrap-req`/`#prealloc-req`,
// `#inflight-req`/`#transfer-req`. Fields with no gauge (`#pending-token`, `#optimistic-req`, `accept len`,
// `#retracted-req`, …) are parsed and ignored.
const SGLANG_KEYS: Record<string, EngineGauge> = {
  '#running-req': 'running',
  '#queue-req': 'queued',
  '#prealloc-req': 'preallocQueue',
  '#bootstrap-req': 'preallocQueue',
  '#unbootstrapped-req': 'preallocQueue',
  '#transfer-req': 'transferQueue',
  '#inflight-req': 'transferQueue',
  '#transferring-req': 'transferQueue',
  'token usage': 'tokenUsage',
  'gen throughput (token/s)': 'genThroughput',
};
/** A field's value as SGLang prints a number (`12`, `0.67`; a trailing `\r` or space allowed). */
const NUMBER = /^\d+(?:\.\d+)?\s*$/;
// Usage when `token usage` is absent. Hybrid SWA/mamba builds print one usage per pool (`full token usage`,
// `swa token usage`, `mamba usage`) and no `token usage`; SGLang's own figure for the engine is the fullest pool,
// max(full, swa, mamba) (sgl-project/sglang@00b3dd7 python/sglang/srt/managers/scheduler_components/
// pool_stats_observer.py:74 PoolStats.get_max_pool_usage, which sets SchedulerStats.token_usage;
// get_prefill_usage_msg_parts:83 / get_decode_usage_msg_parts print the per-pool parts). Reading `full token
// usage` alone understated a hybrid engine's usage whenever another pool was the bottleneck. Without pool parts:
// HiSparse builds' `gpu token usage`, page-based ones' `page usage`.
const POOL_USAGES = ['full token usage', 'swa token usage', 'mamba usage'];
const USAGE_FALLBACKS = [...POOL_USAGES, 'gpu token usage', 'page usage'];

/**
 * What a kept field feeds: a gauge, the `#new-token` / `#new-seq` / `#cached-token` counts (progress, and our own
 * health probe's shape), or a usage fallback (its index).
 */
type FieldUse =
  { gauge: EngineGauge } | { newToken: true } | { count: 'newSeq' | 'cached' } | { fallback: number };
/**
 * The fields the parser keeps, by name length: a field's name is compared in place (startsWith) with the few of
 * its length, so no string is made for the dozen fields a line has that no gauge reads. The verdict timeline
 * parses a batch line per rank and second of a log: hundreds of thousands in a day's log.
 */
const FIELDS_BY_LENGTH: [string, FieldUse][][] = [];
for (const [name, use] of [
  ...Object.entries(SGLANG_KEYS).map(([k, gauge]): [string, FieldUse] => [k, { gauge }]),
  ['#new-token', { newToken: true }] as [string, FieldUse],
  ['#new-seq', { count: 'newSeq' }] as [string, FieldUse],
  ['#cached-token', { count: 'cached' }] as [string, FieldUse],
  ...USAGE_FALLBACKS.map((k, fallback): [string, FieldUse] => [k, { fallback }]),
]) {
  (FIELDS_BY_LENGTH[name.length] ??= []).push([name, use]);
}

/**
 * The same fields by length and middle character (its low 7 bits): a batch line has a dozen fields no gauge reads,
 * many of a kept field's length; one character read tells nearly all of them apart without a startsWith each.
 */
const FIELD_SLOTS = 128;
// Dense (filled, not assigned by slot): a sparse array is a dictionary, each lookup a hash probe.
const FIELDS_BY_SHAPE: ([string, FieldUse][] | undefined)[] = new Array<[string, FieldUse][] | undefined>(
  FIELDS_BY_LENGTH.length * FIELD_SLOTS,
).fill(undefined);
FIELDS_BY_LENGTH.forEach((fields, len) => {
  for (const f of fields) {
    const slot = len * FIELD_SLOTS + (f[0].charCodeAt(len >> 1) & (FIELD_SLOTS - 1));
    (FIELDS_BY_SHAPE[slot] ??= []).push(f);
  }
});

/** The kept field whose name is line[pos, colon), if any. */
function fieldAt(line: string, pos: number, colon: number): FieldUse | undefined {
  const len = colon - pos;
  if (len <= 0 || len >= FIELDS_BY_LENGTH.length) return undefined;
  const candidates =
    FIELDS_BY_SHAPE[len * FIELD_SLOTS + (line.charCodeAt(pos + (len >> 1)) & (FIELD_SLOTS - 1))];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (line.startsWith(c[0], pos)) return c[1];
  }
  return undefined;
}

/**
 * The number in line[from, end) as NUMBER reads it (digits, optional fraction, trailing whitespace), NaN when it
 * is none. Digits are summed in place; a value of at most 15 digits divided by a power of ten is exact to the
 * last bit (both operands are exact doubles and IEEE division rounds correctly), so it equals Number(text).
 * Anything else takes the regex and Number().
 */
function numberAt(line: string, from: number, end: number): number {
  let i = from;
  let mantissa = 0;
  let digits = 0;
  let scale = 1;
  for (; i < end; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    mantissa = mantissa * 10 + (c - 48);
    digits++;
  }
  if (digits > 0 && i < end && line.charCodeAt(i) === 46 /* . */) {
    const fracStart = ++i;
    for (; i < end; i++) {
      const c = line.charCodeAt(i);
      if (c < 48 || c > 57) break;
      mantissa = mantissa * 10 + (c - 48);
      digits++;
      scale *= 10;
    }
    if (i === fracStart) digits = 0; // `12.` is no number
  }
  let tail = i;
  while (tail < end && (line.charCodeAt(tail) === 32 || line.charCodeAt(tail) === 13)) tail++;
  if (digits > 0 && digits <= 15 && tail === end) return scale === 1 ? mantissa : mantissa / scale;
  const text = line.slice(from, end);
  return NUMBER.test(text) ? Number(text.trimEnd()) : NaN;
}

/** The DP rank in an SGLang scheduler prefix (`[2026-08-10 14:00:00 DP1 TP1 EP1] `), `0` without one. */
export function sglangRank(line: string): string {
  return sglangRankIn(line, 0, line.length);
}

/** sglangRank of the line s[from, end). */
function sglangRankIn(s: string, from: number, end: number): string {
  if (s.charCodeAt(from) !== 91 /* [ */) return '0';
  const close = s.indexOf(']', from);
  if (close < 0 || close >= end) return '0';
  // The first ` DP` of the line, looked for before the `]` only (after it, it is no rank): indexOf would search on
  // past the line in a chunk, and most prefixes have no DP part.
  let dp = -1;
  for (let i = from + 1; i + 2 < close; i++) {
    if (s.charCodeAt(i) === 32 && s.charCodeAt(i + 1) === 68 /* D */ && s.charCodeAt(i + 2) === 80 /* P */) {
      dp = i;
      break;
    }
  }
  if (dp < 0) return '0';
  let n = 0;
  let i = dp + 3;
  for (; i < close && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) n = n * 10 + s.charCodeAt(i) - 48;
  return i > dp + 3 ? String(n) : '0';
}

export function parseSglangBatch(line: string): EngineValues | undefined {
  return parseSglangLine(line)?.values;
}

export function parseSglangLine(line: string): EngineLine | undefined {
  return parseSglangAt(line, 0, line.length);
}

/** parseSglangAt's usage fallbacks by index (one array for every call: see there). */
const FALLBACK: (number | undefined)[] = new Array<number | undefined>(USAGE_FALLBACKS.length);

/**
 * parseSglangLine of the line s[from, end), read in place: the scanner's chunk text is one flat string, and the
 * verdict timeline parses a batch line per rank and second of a log (a slice per line, then a regex and a dozen
 * searches on the slice, cost more). `end` is the line's newline or the end of `s`; no search below reads past it:
 * a match found past `end` counts as none, and neither the header nor `: ` nor `, ` can straddle a newline.
 */
export function parseSglangAt(s: string, from: number, end: number): EngineLine | undefined {
  return parseSglangHeadAt(s, from, end, batchHeaderAt(s, from, end));
}

/**
 * parseSglangAt of a line whose batch header is known to start at `head` (batchHeaderAt's answer, -1: none): the
 * scanner's timeline walk found it already (batchLineClose on every line), and finding it again per parsed line
 * (an indexOf in the 64 KiB chunk text and two compares) was a tenth of the parser's cost.
 */
export function parseSglangHeadAt(
  s: string,
  from: number,
  end: number,
  head: number,
): EngineLine | undefined {
  if (head < 0) return undefined;
  BATCH.lastIndex = head;
  const m = BATCH.exec(s);
  if (!m || m.index + m[0].length > end) return undefined;
  const out: EngineValues = {};
  // Reused (reset here): an array and an object per line were garbage on every parsed batch line.
  const fallback = FALLBACK;
  fallback.fill(undefined);
  // `key: value, ` pairs, split by hand: the PAIR regex made a match array per field, a dozen per line.
  let newTokens: number | undefined;
  let newSeq: number | undefined;
  let cached: number | undefined;
  let any = false;
  for (let pos = m.index + m[0].length; pos < end;) {
    const colon = s.indexOf(': ', pos);
    if (colon < 0 || colon >= end) break;
    let stop = s.indexOf(', ', colon + 2);
    if (stop < 0 || stop >= end) stop = end;
    const use = fieldAt(s, pos, colon);
    if (use !== undefined) {
      const value = numberAt(s, colon + 2, stop);
      if (Number.isFinite(value)) {
        if ('gauge' in use) {
          out[use.gauge] = value;
          any = true;
        } else if ('newToken' in use) newTokens = value;
        else if ('count' in use) {
          if (use.count === 'newSeq') newSeq = value;
          else cached = value;
        } else fallback[use.fallback] = value;
      }
    }
    pos = stop + 2;
  }
  if (out.tokenUsage === undefined) {
    // The fullest pool when any pool part was printed, else the first fallback printed.
    let pool: number | undefined;
    for (let i = 0; i < POOL_USAGES.length; i++) {
      const v = fallback[i];
      if (v !== undefined && (pool === undefined || v > pool)) pool = v;
    }
    let k = -1;
    for (let i = 0; i < USAGE_FALLBACKS.length && k < 0; i++) if (fallback[i] !== undefined) k = i;
    if (pool !== undefined) {
      out.tokenUsage = pool;
      any = true;
    } else if (k >= 0) {
      out.tokenUsage = fallback[k];
      any = true;
    }
  }
  if (!any) return undefined;
  // A batch line is printed only when the scheduler ran a batch, and progress means tokens: a decode batch whose
  // `gen throughput (token/s)` is 0 or a prefill batch with `#new-token: 0` computed nothing
  // (scheduler_metrics_mixin.py log_decode_stats / log_prefill_stats print both fields).
  const decode = s.charCodeAt(m.index) === 68; /* D */
  const progress = decode
    ? out.genThroughput !== 0
    : newTokens !== 0 && !healthProbeShape(newTokens, newSeq, cached);
  return { values: out, rank: sglangRankIn(s, from, end), progress, stamp: stampIn(s, from, end) };
}

/**
 * A prefill batch of one sequence with one new token and nothing cached: the shape of SGLang's own health check,
 * a 1-token generation on `input_ids=[0]` (python/sglang/srt/entrypoints/http_server.py health_generate), which our
 * `/health` probe triggers on a PD prefill every interval. It is no evidence that user requests progress, so it
 * must not restart a stalled prefill's clock. A user request always has a cached or a longer prompt: a fully cached
 * prompt still prints its cached tokens.
 */
function healthProbeShape(
  newTokens: number | undefined,
  newSeq: number | undefined,
  cached: number | undefined,
): boolean {
  // Summed, not &&: each compare runs on every call. One first reached after the parser was optimized (the first
  // one-token prefill of a log) deoptimized it, and its recompile cost more than the compares (the bundle's minifier
  // folds separate consts back into &&).
  return (newTokens === 1 ? 1 : 0) + (newSeq === 1 ? 1 : 0) + (cached === 0 ? 1 : 0) === 3;
}

const VLLM_MARKER = 'Avg prompt throughput:';
const VLLM_NUM = (label: string) => new RegExp(`${label}: ([\\d.]+)`);
// v1/metrics/loggers.py LoggingStatLogger.log (0.8 → main 2026-08): `Engine 000: Avg prompt throughput: …
// tokens/s, Avg generation throughput: … tokens/s, Running: N reqs, Waiting: N reqs, GPU KV cache usage: …%`.
const VLLM = {
  prompt: VLLM_NUM('Avg prompt throughput'),
  gen: VLLM_NUM('Avg generation throughput'),
  engine: /Engine (\d+):/,
  running: VLLM_NUM('Running'),
  waiting: /(?:Waiting|Pending): ([\d.]+) reqs/,
  kv: /GPU KV cache usage: ([\d.]+)%/,
};

export function parseVllmStats(line: string): EngineValues | undefined {
  return parseVllmLine(line)?.values;
}

export function parseVllmLine(line: string): EngineLine | undefined {
  // The stats line is the logger's own message: its marker sits right after the logger's prefix (and `Engine 000: `),
  // never after a quote. A request echo quotes the prompt (`Received request …: prompt: '… Avg prompt throughput:
  // …'`), so a marker with a quote before it, or deep in the line, is user text (issue 37 item 4).
  const at = line.indexOf(VLLM_MARKER);
  if (at < 0 || at > MAX_PREFIX || !prefixAllows(line, at)) return undefined;
  const out: EngineValues = {};
  const num = (re: RegExp) => {
    const m = re.exec(line);
    return m ? Number(m[1]) : undefined;
  };
  const gen = num(VLLM.gen);
  if (gen !== undefined) out.genThroughput = gen;
  const running = num(VLLM.running);
  if (running !== undefined) out.running = running;
  const waiting = num(VLLM.waiting);
  if (waiting !== undefined) out.queued = waiting;
  const kv = num(VLLM.kv);
  if (kv !== undefined) out.tokenUsage = kv / 100;
  if (Object.keys(out).length === 0) return undefined;
  const engine = VLLM.engine.exec(line);
  const prompt = num(VLLM.prompt);
  return {
    values: out,
    rank: engine ? String(Number(engine[1])) : '0',
    // Printed every interval whether or not anything ran: zero throughput both ways is no progress.
    progress: (gen ?? 0) > 0 || (prompt ?? 0) > 0,
    stamp: stampOf(line),
    periodic: true,
  };
}

/**
 * Whether the marker found at `at` in the line s[from, end) (a line, or a JSON record's message) is where the engine
 * prints it: SGLang's batch header right after its logger prefix, vLLM's stats marker after a prefix without a quote.
 * The scanner asks this before a candidate line stands for its rank in a chunk: a request echo quoting a batch line
 * must not hide the rank's real line before it.
 */
export const ENGINE_LINE_OWN: Record<
  EngineLineKind,
  (s: string, from: number, end: number, at: number) => boolean
> = {
  sglang_batch: (s, from, end, at) => batchHeaderAt(s, from, end) === at,
  vllm_stats: (s, from, _end, at) => at - from <= MAX_PREFIX && prefixAllows(s.slice(from, at), at - from),
};

export const ENGINE_LINE_PARSERS: Record<EngineLineKind, (line: string) => EngineLine | undefined> = {
  sglang_batch: parseSglangLine,
  vllm_stats: parseVllmLine,
};

/** ENGINE_LINE_PARSERS of the line s[from, end) of a chunk's text (`end`: its newline or the end of `s`). */
export const ENGINE_LINE_PARSERS_AT: Record<
  EngineLineKind,
  (s: string, from: number, end: number) => EngineLine | undefined
> = {
  sglang_batch: parseSglangAt,
  vllm_stats: (s, from, end) => parseVllmLine(s.slice(from, end)),
};

/**
 * The rank of the engine line in buf[from, at) (its prefix, up to the marker), read on the bytes: the scanner
 * asks this for many lines per chunk, so no string is made.
 */
export const ENGINE_LINE_RANK: Record<EngineLineKind, (buf: Buffer, from: number, at: number) => string> = {
  // `[2026-08-10 14:00:00 DP1 TP1 EP1] Decode batch`: the DP part of the bracket.
  sglang_batch: (buf, from, at) => {
    if (buf[from] !== 91 /* [ */) return '0';
    for (let i = from + 1; i < at - 3; i++) {
      const c = buf[i];
      if (c === 93 /* ] */) break;
      if (c === 32 && buf[i + 1] === 68 /* D */ && buf[i + 2] === 80 /* P */) return digitsAt(buf, i + 3);
    }
    return '0';
  },
  // `Engine 001: Avg prompt throughput`
  vllm_stats: (buf, from, at) => {
    const i = buf.subarray(Math.max(from, at - 24), at).indexOf('Engine ', 0, 'latin1');
    return i < 0 ? '0' : digitsAt(buf, Math.max(from, at - 24) + i + 7);
  },
};

function digitsAt(buf: Buffer, i: number): string {
  let n = 0;
  let any = false;
  for (; i < buf.length && buf[i]! >= 48 && buf[i]! <= 57; i++) {
    n = n * 10 + buf[i]! - 48;
    any = true;
  }
  return any ? String(n) : '0';
}
/** Sets the engine gauges and builds the signal; `batch` is true for periodic batch/stats lines. */
export function applyEngineValues(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  values: EngineValues,
  nowMs: number,
  batch: boolean,
  progress?: boolean,
): EngineSignal {
  setEngineGauges(metrics, labels, values);
  if (batch) metrics.engineLastBatch.set(labels, nowMs / 1000);
  const sig: EngineSignal = { kind: 'engine', source: 'log', time: nowMs, ...labels };
  if (progress !== undefined) sig.progress = progress;
  addTotals(sig, values);
  return sig;
}

/** Sets engine values (a line's, or the totals over ranks) on a signal; fields `values` lacks stay unset. */
export function addTotals(sig: EngineSignal, values: EngineValues): void {
  if (values.running !== undefined) sig.running = values.running;
  if (values.queued !== undefined) sig.queued = values.queued;
  if (values.transferQueue !== undefined) sig.transferQueue = values.transferQueue;
  if (values.preallocQueue !== undefined) sig.preallocQueue = values.preallocQueue;
  if (values.genThroughput !== undefined) sig.genThroughput = values.genThroughput;
  if (values.tokenUsage !== undefined) sig.tokenUsage = values.tokenUsage;
}

/** Unix ms of a line timestamp (any stamp line-time.ts reads; zoneless ones as UTC), `year` for yearless ones. */
export function stampMs(stamp: string, year: number): number {
  // SGLang's `YYYY-MM-DD HH:MM:SS`, most stamps of a log, read by position (what stampToMs gives it: zoneless, UTC).
  if (stamp.length === 19 && stamp.charCodeAt(10) === 32) {
    const d = (i: number) => stamp.charCodeAt(i) - 48;
    const two = (i: number) => d(i) * 10 + d(i + 1);
    let digits = true;
    for (const i of STAMP_DIGITS) {
      const c = stamp.charCodeAt(i);
      if (c < 48 || c > 57) digits = false;
    }
    if (
      digits &&
      stamp.charCodeAt(4) === 45 &&
      stamp.charCodeAt(7) === 45 &&
      stamp.charCodeAt(13) === 58 &&
      stamp.charCodeAt(16) === 58
    ) {
      return Date.UTC(two(0) * 100 + two(2), two(5) - 1, two(8), two(11), two(14), two(17), 0);
    }
  }
  return stampToMs(stamp, year, true);
}

const STAMP_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
