// Engines for `wedgewatch verify` to meet, on 127.0.0.1: hostile ones that control every size verify reads (an
// endless stream, a usage figure past max_tokens, an absurd context length, replies of hundreds of MB, a slow
// drip, an endless tool call), and a llama.cpp-shaped front that puts llama-server's HTTP behaviour before an
// OpenAI-compatible upstream (the simulator): it closes the connection after each streamed response while
// advertising keep-alive, reports its context in /props and /slots, not max_model_len, queues requests beyond
// its slots, and exports llamacpp:requests_processing. Used by bench:adversarial and test/verify/hostile.test.ts.
/* global Buffer */
import { createServer, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** An http server on 127.0.0.1 with every socket tracked, so close() ends kept-alive and streaming ones too. */
async function listen(handler) {
  const server = createServer(handler);
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Reads a request body, keeping at most `keep` bytes of it; resolves { bytes, text }. */
function drain(req, keep = 0) {
  return new Promise((resolve) => {
    const parts = [];
    let bytes = 0;
    req.on('data', (d) => {
      if (bytes < keep) parts.push(d.subarray(0, keep - bytes));
      bytes += d.length;
    });
    req.on('end', () => resolve({ bytes, text: Buffer.concat(parts).toString('utf8') }));
    req.on('error', () => resolve({ bytes, text: '' }));
  });
}

const chunk = (delta, extra = {}) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
const usageChunk = (completion) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 5, completion_tokens: completion, total_tokens: completion + 5 } })}\n\n`;
const finish = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

/** Writes `next()`'s pieces until it returns undefined or the client goes away, honouring back-pressure. */
async function pump(res, next, { everyMs = 0 } = {}) {
  let closed = false;
  res.on('close', () => (closed = true));
  for (let i = 0; !closed; i++) {
    const piece = next(i);
    if (piece === undefined) break;
    if (!res.write(piece))
      await new Promise((r) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          r();
        };
        res.on('drain', done).on('close', done);
      });
    if (everyMs > 0) await new Promise((r) => setTimeout(r, everyMs));
  }
  if (!closed) res.end();
}

/** What each hostile kind streams for one chat completion (the request's body already read). */
const KINDS = {
  /** Token chunks forever, never [DONE]: bounded only by what the client stops reading. */
  endless: (res) => pump(res, () => chunk({ content: 'tok' })),
  /** Four tokens, then a usage chunk claiming 10^15 of them. */
  'huge-usage': (res) =>
    pump(res, (i) =>
      i < 4 ? chunk({ content: 'ok ' }) : i === 4 ? usageChunk(1e15) : i === 5 ? finish : undefined,
    ),
  /** An ordinary short answer: the hostility is in the card's max_model_len. */
  context: (res) =>
    pump(res, (i) =>
      i < 4 ? chunk({ content: 'ok ' }) : i === 4 ? usageChunk(4) : i === 5 ? finish : undefined,
    ),
  /** 270 MB of content in 64 KB pieces, then an orderly end. */
  'huge-replies': (res, o) => {
    const piece = chunk({ content: 'a'.repeat(64 * 1024) });
    const n = Math.ceil(o.replyBytes / (64 * 1024));
    return pump(res, (i) => (i < n ? piece : i === n ? finish : undefined));
  },
  /** One token every 200 ms, forever. */
  drip: (res, o) => pump(res, () => chunk({ content: 'drip ' }), { everyMs: o.dripMs }),
  /** Tool-call deltas forever: each a new call index with 32 KB of arguments. */
  'tool-flood': (res) => {
    const args = 'x'.repeat(32 * 1024);
    return pump(res, (i) =>
      chunk({
        tool_calls: [
          { index: i, id: `c${i}`, type: 'function', function: { name: `f${i}`, arguments: args } },
        ],
      }),
    );
  },
  /** SSE comments forever: no data event, no token, nothing but bytes. */
  pings: (res) => pump(res, () => ': ping\n\n'.repeat(512)),
};

export const HOSTILE_KINDS = Object.keys(KINDS);

/**
 * A hostile engine of `kind` (HOSTILE_KINDS): /v1/models lists `model` with `maxModelLen`, /metrics reports the
 * requests in flight as vllm:num_requests_running, and every chat completion is answered as its kind says.
 * `stats.maxBodyBytes` is the largest request body it was sent.
 */
export async function startHostileEngine(
  kind,
  { model = 'hostile', maxModelLen = 4096, replyBytes = 270 * 1024 * 1024, dripMs = 200 } = {},
) {
  const answer = KINDS[kind];
  if (!answer) throw new Error(`unknown hostile engine ${kind} (known: ${HOSTILE_KINDS.join(', ')})`);
  const stats = { requests: 0, inFlight: 0, maxBodyBytes: 0 };
  const h = await listen(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path.endsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: model, object: 'model', max_model_len: maxModelLen }],
        }),
      );
    }
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return res.end(`vllm:num_requests_running{model_name="${model}"} ${stats.inFlight}\n`);
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      res.writeHead(req.method === 'GET' && path === '/health' ? 200 : 404);
      return res.end();
    }
    stats.requests++;
    stats.inFlight++;
    res.on('close', () => stats.inFlight--);
    const body = await drain(req);
    stats.maxBodyBytes = Math.max(stats.maxBodyBytes, body.bytes);
    res.writeHead(200, SSE_HEADERS);
    await answer(res, { replyBytes, dripMs });
  });
  return { url: h.url, model, stats, close: h.close };
}

// --- llama.cpp's shape --------------------------------------------------------------------------------------
// What llama-server answers, from ggml-org/llama.cpp tools/server at 80fb11a (the commit node-llama-cpp 3.21.1
// carries; get_res_props, get_res_model_info and get_slots are unchanged in upstream's server-context.cpp at
// 001d906a): server-context.cpp:4527 get_res_model_info (/v1/models: `meta.n_ctx`, no max_model_len),
// :4583 get_res_props (/props: `default_generation_settings.n_ctx`, `total_slots`), server-task.cpp:1502
// server_slot::to_json via /slots (`n_ctx`, `is_processing` per slot), server-task.cpp:1578 the
// `llamacpp:requests_processing` / `requests_deferred` gauges, server-context.cpp:3191 the context check (a
// prompt of n_ctx tokens or more is refused with HTTP 400 exceed_context_size_error, server-common.cpp:51).
// nlohmann::json writes object keys sorted, so these bodies are too.

/** JSON with keys sorted at every level, as nlohmann::json (std::map) writes it. */
function sortedJson(v) {
  const sort = (x) =>
    Array.isArray(x)
      ? x.map(sort)
      : x && typeof x === 'object'
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sort(x[k])]),
          )
        : x;
  return JSON.stringify(sort(v));
}

/** Words in every string content of a chat request: the front's stand-in for the tokenizer. */
function promptWords(body) {
  let n = 0;
  for (const m of body.messages ?? []) {
    if (typeof m?.content === 'string') n += m.content.split(/\s+/).filter(Boolean).length;
  }
  return n;
}

/**
 * llama-server's HTTP shape before `upstream` (an OpenAI-compatible origin that answers the completions): `slots`
 * requests run at once, the rest wait; a socket that carried a streamed response is closed, and a request that
 * arrives on it before it is gone is dropped unanswered, as a kept-alive socket the server closed drops it.
 * `stats.closedReused` counts those drops, `stats.peakProcessing` the most requests it ran at once,
 * `stats.everDeferred` the requests that waited for a slot.
 */
export async function startLlamaFront({
  upstream,
  model,
  nCtx = 4096,
  slots = 4,
  closeAfterStream = true,
  // Which of the three places llama-server reports its context answer (all do upstream; a proxy may pass fewer).
  reports = ['models', 'props', 'slots'],
}) {
  const stats = {
    requests: 0,
    processing: 0,
    deferred: 0,
    everDeferred: 0,
    peakProcessing: 0,
    closedReused: 0,
    refused: 0,
    // The distinct first messages of the chats it served (at most 64): what a prompt cache keys on first.
    firstMessages: new Set(),
  };
  const waiting = [];
  const doomed = new WeakSet();
  const acquire = () =>
    stats.processing < slots
      ? Promise.resolve(stats.processing++)
      : new Promise((r) => {
          stats.deferred++;
          stats.everDeferred++;
          waiting.push(r);
        });
  const release = () => {
    const next = waiting.shift();
    if (next) {
      stats.deferred--;
      next();
    } else stats.processing--;
  };
  const json = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(sortedJson(body));
  };
  const slotList = () =>
    Array.from({ length: slots }, (_, id) => ({
      id,
      n_ctx: nCtx,
      speculative: false,
      is_processing: id < stats.processing,
    }));
  const h = await listen(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (doomed.has(req.socket)) {
      stats.closedReused++;
      req.socket.destroy();
      return;
    }
    if (req.method === 'GET') {
      if (path === '/health') return json(res, 200, { status: 'ok' });
      if (path === '/v1/models' || path === '/models')
        return json(res, 200, {
          models: [{ name: model, model, type: 'model', capabilities: ['completion'] }],
          object: 'list',
          data: [
            {
              id: model,
              object: 'model',
              created: Math.floor(Date.now() / 1000),
              owned_by: 'llamacpp',
              ...(reports.includes('models')
                ? { meta: { vocab_type: 1, n_vocab: 32064, n_ctx: nCtx, n_ctx_train: 4 * nCtx, n_embd: 256 } }
                : {}),
            },
          ],
        });
      if (path === '/props' && reports.includes('props'))
        return json(res, 200, {
          default_generation_settings: { n_ctx: nCtx, params: { n_predict: -1, temperature: 0.8 } },
          total_slots: slots,
          model_alias: model,
          endpoint_slots: true,
          endpoint_metrics: true,
          is_sleeping: false,
        });
      if (path === '/slots' && reports.includes('slots')) return json(res, 200, slotList());
      if (path === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        return res.end(
          [
            ['requests_processing', 'Number of requests processing', stats.processing],
            ['requests_deferred', 'Number of requests deferred', stats.deferred],
          ]
            .map(
              ([n, help, v]) =>
                `# HELP llamacpp:${n} ${help}\n# TYPE llamacpp:${n} gauge\nllamacpp:${n} ${v}\n`,
            )
            .join(''),
        );
      }
      return json(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return json(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
    stats.requests++;
    const { text } = await drain(req, 64 * 1024 * 1024);
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return json(res, 500, { error: { code: 500, message: 'JSON parse error', type: 'server_error' } });
    }
    const first = body.messages?.[0]?.content;
    if (typeof first === 'string' && stats.firstMessages.size < 64) stats.firstMessages.add(first);
    const words = promptWords(body);
    if (words >= nCtx) {
      stats.refused++;
      return json(res, 400, {
        error: {
          code: 400,
          message: `request (${words} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`,
          type: 'exceed_context_size_error',
        },
      });
    }
    let gone = false;
    res.on('close', () => (gone = true));
    await acquire();
    stats.peakProcessing = Math.max(stats.peakProcessing, stats.processing);
    if (gone) return release();
    const u = new URL(upstream);
    const up = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: `${u.pathname.replace(/\/$/, '')}/v1/chat/completions`,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (ur) => {
        const streamed = /event-stream/.test(ur.headers['content-type'] ?? '');
        res.writeHead(ur.statusCode ?? 502, {
          'content-type': ur.headers['content-type'] ?? 'application/json',
        });
        ur.pipe(res);
        ur.on('end', () => {
          if (!streamed || !closeAfterStream) return;
          // Closed after the stream, as llama-server does: whatever the client sends next on it is lost.
          doomed.add(req.socket);
          setTimeout(() => req.socket.destroy(), 5000).unref();
        });
      },
    );
    let released = false;
    const done = () => {
      if (!released) {
        released = true;
        release();
      }
    };
    up.on('close', done);
    up.on('error', () => {
      done();
      if (!res.headersSent)
        json(res, 502, { error: { code: 502, message: 'upstream failed', type: 'server_error' } });
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
      done();
    });
    up.end(text);
  });
  return { url: h.url, model, stats, close: h.close };
}

// As a child process (bench:adversarial runs the engines apart, so pumping hundreds of MB never stalls its own
// monitors): `node hostile-engine.mjs '{"kind":"endless",...}'` or `'{"llama":{...}}'`; it sends { url, model }
// over IPC, answers "stats" with its stats, and exits on "close" or when its parent goes.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  const spec = JSON.parse(process.argv[2] ?? '{}');
  const e = spec.llama ? await startLlamaFront(spec.llama) : await startHostileEngine(spec.kind, spec.opts);
  process.on('message', async (m) => {
    if (m === 'stats') process.send({ stats: e.stats });
    if (m === 'close') {
      await e.close();
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ url: e.url, model: e.model });
}
