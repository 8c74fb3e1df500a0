// The model gateway's worker API as the simulated routers serve it, following sgl-project/sglang
// sgl-model-gateway: src/server.rs @049026958a37 build_app `worker_routes` (POST/GET /workers, GET/DELETE
// /workers/{worker_id}); src/core/worker_service.rs @7ea79ef81de0 (ids are UUIDs, a bad one is 400 BAD_REQUEST,
// an unknown one 404 WORKER_NOT_FOUND; add and delete answer 202 {"status":"accepted", "worker_id"}, the list
// {"workers", "total", "stats"}); src/protocols/worker_spec.rs @0cbf0687be1b (WorkerConfigRequest, WorkerInfo).
// Upstream queues the add or removal as a job; the simulator applies it at once (a test polls either way).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathOf, readBody, sendJson } from './http.js';

export type WorkerType = 'regular' | 'prefill' | 'decode';

export interface SimWorker {
  id: string;
  url: string;
  worker_type: WorkerType;
  bootstrap_port?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TYPES: readonly WorkerType[] = ['regular', 'prefill', 'decode'];

export class WorkerRegistry {
  private readonly workers = new Map<string, SimWorker>();
  /** Upstream reserves one id per URL (worker_registry.rs reserve_id_for_url): re-adding a URL keeps its id. */
  private readonly ids = new Map<string, string>();

  /**
   * `routable`: the URLs this simulator can route to; adding another is refused (upstream would queue it and
   * fail its health checks, a simulator has nothing behind it).
   */
  constructor(
    initial: Array<Omit<SimWorker, 'id'>>,
    private readonly routable: (url: string) => boolean,
  ) {
    for (const w of initial) this.add(w);
  }

  list(): SimWorker[] {
    return [...this.workers.values()];
  }

  ofType(type: WorkerType): SimWorker[] {
    return this.list().filter((w) => w.worker_type === type);
  }

  add(w: Omit<SimWorker, 'id'>): SimWorker {
    const url = w.url.replace(/\/+$/, '');
    let id = this.ids.get(url);
    if (id === undefined) this.ids.set(url, (id = randomUUID()));
    const worker = { ...w, url, id };
    this.workers.set(id, worker);
    return worker;
  }

  remove(id: string): SimWorker | undefined {
    const w = this.workers.get(id);
    this.workers.delete(id);
    return w;
  }

  /** Serves the worker API; returns false when the request is not for it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const path = pathOf(req);
    if (path === '/workers' && req.method === 'GET') {
      const all = this.list();
      sendJson(res, 200, {
        workers: all.map((w) => ({
          id: w.id,
          url: w.url,
          model_id: 'sim-model',
          priority: 50,
          cost: 1,
          worker_type: w.worker_type,
          is_healthy: true,
          load: 0,
          connection_mode: 'http',
          ...(w.bootstrap_port !== undefined ? { bootstrap_port: w.bootstrap_port } : {}),
        })),
        total: all.length,
        stats: {
          prefill_count: this.ofType('prefill').length,
          decode_count: this.ofType('decode').length,
          regular_count: this.ofType('regular').length,
        },
      });
      return true;
    }
    if (path === '/workers' && req.method === 'POST') {
      void this.create(req, res);
      return true;
    }
    const m = /^\/workers\/([^/]+)$/.exec(path);
    if (m === null || (req.method !== 'GET' && req.method !== 'DELETE')) return false;
    const raw = decodeURIComponent(m[1]!);
    if (!UUID.test(raw)) {
      sendJson(res, 400, {
        error: `Invalid worker_id '${raw.slice(0, 64)}' (expected UUID)`,
        code: 'BAD_REQUEST',
      });
      return true;
    }
    const w = this.workers.get(raw);
    if (w === undefined) {
      sendJson(res, 404, { error: `Worker ${raw} not found`, code: 'WORKER_NOT_FOUND' });
      return true;
    }
    if (req.method === 'GET') sendJson(res, 200, { ...w, is_healthy: true });
    else {
      this.remove(raw);
      sendJson(res, 202, {
        status: 'accepted',
        worker_id: raw,
        message: 'Worker removal queued for background processing',
      });
    }
    return true;
  }

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: { url?: unknown; worker_type?: unknown; bootstrap_port?: unknown };
    try {
      body = JSON.parse(await readBody(req, 64 * 1024)) as typeof body;
    } catch {
      sendJson(res, 400, { error: 'expected a JSON WorkerConfigRequest', code: 'BAD_REQUEST' });
      return;
    }
    const type = body.worker_type ?? 'regular';
    if (typeof body.url !== 'string' || !TYPES.includes(type as WorkerType)) {
      sendJson(res, 400, {
        error: 'url (a string) and worker_type (regular, prefill, decode)',
        code: 'BAD_REQUEST',
      });
      return;
    }
    if (!this.routable(body.url)) {
      sendJson(res, 400, { error: 'the simulator routes only to its own engines', code: 'BAD_REQUEST' });
      return;
    }
    const w = this.add({
      url: body.url,
      worker_type: type as WorkerType,
      ...(typeof body.bootstrap_port === 'number' ? { bootstrap_port: body.bootstrap_port } : {}),
    });
    res.setHeader('location', `/workers/${w.id}`);
    sendJson(res, 202, {
      status: 'accepted',
      worker_id: w.id,
      url: w.url,
      location: `/workers/${w.id}`,
      message: 'Worker addition queued for background processing',
    });
  }
}
