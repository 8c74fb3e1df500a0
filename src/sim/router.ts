// The PD router (sgl-model-gateway): /v1/chat/completions over prefill+decode, /v1/models, /health (pure
// liveness, always 200 unless the health_fail fault targets it), /readiness (needs a prefill and a decode).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FaultSet } from './faults/set.js';
import type { LogFile } from './logfile.js';
import * as fmt from './logfmt.js';
import { pathOf, readBody, sendJson, type Handler } from './http.js';
import { knownAnswer } from './answers.js';
import {
  BadRequest,
  ChatRenderer,
  countPromptTokens,
  lastUserText,
  parseChatRequest,
  planResponse,
  planTokens,
  type ChatRequest,
} from './openai.js';
import type { PdModel, SimRequest } from './pd.js';
import { RouterStats, routerMetricsText, type WorkerView } from './router-metrics.js';
import type { WorkerRegistry } from './workers.js';

export interface RouterDeps {
  pd: PdModel;
  faults: FaultSet;
  modelName: string;
  logs: { router: LogFile; prefill: LogFile; decode: LogFile };
  /** Whether the engine HTTP ports are open (a crashed engine fails readiness). */
  engineUp(service: 'prefill' | 'decode'): boolean;
  /** The router's fake outbound address, for the engines' uvicorn access lines. */
  routerClientAddr(): string;
  /** Structured-output requests held by grammar_stall: released (to run) when the fault is disabled. */
  grammarHeld: Set<() => void>;
  /** The proxy hop is in front: it tells the client connection's request count in CONN_SEQ_HEADER. */
  behindProxy?: boolean;
  /** Requests in flight and answered, for /metrics (orphaned_requests adds its own in flight). */
  stats?: RouterStats;
  /** The gateway's worker registry (the /workers API): a prefill or decode taken out of it gets no requests. */
  workers?: () => WorkerRegistry;
}

/**
 * The proxy hop's count of requests on the client's connection (1 = fresh). The router's own sockets from the
 * proxy are pooled, so only the proxy knows whether the client reused its connection; a client's own value of
 * this header is dropped by the proxy and ignored when there is no proxy.
 */
export const CONN_SEQ_HEADER = 'x-wedgewatch-sim-conn-seq';

/** The context length the simulated model reports (a 32k-context model). */
export const SIM_MAX_MODEL_LEN = 32_768;

/** Answers of recent requests (the "KV pool" a kv_corruption mix-up hands to the wrong request). */
const RECENT_ANSWERS = 16;

export function routerHandler(deps: RouterDeps): Handler {
  const recent: string[] = [];
  const stats = deps.stats ?? new RouterStats();
  const requestsOnSocket = new WeakMap<Socket, number>();
  let chats = 0;
  return (req, res) => {
    const path = pathOf(req);
    const onSocket = (requestsOnSocket.get(req.socket) ?? 0) + 1;
    requestsOnSocket.set(req.socket, onSocket);
    const viaProxy = deps.behindProxy ? Number(req.headers[CONN_SEQ_HEADER]) : NaN;
    const connSeq = Number.isInteger(viaProxy) && viaProxy >= 1 ? viaProxy : onSocket;
    const started = Date.now();
    res.on('finish', () => logRequest(deps.logs.router, req, res.statusCode, started));
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        routerMetricsText(stats, {
          prefill: workerView(deps, 'prefill'),
          decode: workerView(deps, 'decode'),
        }),
      );
      return;
    }
    if (deps.workers?.().handle(req, res)) return;
    const tracked = stats.begin();
    res.on('close', () => stats.end(tracked, path, res.statusCode));
    if (req.method === 'GET' && (path === '/health' || path === '/liveness')) {
      const status = deps.faults.healthStatus('router') ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'OK' : 'Service Unavailable');
      return;
    }
    if (req.method === 'GET' && path === '/readiness') {
      const registered = (role: 'prefill' | 'decode') => (deps.workers?.().ofType(role).length ?? 1) > 0;
      const p = deps.engineUp('prefill') && registered('prefill') ? 1 : 0;
      const d = deps.engineUp('decode') && registered('decode') ? 1 : 0;
      if (p && d) sendJson(res, 200, { status: 'ready', healthy_workers: 2, total_workers: 2 });
      else sendJson(res, 503, { status: 'not ready', reason: 'insufficient healthy workers' });
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        // SGLang's ModelCard carries max_model_len (python/sglang/srt/entrypoints/openai/protocol.py ModelCard
        // @004c82e): verify's long-context step reads it.
        data: [
          {
            id: deps.modelName,
            object: 'model',
            created: 0,
            owned_by: 'sglang',
            root: deps.modelName,
            max_model_len: SIM_MAX_MODEL_LEN,
          },
        ],
      });
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      void chat(deps, req, res, recent, deps.faults.holdsRequest(++chats), connSeq > 1);
      return;
    }
    sendJson(res, 404, {
      error: { type: 'Not Found', code: 'not_found', message: `no route for ${req.method} ${path}` },
    });
  };
}

function logRequest(log: LogFile, req: IncomingMessage, status: number, started: number): void {
  // Modelled on smg's request span lines; the field wording is the simulator's own.
  log.write(
    fmt.routerLine(
      new Date(),
      status >= 500 ? 'WARN' : 'INFO',
      'smg::middleware',
      'src/middleware.rs:412',
      `finished processing request method=${req.method} uri=${pathOf(req)} status=${status} latency=${Date.now() - started}ms`,
    ),
  );
}

async function chat(
  deps: RouterDeps,
  req: IncomingMessage,
  res: ServerResponse,
  recent: string[],
  held: boolean,
  reusedConnection: boolean,
): Promise<void> {
  let chatReq: ChatRequest;
  let rid: string | undefined;
  try {
    const body = await readBody(req);
    chatReq = parseChatRequest(body);
    rid = ridOf(body);
  } catch (err) {
    const message = err instanceof BadRequest ? err.message : 'could not read the request body';
    sendJson(res, 400, { object: 'error', message, type: 'BadRequestError', param: null, code: 400 });
    return;
  }
  const holdsLong = deps.faults.holdsPrompt(countPromptTokens(chatReq));
  if (held || holdsLong || (chatReq.jsonSchema !== undefined && deps.faults.stallsStructured())) {
    // Waits for the grammar backend (or a stuck router, intermittent_hang/router_stuck) before the scheduler sees
    // it: no tokens, no abort, until released.
    await holdUntilReleased(deps, res);
    if (res.destroyed) return;
  }
  const promptTokens = countPromptTokens(chatReq);
  const delayMs = reusedConnection ? deps.faults.reusedConnectionDelayMs(promptTokens) : 0;
  if (delayMs === Infinity) await holdUntilReleased(deps, res);
  else if (delayMs > 0) {
    // context_ttft_growth: the wait comes before the scheduler sees the request, so it is time to first token.
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, delayMs);
      res.on('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  if (res.destroyed) return;
  const known = knownAnswer(lastUserText(chatReq));
  const plan = planResponse(chatReq, deps.pd.model.defaultMaxTokens, {
    leak: (calls, r) => deps.faults.leakToolCalls(calls, r.toolChoice),
    ignoresToolChoice: (r) => deps.faults.ignoresToolChoice(r.toolChoice),
    corrupt: (answer) => deps.faults.corruptAnswer(answer, recent),
    corruptStreamedArgs: (fragments) => deps.faults.corruptStreamedArgs(fragments),
    reasoningGarbage: () => deps.faults.reasoningGarbage(),
    reasoningRunaway: () => deps.faults.reasoningRunaway(),
    callsInReasoning: (calls) => deps.faults.callsInReasoning(calls),
    callsDespiteNone: () => deps.faults.callsDespiteNone(),
  });
  if (known !== undefined) {
    recent.push(known);
    if (recent.length > RECENT_ANSWERS) recent.shift();
  }
  const renderer = new ChatRenderer(plan, chatReq.model ?? deps.modelName, promptTokens);
  let generated = 0;
  let finished = false;
  const stream = chatReq.stream;
  let simReq: SimRequest;
  try {
    // A worker taken out of the gateway is not selected (routers/http/pd_router.rs picks among registered ones).
    for (const role of ['prefill', 'decode'] as const)
      if (deps.workers !== undefined && deps.workers().ofType(role).length === 0)
        throw new Error(`No available servers: No available ${role} workers (none registered)`);
    for (const role of ['prefill', 'decode'] as const) {
      const w = workerView(deps, role);
      if (!w.healthy || w.circuitOpen)
        throw new Error(
          `No available servers: No available ${role} workers (all circuits open or unhealthy)`,
        );
    }
    simReq = deps.pd.submit(promptTokens, planTokens(plan), rid, {
      token(index) {
        generated = index + 1;
        if (stream) res.write(renderer.tokenChunks(index));
      },
      finish() {
        finished = true;
        if (stream) res.end(renderer.endChunks(generated, chatReq.includeUsage));
        else sendJson(res, 200, renderer.completion(generated));
      },
      fail(message) {
        finished = true;
        if (stream) res.end(renderer.errorChunks(message));
        else
          sendJson(res, 500, {
            object: 'error',
            message,
            type: 'InternalServerError',
            param: null,
            code: 500,
          });
      },
    });
  } catch (err) {
    sendJson(res, 503, {
      error: {
        type: 'Service Unavailable',
        code: 'server_selection_failed',
        message: (err as Error).message,
      },
    });
    return;
  }
  const access = fmt.uvicornAccessLine(
    new Date(),
    deps.routerClientAddr(),
    'POST /v1/chat/completions HTTP/1.1',
    200,
  );
  deps.logs.prefill.write(access);
  deps.logs.decode.write(access);
  if (stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
  }
  // A client that leaves before the end makes the tokenizer send AbortReq (tokenizer_manager.py
  // create_abort_task).
  if (res.destroyed) deps.pd.abort(simReq);
  else
    res.on('close', () => {
      if (!finished) deps.pd.abort(simReq);
    });
}

/**
 * The router's view of a worker: a worker that is down fails its health checks and its breaker opens on the failed
 * requests; router_circuit_open shuts out one that is up.
 */
function workerView(deps: RouterDeps, role: 'prefill' | 'decode'): WorkerView {
  const up = deps.engineUp(role);
  const shut = deps.faults.routerShutsOut(role);
  return { healthy: up && shut !== 'unhealthy', circuitOpen: !up || shut === 'open' };
}

/** Waits until a fault releases held requests (disabled) or the client leaves. */
function holdUntilReleased(deps: RouterDeps, res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const release = () => {
      deps.grammarHeld.delete(release);
      resolve();
    };
    deps.grammarHeld.add(release);
    res.on('close', release);
  });
}

/**
 * The client's own request id: SGLang uses the body's `rid` when one is given (entrypoints/openai/serving_base.py
 * _generate_request_id), so its abort lines name it. Anything but a short plain id is ignored.
 */
function ridOf(body: string): string | undefined {
  try {
    const rid = (JSON.parse(body) as { rid?: unknown }).rid;
    return typeof rid === 'string' && /^[\w.-]{1,128}$/.test(rid) ? rid : undefined;
  } catch {
    return undefined;
  }
}
