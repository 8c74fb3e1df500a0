// One HTTP exchange for a probe: sends over the lease, moves the phase along (connect → headers → body),
// and reads bodies with a hard byte cap so a 50 MB answer is never buffered.
import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { ProbeFailure, type ProbeContext } from './types.js';
import { redactor } from '../../lib/redact.js';
import type { TimeoutPhase } from '../../core/signals.js';

export interface ProbeResponse {
  status: number;
  contentType: string;
  body: Dispatcher.ResponseData['body'];
}

export async function send(
  ctx: ProbeContext,
  req: { method: 'GET' | 'POST'; path: string; json?: unknown; bodyPhase: TimeoutPhase },
): Promise<ProbeResponse> {
  const { progress, lease } = ctx;
  const headers: Record<string, string> = { 'user-agent': 'wedgewatch-probe', ...ctx.headers };
  let body: string | undefined;
  if (req.json !== undefined) {
    const mode = 'requestId' in ctx.probe ? ctx.probe.requestId : 'off';
    let json = req.json;
    if (mode !== 'off' && typeof json === 'object' && json !== null && !Array.isArray(json)) {
      // Random, never derived from anything a user controls: the detector discounts abort lines carrying it.
      // SGLang takes the body's `rid` as the request id (entrypoints/openai/serving_base.py
      // _generate_request_id: `if rid := getattr(request, "rid", None): return rid`) and logs it on a PD abort;
      // vLLM takes `X-Request-Id` (entrypoints/openai serving _base_request_id).
      const id = `wedgewatch-${randomBytes(12).toString('hex')}`;
      ctx.progress.requestIds.push(id);
      headers['x-request-id'] = id;
      if (mode === 'rid') json = { ...(json as Record<string, unknown>), rid: id };
    }
    body = JSON.stringify(json);
    headers['content-type'] = 'application/json';
    headers.accept = 'text/event-stream, application/json';
  }
  const target = `${req.method} ${ctx.endpoint.url.replace(/\/$/, '')}${req.path} over ${ctx.conn}`;
  // Each request of a run starts its own phases and status: a later request's failure must not carry an earlier
  // one's HTTP 200 or "after the headers" (the tool-call matrix sends several).
  progress.status = undefined;
  progress.responseHeaders = false;
  const reused = lease.reused;
  progress.phase = reused ? 'headers' : 'connect';
  progress.mark(`${target}${reused ? ' (reusing the open connection)' : ' (new connection)'}`);
  const sentAt = progress.elapsed();
  const request = () =>
    lease.client.request({
      method: req.method,
      path: ctx.basePath + req.path,
      headers,
      body,
      signal: ctx.signal,
    });
  let res: Dispatcher.ResponseData;
  try {
    res = await request();
  } catch (err) {
    if (!closedBeforeAnswer(err, reused, progress.elapsed() - sentAt, ctx.signal)) throw err;
    // llama-server closes the connection after each streamed response (cpp-httplib: a content provider that
    // returns false ends the keep-alive loop) while its headers said keep-alive; a request written on that
    // socket fails before any byte comes back. That is a new connection's business, not a failure: sent again
    // once on a new one (the client opens it); a server that drops every request still fails the second time.
    progress.mark(
      `the server had closed the connection (${peerCode(err)}): sent again over a new connection`,
    );
    progress.reconnects++;
    progress.phase = 'connect';
    res = await request();
  }
  progress.responseHeaders = true;
  progress.headersMs = progress.elapsed();
  progress.status = res.statusCode;
  progress.phase = req.bodyPhase;
  const ct = res.headers['content-type'];
  const contentType = (Array.isArray(ct) ? ct[0] : ct) ?? '';
  progress.mark(`headers: HTTP ${res.statusCode}, content-type ${contentType || '(none)'}`);
  return { status: res.statusCode, contentType, body: res.body };
}

/** Socket errors that mean the peer had closed the connection the request was written on. */
const PEER_CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
/** The close arrives within a round trip of the write; a later failure is the server's (as verify's load client). */
export const RECONNECT_WITHIN_MS = 2_000;

function peerCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e !== null && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && PEER_CLOSED.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether a request failed because the reused connection it went on had been closed by the server. */
function closedBeforeAnswer(err: unknown, reused: boolean, ms: number, signal: AbortSignal): boolean {
  return reused && !signal.aborted && ms < RECONNECT_WITHIN_MS && peerCode(err) !== undefined;
}

/** Reads the body into memory up to `cap` bytes; over the cap the body is dropped and the run fails. */
export async function readCapped(ctx: ProbeContext, res: ProbeResponse, cap: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  let first = true;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (first) {
      ctx.progress.mark('first byte');
      first = false;
    }
    size += chunk.length;
    if (size > cap) {
      res.body.destroy();
      throw new ProbeFailure(
        'bad_response',
        `response body exceeds ${cap} bytes (stopped reading)`,
        res.status,
      );
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts, size);
}

/**
 * Reads at most `cap` bytes for an error message, then drops the rest without reading it. Redacted before it
 * is shortened to 300 characters: a secret the cut went through would no longer match (issue 24 #10).
 */
export async function readSnippet(res: ProbeResponse, cap = 2048): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  let ended = false;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= cap) break;
    }
    ended = size < cap;
  } catch {
    // The status already tells the story; a body that breaks off adds nothing.
  } finally {
    res.body.destroy();
  }
  // A streaming decode holds back a character the cap cut in two, so a secret's fragment still ends the text.
  const raw = new TextDecoder().decode(Buffer.concat(parts).subarray(0, cap), { stream: !ended });
  return redactor.redact(raw, { end: !ended }).replace(/\s+/g, ' ').trim().slice(0, 300);
}
