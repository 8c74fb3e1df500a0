// The prefill and decode engines' HTTP servers: /health (SGLang PD semantics: the probe uses a FAKE transfer
// backend, so a dead bootstrap thread does not fail it), /get_server_info and /server_info (a scheduler round
// trip: they block while the scheduler is stuck), /metrics, /v1/models. Every response gets a uvicorn access line.
import type { ServerResponse } from 'node:http';
import type { FaultSet } from './faults/set.js';
import type { LogFile } from './logfile.js';
import * as fmt from './logfmt.js';
import { clientAddr, pathOf, sendJson, type Handler } from './http.js';
import { engineMetricsText } from './metrics-text.js';
import type { PdModel } from './pd.js';

export interface EngineDeps {
  role: 'prefill' | 'decode';
  pd: PdModel;
  sglangFormat: fmt.SglangFormat;
  faults: FaultSet;
  modelName: string;
  log: LogFile;
  port(): number;
  /** SGLANG_HEALTH_CHECK_TIMEOUT analogue: how long /health_generate waits for its 1-token generation. */
  healthGenerateTimeoutMs: number;
  /** Holds a scheduler round trip until the scheduler runs again. */
  whenSchedulerFree(role: 'prefill' | 'decode', res: ServerResponse, respond: () => void): void;
}

export function engineHandler(deps: EngineDeps): Handler {
  return (req, res) => {
    const path = pathOf(req);
    const requestLine = `${req.method} ${req.url} HTTP/${req.httpVersion}`;
    const addr = clientAddr(req);
    res.on('finish', () =>
      deps.log.write(fmt.uvicornAccessLine(new Date(), addr, requestLine, res.statusCode)),
    );
    const side = deps.role === 'prefill' ? deps.pd.prefill : deps.pd.decode;
    if (req.method !== 'GET') {
      sendJson(res, 405, { detail: 'Method Not Allowed' });
      return;
    }
    const healthFault = deps.faults.healthStatus(deps.role);
    switch (path) {
      case '/health':
        if (healthFault === undefined && deps.faults.healthGenerates(deps.role)) {
          healthGenerate(deps, side, res);
          return;
        }
        res.writeHead(healthFault ?? 200, { 'content-length': 0 });
        res.end();
        return;
      case '/health_generate':
        if (healthFault !== undefined) {
          res.writeHead(healthFault, { 'content-length': 0 });
          res.end();
        } else healthGenerate(deps, side, res);
        return;
      case '/get_server_info':
      case '/server_info':
        deps.whenSchedulerFree(deps.role, res, () => sendJson(res, 200, serverInfo(deps, side.startedAt)));
        return;
      case '/get_model_info':
      case '/model_info':
        sendJson(res, 200, {
          model_path: deps.modelName,
          tokenizer_path: deps.modelName,
          is_generation: true,
        });
        return;
      case '/v1/models':
        sendJson(res, 200, {
          object: 'list',
          data: [
            { id: deps.modelName, object: 'model', created: 0, owned_by: 'sglang', root: deps.modelName },
          ],
        });
        return;
      case '/metrics': {
        // queue_leak: leaked entries show in the bootstrap queue gauge, nothing runs them.
        const leaked = deps.faults.leakedQueue(deps.role);
        const published =
          leaked > 0 ? { ...side.published, prealloc: side.published.prealloc + leaked } : side.published;
        const text = engineMetricsText(
          deps.role,
          deps.modelName,
          published,
          side.counters,
          deps.sglangFormat,
        );
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(text);
        return;
      }
      default:
        sendJson(res, 404, { detail: 'Not Found' });
    }
  };
}

/** A 1-token generation through the scheduler: a stuck scheduler gives 503 and the real log line on timeout. */
function healthGenerate(deps: EngineDeps, side: { lastLogAt: number }, res: ServerResponse) {
  const tic = new Date();
  let answered = false;
  const answer = (status: number) => {
    if (answered || res.destroyed) return;
    answered = true;
    clearTimeout(timer);
    res.writeHead(status, { 'content-length': 0 });
    res.end();
  };
  const timer = setTimeout(() => {
    if (answered || res.destroyed) return;
    const seconds = Math.max(1, Math.round(deps.healthGenerateTimeoutMs / 1000));
    deps.log.write(fmt.httpLine(new Date(), fmt.healthCheckFailed(seconds, tic, new Date(side.lastLogAt))));
    answer(503);
  }, deps.healthGenerateTimeoutMs);
  res.on('close', () => clearTimeout(timer));
  deps.whenSchedulerFree(deps.role, res, () => answer(200));
}

function serverInfo(deps: EngineDeps, startedAt: number) {
  const side = deps.role === 'prefill' ? deps.pd.prefill : deps.pd.decode;
  return {
    model_path: deps.modelName,
    served_model_name: deps.modelName,
    host: '127.0.0.1',
    port: deps.port(),
    disaggregation_mode: deps.role,
    disaggregation_transfer_backend: 'nixl',
    tp_size: 1,
    dp_size: 1,
    max_running_requests: deps.pd.model.maxRunning,
    enable_metrics: true,
    internal_states: [
      {
        last_gen_throughput: side.published.genThroughput,
        num_running_reqs: side.published.running,
        num_queue_reqs: side.published.queued,
        uptime_s: (Date.now() - startedAt) / 1000,
      },
    ],
    version: '0.0.0-sim',
  };
}
