// A small HTTP client for the simulator tests: full streams, streams cut off mid-flight, and keep-alive reuse.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

export interface StreamResult {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed `data:` payloads other than [DONE]. */
  events: Record<string, unknown>[];
  done: boolean;
  raw: string;
}

export function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'sim-model', messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: 4, ...extra };
}

/** POSTs JSON and reads the whole response (bounded by timeoutMs). */
export function post(
  url: string,
  body: unknown,
  opts: { timeoutMs?: number; agent?: Agent | false } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return send('POST', url, body, opts);
}

export function get(url: string, opts: { timeoutMs?: number; agent?: Agent | false } = {}) {
  return send('GET', url, undefined, opts);
}

function send(
  method: string,
  url: string,
  body: unknown,
  opts: { timeoutMs?: number; agent?: Agent | false },
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent: opts.agent ?? false,
      headers: text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {},
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`${method} ${url}: no full response in ${opts.timeoutMs ?? 10_000} ms`)),
      opts.timeoutMs ?? 10_000,
    );
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(text);
  });
}

export function parseSse(raw: string): { events: Record<string, unknown>[]; done: boolean } {
  const events: Record<string, unknown>[] = [];
  let done = false;
  for (const block of raw.split('\n\n')) {
    const line = block.trim();
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') done = true;
    else events.push(JSON.parse(data) as Record<string, unknown>);
  }
  return { events, done };
}

export async function streamChat(
  url: string,
  body: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<StreamResult> {
  const r = await post(`${url}/v1/chat/completions`, { ...body, stream: true }, { timeoutMs });
  return { status: r.status, headers: r.headers, raw: r.text, ...parseSse(r.text) };
}

/**
 * Opens a stream and reports what arrived within `waitMs`: headers, and the raw data. The connection is then
 * destroyed (a client disconnect) unless `keep` is set.
 */
export function openStream(url: string, body: Record<string, unknown>) {
  const text = JSON.stringify({ ...body, stream: true });
  let raw = '';
  let status = 0;
  let resolveHeaders: (s: number) => void;
  const headers = new Promise<number>((r) => (resolveHeaders = r));
  let resolveData: (d: string) => void;
  const firstData = new Promise<string>((r) => (resolveData = r));
  let ended = false;
  const req = request(`${url}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
  });
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
    resolveHeaders(status);
    res.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
      resolveData(raw);
    });
    res.on('end', () => (ended = true));
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end(text);
  return {
    headers,
    firstData,
    get raw() {
      return raw;
    },
    get status() {
      return status;
    },
    get ended() {
      return ended;
    },
    cut: () => req.destroy(),
  };
}

export function tokensIn(raw: string): number {
  return parseSse(raw).events.filter((e) => {
    const delta = (e.choices as { delta?: Record<string, unknown> }[] | undefined)?.[0]?.delta;
    return (
      !!delta &&
      ((typeof delta.content === 'string' && delta.content !== '') || Array.isArray(delta.tool_calls))
    );
  }).length;
}
