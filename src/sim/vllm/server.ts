// The vLLM OpenAI-compatible API server's routes (vllm/entrypoints/openai/api_server.py, main 2026-08):
// /v1/chat/completions (the simulated model's answers from ../openai.ts), /v1/models, /health, /load,
// /metrics. Every response gets a uvicorn access line with the API server's process prefix.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { knownAnswer } from '../answers.js';
import type { FaultSet } from '../faults/set.js';
import { clientAddr, pathOf, readBody, sendJson, type Handler } from '../http.js';
import type { LogFile } from '../logfile.js';
import {
  BadRequest,
  ChatRenderer,
  countPromptTokens,
  lastUserText,
  parseChatRequest,
  planResponse,
  planTokens,
  type ChatRequest,
} from '../openai.js';
import { EngineDead, type VllmEngine } from './engine.js';
import * as fmt from './logfmt.js';
import { vllmMetricsText } from './metrics-text.js';

export interface ServerDeps {
  engine(): VllmEngine;
  faults: FaultSet;
  modelName: string;
  log: LogFile;
  defaultMaxTokens: number;
  /** launcher.py terminate_if_errored: a request that met EngineDeadError shuts the server down (unless kept alive). */
  onEngineDeadError(): void;
}

const RECENT_ANSWERS = 16;

export function serverHandler(deps: ServerDeps): Handler {
  const recent: string[] = [];
  // app.state.server_load_metrics (--enable-server-load-tracking): requests in flight on the tracked routes.
  let load = 0;
  // Chat requests received, 1-based (requests_lost picks by it).
  let seq = 0;
  return (req, res) => {
    const path = pathOf(req);
    const engine = deps.engine();
    const requestLine = `${req.method} ${req.url} HTTP/${req.httpVersion}`;
    const addr = clientAddr(req);
    // uvicorn logs the access line when the response starts.
    let logged = false;
    const access = () => {
      if (logged) return;
      logged = true;
      deps.log.write(fmt.uvicornAccess(engine.apiPid, addr, requestLine, res.statusCode));
    };
    res.on('finish', access);
    const get = req.method === 'GET';
    if (get && path === '/health') {
      // api_server.py health: `await engine_client(raw_request).check_health()` → 200; `except EngineDeadError:
      // return Response(status_code=503)`. AsyncLLM.check_health is a flag check: a hung core still gets 200.
      res.writeHead(engine.dead ? 503 : 200, { 'content-length': 0 });
      res.end();
      return;
    }
    if (get && path === '/load') {
      sendJson(res, 200, { server_load: load });
      return;
    }
    if (get && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: [
          {
            id: deps.modelName,
            object: 'model',
            created: Math.floor(Date.now() / 1000),
            owned_by: 'vllm',
            root: deps.modelName,
            parent: null,
            max_model_len: 32_768,
          },
        ],
      });
      return;
    }
    if (get && path === '/metrics' && deps.faults.metricsAbsent()) {
      // metrics_frozen mode=absent: no answer until the scraper gives up (its timeout).
      return;
    }
    if (get && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(
        vllmMetricsText(deps.modelName, engine.published, engine.counters, deps.faults.stalledEngine()),
      );
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      load++;
      res.on('close', () => load--);
      // requests_lost: accepted, counted in /load, never handed to the engine; held until the client leaves.
      if (deps.faults.losesRequest(++seq)) {
        req.resume();
        return;
      }
      void chat(deps, engine, recent, req, res, access);
      return;
    }
    sendJson(res, 404, { detail: 'Not Found' });
  };
}

async function chat(
  deps: ServerDeps,
  engine: VllmEngine,
  recent: string[],
  req: IncomingMessage,
  res: ServerResponse,
  access: () => void,
): Promise<void> {
  let chatReq: ChatRequest;
  try {
    chatReq = parseChatRequest(await readBody(req));
  } catch (err) {
    const message = err instanceof BadRequest ? err.message : 'could not read the request body';
    // vllm/entrypoints/openai/protocol.py ErrorResponse.
    sendJson(res, 400, { error: { message, type: 'BadRequestError', param: null, code: 400 } });
    return;
  }
  const known = knownAnswer(lastUserText(chatReq));
  const plan = planResponse(chatReq, deps.defaultMaxTokens, {
    leak: () => undefined,
    ignoresToolChoice: () => false,
    corrupt: (answer) => deps.faults.corruptAnswer(answer, recent),
  });
  if (known !== undefined) {
    recent.push(known);
    if (recent.length > RECENT_ANSWERS) recent.shift();
  }
  const renderer = new ChatRenderer(plan, chatReq.model ?? deps.modelName, countPromptTokens(chatReq));
  const stream = chatReq.stream;
  let generated = 0;
  let finished = false;
  let simReq;
  try {
    // serving_chat.py create_chat_completion: `if self.engine_client.errored: raise
    // self.engine_client.dead_error`; launcher.py's exception handler answers 500 with no body.
    simReq = engine.submit(
      // serving_chat.py: request_id = f"chatcmpl-{...}".
      `chatcmpl-${renderer.id}`,
      countPromptTokens(chatReq),
      planTokens(plan),
      renderer.finishReason === 'length' ? 'length' : 'stop',
      {
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
          if (stream) {
            engine.write(
              fmt.vllmRecord(
                new Date(),
                engine.site('APIServer', 'serving_chat.py', 1167),
                'ERROR',
                fmt.streamGeneratorErrorRecord(),
              ),
            );
            res.end(renderer.errorChunks(message));
          } else {
            res.writeHead(500, { 'content-length': 0 });
            res.end();
          }
          deps.onEngineDeadError();
        },
      },
    );
  } catch (err) {
    if (!(err instanceof EngineDead)) throw err;
    res.writeHead(500, { 'content-length': 0 });
    res.end();
    deps.onEngineDeadError();
    return;
  }
  if (stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    access();
  }
  const r = simReq;
  if (res.destroyed) engine.abort(r);
  else
    res.on('close', () => {
      if (!finished) engine.abort(r);
    });
}
