// The deployment under test: where to send chat completions, with which model and headers, and the start
// check that tells "target unreachable" (exit 2) from "a step failed" (exit 1).
import { Client } from '../lib/http/undici.js';
import { readCapped } from './read-capped.js';
import { UsageError } from './types.js';

export interface Target {
  url: string;
  origin: string;
  /** Path of /v1/chat/completions under the URL's path prefix. */
  chatPath: string;
  modelsPath: string;
  model: string;
  /** Request headers (auth included); values may be secrets and are never printed. */
  headers: Record<string, string>;
}

export function makeTarget(url: string, model: string, headers: Record<string, string> = {}): Target {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--url: not a URL: ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`--url: expected http(s), got ${u.protocol}`);
  if (model.trim() === '') throw new UsageError('--model: must not be empty');
  // Accept both "http://host:port" and "http://host:port/v1" (what OpenAI clients are usually given).
  let base = u.pathname.replace(/\/+$/, '');
  if (base.endsWith('/v1')) base = base.slice(0, -3);
  return {
    url,
    origin: u.origin,
    chatPath: `${base}/v1/chat/completions`,
    modelsPath: `${base}/v1/models`,
    model,
    headers: { ...headers },
  };
}

/** Parses a repeated `--header 'K: V'`. */
export function parseHeader(text: string): [string, string] {
  const i = text.indexOf(':');
  const name = i > 0 ? text.slice(0, i).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new UsageError(`--header: expected 'Name: value', got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return [name.toLowerCase(), text.slice(i + 1).trim()];
}

const MODELS_BODY_MAX_BYTES = 4 * 1024 * 1024;

export class TargetUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetUnreachable';
  }
}

/**
 * GET /v1/models within `timeoutMs`. A refused connection, a timeout or an auth failure means the gate cannot
 * run at all; a missing model is reported as a warning (gateways list models differently).
 */
export async function preflight(target: Target, timeoutMs = 10_000): Promise<{ warning?: string }> {
  const client = new Client(target.origin, { connect: { timeout: timeoutMs } });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await client.request({
      method: 'GET',
      path: target.modelsPath,
      headers: { ...target.headers, accept: 'application/json' },
      signal: ac.signal,
    });
    // A models list can be long; anything else is an error page, of which the start is enough.
    const text = await readCapped(res.body, res.statusCode === 200 ? MODELS_BODY_MAX_BYTES : undefined);
    if (res.statusCode === 401 || res.statusCode === 403) {
      throw new TargetUnreachable(
        `${target.modelsPath}: HTTP ${res.statusCode} (check --header / --api-key-file)`,
      );
    }
    if (res.statusCode !== 200) {
      throw new TargetUnreachable(`${target.modelsPath}: HTTP ${res.statusCode}`);
    }
    try {
      const ids = ((JSON.parse(text) as { data?: { id?: unknown }[] }).data ?? []).map((m) => m.id);
      if (!ids.includes(target.model)) {
        return {
          warning: `model ${JSON.stringify(target.model)} is not listed by ${target.modelsPath} (${ids.join(', ')})`,
        };
      }
    } catch {
      return { warning: `${target.modelsPath} did not answer JSON` };
    }
    return {};
  } catch (err) {
    if (err instanceof TargetUnreachable) throw err;
    const e = err as Error & { code?: string; cause?: Error };
    const why = ac.signal.aborted
      ? `no answer within ${timeoutMs} ms`
      : `${e.code ?? ''} ${e.message}`.trim();
    throw new TargetUnreachable(`${target.origin}${target.modelsPath}: ${why}`);
  } finally {
    clearTimeout(timer);
    await client.destroy().catch(() => {});
  }
}
