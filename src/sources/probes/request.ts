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
  progress.mark(
    `${req.method} ${ctx.endpoint.url.replace(/\/$/, '')}${req.path} over ${ctx.conn}` +
      (lease.reused ? ' (reusing the open connection)' : ' (new connection)'),
  );
  const res = await lease.client.request({
    method: req.method,
    path: ctx.basePath + req.path,
    headers,
    body,
    signal: ctx.signal,
  });
  progress.headersMs = progress.elapsed();
  progress.status = res.statusCode;
  progress.phase = req.bodyPhase;
  const ct = res.headers['content-type'];
  const contentType = (Array.isArray(ct) ? ct[0] : ct) ?? '';
  progress.mark(`headers: HTTP ${res.statusCode}, content-type ${contentType || '(none)'}`);
  return { status: res.statusCode, contentType, body: res.body };
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
