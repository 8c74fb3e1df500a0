// The streaming load client: one /v1/chat/completions stream per call over a given undici dispatcher. The hot
// path scans SSE text with indexOf instead of parsing JSON, so one core can drive tens of thousands of tokens/s
// (bench/verify-client); only the usage and error chunks (and, with onEvent, what the caller asks for) are parsed.
import type { Dispatcher } from 'undici';
import { Client } from '../lib/http/undici.js';
import { redactor } from '../lib/redact.js';
import { answerBounds, tokenCount, usageCount } from './answer-bounds.js';
import { requestBody, type RequestBody } from './prompt-text.js';
import { readCapped } from './read-capped.js';
import type { Target } from './target.js';
import { TurnCollector, type Turn } from './turn.js';

/** Longest SSE event accepted; anything beyond is a broken stream, not a completion. */
const MAX_EVENT_CHARS = 1024 * 1024;

export interface StreamOptions {
  messages: unknown[];
  maxTokens: number;
  /** Extra request fields (tools, tool_choice, temperature). */
  extra?: Record<string, unknown>;
  /** Whole-request limit; on expiry the request is aborted (its socket destroyed). */
  timeoutMs: number;
  /** Called with each event's `data` text (not "[DONE]"), for callers that need the content. */
  onEvent?(data: string): void;
  /** Keep the answer's text and tool calls (within the answer's bounds) as `turn`. */
  collect?: boolean;
  /** Called once with the time of the first token. */
  onFirstToken?(): void;
  /** Keep each token chunk's arrival time (ms from the start), for inter-token latency. */
  recordTokenTimes?: boolean;
  /** Aborts the request from outside (e.g. a hard cut). */
  signal?: AbortSignal;
  now?: () => number;
}

export interface StreamResult {
  ok: boolean;
  status: number;
  /** The token count (answer-bounds.ts tokenCount): the chunks counted, or usage within max_tokens. */
  tokens: number;
  /** Token chunks counted in the stream. */
  chunks: number;
  ttftMs: number;
  totalMs: number;
  /** usage.prompt_tokens when the server sent it. */
  promptTokens?: number;
  /** Arrival time of each token chunk (ms from the start), with recordTokenTimes. */
  tokenTimesMs?: number[];
  /** The answer, with `collect`. */
  turn?: Turn;
  /**
   * The server had closed the connection this request was sent on before it answered (a kept-alive socket it
   * closed after the previous response, as llama-server does): the request was sent again on a new connection.
   */
  reconnected?: boolean;
  /** Set when !ok: what went wrong, in a few words. */
  error?: string;
  timedOut: boolean;
  done: boolean;
}

const CONTENT = '"content":"';
// SGLang's field, and vLLM's since its rename (src/sources/probes/reasoning-field.ts).
const REASONING = '"reasoning_content":"';
const REASONING_VLLM = '"reasoning":"';
const TOOL_CALLS = '"tool_calls":[{';

/** Whether one chunk's JSON text carries a generated token (text, reasoning or a tool-call delta). */
export function isTokenChunk(data: string): boolean {
  let i = data.indexOf(CONTENT);
  if (i >= 0 && data.charCodeAt(i + CONTENT.length) !== 34) return true;
  i = data.indexOf(REASONING);
  if (i >= 0 && data.charCodeAt(i + REASONING.length) !== 34) return true;
  i = data.indexOf(REASONING_VLLM);
  if (i >= 0 && data.charCodeAt(i + REASONING_VLLM.length) !== 34) return true;
  return data.includes(TOOL_CALLS);
}

/** Incremental SSE scan: splits events on blank lines and hands each event's data text to `onData`. */
export class SseScanner {
  private carry = '';

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: string): void {
    let text = this.carry + chunk;
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n\n', start);
      if (end < 0) break;
      this.event(text, start, end);
      start = end + 2;
    }
    this.carry = start === 0 ? text : text.slice(start);
    if (this.carry.length > MAX_EVENT_CHARS)
      throw new Error(`SSE event longer than ${MAX_EVENT_CHARS} characters`);
  }

  /** True when the stream stopped inside an event. */
  get pending(): boolean {
    return this.carry.trim() !== '';
  }

  private event(text: string, start: number, end: number): void {
    // Engines write one `data: ` line per event; multi-line and comment events take the slow path.
    if (text.startsWith('data: ', start) && text.indexOf('\n', start) >= end) {
      this.onData(text.slice(start + 6, end));
      return;
    }
    const lines = text.slice(start, end).split('\n');
    const data: string[] = [];
    for (const l of lines) if (l.startsWith('data:')) data.push(l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length > 0) this.onData(data.join('\n'));
  }
}

/**
 * A request that failed this way, this soon, was sent on a connection the server had already closed: nothing of
 * an answer came back, the peer's close arrived within a round trip of the write. Sent again on a new
 * connection, once; a server that drops every connection fails the second time.
 */
const PEER_CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
export const RECONNECT_WITHIN_MS = 2_000;

/** One chat completion, streamed and read within the answer's bounds (answer-bounds.ts). */
export async function streamChat(
  dispatcher: Dispatcher,
  target: Target,
  opts: StreamOptions,
): Promise<StreamResult> {
  const body = requestBody({
    model: target.model,
    messages: opts.messages,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: opts.maxTokens,
    ...opts.extra,
  });
  const first = await attempt(dispatcher, target, body, opts);
  if (!closedBeforeAnswer(first, opts)) return first.r;
  const fresh = new Client(target.origin, { pipelining: 1 });
  try {
    return { ...(await attempt(fresh, target, body, opts)).r, reconnected: true };
  } finally {
    await fresh.destroy().catch(() => {});
  }
}

function closedBeforeAnswer({ r, cause }: Attempt, opts: StreamOptions): boolean {
  return (
    !r.ok &&
    r.status === 0 &&
    !r.timedOut &&
    !opts.signal?.aborted &&
    cause !== undefined &&
    PEER_CLOSED.has(cause) &&
    r.totalMs < RECONNECT_WITHIN_MS
  );
}

/** The detail line a step adds when some of its requests were sent again (none when none was). */
export function reconnectedNote(results: readonly Pick<StreamResult, 'reconnected'>[]): string[] {
  const n = results.filter((r) => r.reconnected).length;
  return n === 0
    ? []
    : [
        `${n} of ${results.length} requests found their connection closed by the server (kept alive, then closed after the previous response) and were sent again on a new one`,
      ];
}

/** One try of a request: its result, and the error code when it ended on an error. */
interface Attempt {
  r: StreamResult;
  cause?: string;
}

async function attempt(
  dispatcher: Dispatcher,
  target: Target,
  body: RequestBody,
  opts: StreamOptions,
): Promise<Attempt> {
  const now = opts.now ?? performance.now.bind(performance);
  const started = now();
  const bounds = answerBounds(opts.maxTokens);
  let cause: string | undefined;
  const r: StreamResult = {
    ok: false,
    status: 0,
    tokens: 0,
    chunks: 0,
    ttftMs: NaN,
    totalMs: NaN,
    timedOut: false,
    done: false,
  };
  let usage: number | undefined;
  let cut: string | undefined;
  const times: number[] | undefined = opts.recordTokenTimes ? [] : undefined;
  if (times) r.tokenTimesMs = times;
  const turn = opts.collect ? new TurnCollector(bounds.maxKeptChars) : undefined;
  let serverError: string | undefined;
  const ac = new AbortController();
  const stop = (why: string) => {
    cut ??= why;
    ac.abort(new Error(why));
  };
  const timer = setTimeout(() => {
    r.timedOut = true;
    ac.abort(new Error('timeout'));
  }, opts.timeoutMs);
  const onOuterAbort = () => ac.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const scanner = new SseScanner((data) => {
    if (cut !== undefined) return;
    if (data === '[DONE]') {
      r.done = true;
      return;
    }
    if (isTokenChunk(data)) {
      if (r.chunks >= bounds.maxChunks) {
        stop(
          `more than ${bounds.maxChunks} token chunks for max_tokens ${opts.maxTokens}: the answer ran past max_tokens`,
        );
        return;
      }
      times?.push(now() - started);
      if (r.chunks++ === 0) {
        r.ttftMs = now() - started;
        opts.onFirstToken?.();
      }
    } else if (data.includes('"choices":[]') && data.includes('"usage":{')) {
      try {
        const u = (JSON.parse(data) as { usage?: { completion_tokens?: unknown; prompt_tokens?: unknown } })
          .usage;
        usage = usageCount(u?.completion_tokens) ?? usage;
        r.promptTokens = usageCount(u?.prompt_tokens) ?? r.promptTokens;
      } catch {
        // Not JSON: no usage figure.
      }
    } else if (data.includes('"object":"error"') || data.startsWith('{"error"')) {
      serverError = errorText(data);
    }
    turn?.event(data);
    if (turn?.overflow !== undefined) stop(`${turn.overflow} for max_tokens ${opts.maxTokens}`);
    opts.onEvent?.(data);
  });
  try {
    const res = await dispatcher.request({
      origin: target.origin,
      method: 'POST',
      path: target.chatPath,
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        'content-length': String(body.length),
        accept: 'text/event-stream',
      },
      body: body.open(),
      signal: ac.signal,
    });
    r.status = res.statusCode;
    if (res.statusCode !== 200) {
      const text = redactor.clip(await readCapped(res.body), 300, { end: true });
      r.error = `HTTP ${res.statusCode}${text ? `: ${errorText(text)}` : ''}`;
      return { r };
    }
    res.body.setEncoding('utf8');
    let bytes = 0;
    for await (const chunk of res.body) {
      const text = chunk as string;
      bytes += text.length;
      if (bytes > bounds.maxBytes) {
        stop(`more than ${bounds.maxBytes} bytes for max_tokens ${opts.maxTokens} without [DONE]`);
        break;
      }
      scanner.push(text);
      if (cut !== undefined) break;
    }
    if (cut !== undefined) r.error = cut;
    else if (serverError !== undefined) r.error = `error chunk: ${serverError}`;
    else if (!r.done)
      r.error = scanner.pending ? 'stream ended inside an event' : 'stream ended without [DONE]';
    else r.ok = true;
    return { r };
  } catch (err) {
    cause = causeCode(err);
    r.error =
      cut ??
      (r.timedOut
        ? `no [DONE] within ${(opts.timeoutMs / 1000).toFixed(1)}s (${r.chunks} token chunks${r.status ? `, HTTP ${r.status}` : ', no headers'})`
        : opts.signal?.aborted
          ? 'cut'
          : describe(err));
    return { r, cause };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuterAbort);
    r.totalMs = now() - started;
    const count = tokenCount(r.chunks, usage, opts.maxTokens);
    r.tokens = count.tokens;
    if (count.error !== undefined && r.ok) {
      r.ok = false;
      r.error = count.error;
    }
    if (turn) r.turn = turn.turn();
  }
}

function errorText(text: string): string {
  try {
    const o = JSON.parse(text) as { message?: unknown; error?: { message?: unknown } };
    const m = o.error?.message ?? o.message;
    if (typeof m === 'string') return redactor.clip(m, 200);
  } catch {
    // Not JSON: show the raw start.
  }
  return redactor.clip(text, 200);
}

function causeCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code ?? e.cause?.code;
}

export function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const msg = e.cause?.message ?? e.message ?? String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}
