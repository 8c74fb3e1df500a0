// The SGLang model gateway's worker API (sgl-model-gateway, formerly sgl-router): what a drain calls. Read from
// sgl-project/sglang: sgl-model-gateway/src/server.rs @049026958a37, build_app's `worker_routes` —
// `POST /workers` (create_worker), `GET /workers` (list_workers_rest), `DELETE /workers/{worker_id}`
// (delete_worker); src/core/worker_service.rs @7ea79ef81de0 — a worker id is a UUID (parse_worker_id), so the
// worker is found by its URL in the list first; add and delete queue a job and answer 202 {"status":"accepted"};
// src/protocols/worker_spec.rs @0cbf0687be1b lines 11–37 — WorkerConfigRequest {url, worker_type: "regular" |
// "prefill" | "decode", bootstrap_port}, and WorkerInfo {id, url, worker_type, is_healthy} in the list. The
// older `/add_worker?url=` and `/remove_worker?url=` are gone from that router.
import { Agent, request } from '../../lib/http/undici.js';
import type { DrainConfig } from '../../config/traffic-schema.js';

/** What one call did; `detail` is for the journal (the gateway's own words are not copied into it). */
export interface GatewayResult {
  ok: boolean;
  detail: string;
}

/** A gateway a drain can take a worker out of and put back. */
export interface GatewayClient {
  remove(): Promise<GatewayResult>;
  add(): Promise<GatewayResult>;
  close(): Promise<void>;
}

/** The worker list is small (one entry per engine); a bigger body is not a gateway's list. */
const LIST_CAP = 1024 * 1024;

/** The same worker whether or not a URL carries a trailing slash. */
const sameUrl = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

type Body = Awaited<ReturnType<typeof request>>['body'];

async function readCapped(body: Body, cap: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > cap) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class SglangGateway implements GatewayClient {
  private readonly agent: Agent;

  constructor(private readonly cfg: DrainConfig) {
    this.agent = new Agent({ connections: 2, headersTimeout: cfg.timeout, bodyTimeout: cfg.timeout });
  }

  private async call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; text: string | undefined }> {
    const headers: Record<string, string> = {};
    if (this.cfg.bearerToken !== undefined) headers.authorization = `Bearer ${this.cfg.bearerToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(new URL(path, this.cfg.url), {
      dispatcher: this.agent,
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(this.cfg.timeout),
    });
    return { status: res.statusCode, text: await readCapped(res.body, LIST_CAP) };
  }

  /** The worker's gateway id, undefined when the gateway does not list it. */
  private async find(): Promise<{ id: string } | undefined> {
    const { status, text } = await this.call('GET', '/workers');
    if (status !== 200 || text === undefined) throw new Error(`GET /workers answered ${status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the body: the gateway's words stay out of the journal.
      throw new Error('GET /workers: the answer is not JSON');
    }
    const list = (parsed as { workers?: unknown } | null)?.workers;
    if (!Array.isArray(list)) throw new Error('GET /workers: no "workers" list in the answer');
    for (const w of list as Array<{ id?: unknown; url?: unknown }>) {
      if (typeof w.url === 'string' && typeof w.id === 'string' && sameUrl(w.url, this.cfg.worker))
        return { id: w.id };
    }
    return undefined;
  }

  async remove(): Promise<GatewayResult> {
    try {
      const w = await this.find();
      if (w === undefined) return { ok: true, detail: 'the gateway does not list the worker (already out)' };
      const { status } = await this.call('DELETE', `/workers/${encodeURIComponent(w.id)}`);
      return status >= 200 && status < 300
        ? { ok: true, detail: `DELETE /workers/${w.id} answered ${status}` }
        : { ok: false, detail: `DELETE /workers/${w.id} answered ${status}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async add(): Promise<GatewayResult> {
    try {
      if ((await this.find()) !== undefined)
        return { ok: true, detail: 'the gateway lists the worker already' };
      const { status } = await this.call('POST', '/workers', {
        url: this.cfg.worker,
        worker_type: this.cfg.workerType,
        ...(this.cfg.bootstrapPort !== undefined ? { bootstrap_port: this.cfg.bootstrapPort } : {}),
      });
      return status >= 200 && status < 300
        ? { ok: true, detail: `POST /workers answered ${status}` }
        : { ok: false, detail: `POST /workers answered ${status}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
