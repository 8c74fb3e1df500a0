// The model gateway in regular mode in front of whole deployments (each a simulator's router or any
// OpenAI-compatible server): round-robin over the registered workers, the worker API of src/sim/workers.ts to
// take one out and put it back, /health pure liveness and /readiness (a healthy worker registered), as
// sgl-model-gateway's server.rs @049026958a37 answers them. A request is streamed through to the worker and back;
// a worker removed while a request runs keeps that request (upstream removes it from selection only).
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Service, pathOf, sendJson } from './http.js';
import { WorkerRegistry } from './workers.js';

export interface SimGateway {
  url: string;
  workers: WorkerRegistry;
  /** Requests sent to each worker URL so far. */
  routed(): Map<string, number>;
  stop(): Promise<void>;
}

export async function startGateway(workerUrls: string[], port = 0): Promise<SimGateway> {
  const known = new Set(workerUrls.map((u) => u.replace(/\/+$/, '')));
  const workers = new WorkerRegistry(
    [...known].map((url) => ({ url, worker_type: 'regular' as const })),
    (url) => known.has(url.replace(/\/+$/, '')),
  );
  const routed = new Map<string, number>();
  let next = 0;
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const pool = workers.ofType('regular');
    if (pool.length === 0) {
      sendJson(res, 503, {
        error: {
          type: 'Service Unavailable',
          code: 'server_selection_failed',
          message: 'No available workers',
        },
      });
      return;
    }
    const w = pool[next++ % pool.length]!;
    routed.set(w.url, (routed.get(w.url) ?? 0) + 1);
    const target = new URL(req.url ?? '/', w.url);
    const out = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) sendJson(res, 502, { error: { message: 'worker connection failed' } });
      else res.destroy();
    });
    // The client leaving cuts the worker's request too, as upstream's reqwest stream is dropped.
    res.on('close', () => out.destroy());
    req.pipe(out);
  };
  const service = new Service(
    'gateway',
    (req, res) => {
      if (workers.handle(req, res)) return;
      const path = pathOf(req);
      if (req.method === 'GET' && (path === '/health' || path === '/liveness')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('OK');
        return;
      }
      if (req.method === 'GET' && path === '/readiness') {
        const n = workers.list().length;
        if (n > 0) sendJson(res, 200, { status: 'ready', healthy_workers: n, total_workers: n });
        else sendJson(res, 503, { status: 'not ready', reason: 'insufficient healthy workers' });
        return;
      }
      forward(req, res);
    },
    port,
  );
  await service.listen();
  return { url: service.url, workers, routed: () => new Map(routed), stop: () => service.close() };
}
