// @ts-check
// The second bench:ingest generator: lines that vary the way a real multi-rank SGLang deployment's do, so the
// scanner's shortcuts are measured on text nobody tuned them for. Deterministic (mulberry32, seed 7).
//   - rank prefixes in every combination and in both orders upstream has used (run_scheduler_process,
//     python/sglang/srt/managers/scheduler.py: DP, PP, ATTN_CP, MOE_DP, TP, EP, each only when its size > 1);
//   - batch lines with every current field (scheduler_metrics_mixin.py log_prefill_stats / log_decode_stats:
//     spec decoding, swa/mamba pools, PD queues, cpu graph, waiting-image-req), each optional field present or not;
//   - request logs (--log-requests, tokenizer_manager.py: `Receive: obj=GenerateReqInput(...)` and `Finish: obj=...,
//     out={...}`) carrying user text, which may say anything ("failed", "Exception", "timed out", "watchdog");
//   - uvicorn access lines (IPv4 and IPv6 clients, every route and status) and router lines;
//   - long tracebacks that are not thread deaths (an ASGI application error: 40-60 frames, chained exceptions);
//   - rare real failure signatures, as in test/helpers/ingest-gen.mjs.
import { mulberry32, writeLines } from '../test/helpers/ingest-gen.mjs';

const pad = (/** @type {number} */ n, w = 2) => String(n).padStart(w, '0');
/** @param {number} ms */
function stamp(ms) {
  const d = new Date(Date.UTC(2026, 8, 3, 4, 0, 0) + ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const WORDS = (
  'the a of to and in that is was he for it with as his on be at by I had not are but from or have an they which ' +
  'one you were all we her she there would their will when who him been has more if no out so what up said about ' +
  'failed error timeout timed out exception thread watchdog transfer abort request decode prefill batch health ' +
  'token running queue memory kernel rank bootstrap room Traceback Error assert killed retry'
).split(' ');
/** @type {[file: string, line: number, fn: string, src: string][]} */
const FRAMES = [
  [
    '/usr/local/lib/python3.12/dist-packages/uvicorn/protocols/http/httptools_impl.py',
    409,
    'run_asgi',
    'result = await app(  # type: ignore[func-returns-value]',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/uvicorn/middleware/proxy_headers.py',
    60,
    '__call__',
    'return await self.app(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/fastapi/applications.py',
    1054,
    '__call__',
    'await super().__call__(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/applications.py',
    113,
    '__call__',
    'await self.middleware_stack(scope, receive, send)',
  ],
  ['/usr/local/lib/python3.12/dist-packages/starlette/middleware/errors.py', 187, '__call__', 'raise exc'],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/middleware/cors.py',
    85,
    '__call__',
    'await self.app(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/middleware/exceptions.py',
    62,
    '__call__',
    'await wrap_app_handling_exceptions(self.app, conn)(scope, receive, send)',
  ],
  ['/usr/local/lib/python3.12/dist-packages/starlette/_exception_handler.py', 53, 'wrapped_app', 'raise exc'],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/routing.py',
    715,
    '__call__',
    'await self.middleware_stack(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/routing.py',
    735,
    'app',
    'await route.handle(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/starlette/routing.py',
    288,
    'handle',
    'await self.app(scope, receive, send)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/fastapi/routing.py',
    301,
    'app',
    'raw_response = await run_endpoint_function(',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/http_server.py',
    1062,
    'openai_v1_chat_completions',
    'return await raw_request.app.state.openai_serving_chat.handle_request(',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/openai/serving_base.py',
    141,
    'handle_request',
    'return await self._handle_streaming_request(',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/openai/serving_chat.py',
    512,
    '_generate_chat_stream',
    'async for content in self.tokenizer_manager.generate_request(',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py',
    498,
    'generate_request',
    'tokenized_obj = await self._tokenize_one_request(obj)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py',
    671,
    '_tokenize_one_request',
    'self._validate_one_request(obj, input_ids)',
  ],
  [
    '/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py',
    742,
    '_validate_one_request',
    'raise ValueError(',
  ],
];
const EXCEPTIONS = [
  "ValueError: The input (163841 tokens) is longer than the model's context length (163840 tokens).",
  'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
  "KeyError: 'messages'",
  'asyncio.exceptions.CancelledError',
  "TypeError: 'NoneType' object is not subscriptable",
];

/** Returns a function giving line i (no newline). `faults` adds rare failure lines. */
export function makeVariedSource({ seed = 7, faults = true } = {}) {
  const rnd = mulberry32(seed);
  const int = (/** @type {number} */ n) => Math.floor(rnd() * n);
  /** @type {<T>(xs: T[]) => T} */
  const pick = (xs) => /** @type {typeof xs[number]} */ (xs[int(xs.length)]);
  const f2 = (/** @type {number} */ x) => x.toFixed(2);
  const hex = () =>
    (int(2 ** 31) * 2 ** 20 + int(2 ** 20)).toString(16).padStart(12, '0') + int(2 ** 31).toString(16);
  let ms = 0;
  let thread = 1;
  /** @type {string[]} */
  const pending = [];
  const prefix = () => {
    const parts = [];
    const order = int(2); // upstream has put PP before and after DP
    const dp = rnd() < 0.6 ? ` DP${int(8)}` : '';
    const pp = rnd() < 0.15 ? ` PP${int(4)}` : '';
    if (order === 0) parts.push(dp, pp);
    else parts.push(pp, dp);
    if (rnd() < 0.1) parts.push(` ATTN_CP${int(2)}`, ` MOE_DP${int(2)}`);
    parts.push(` TP${int(8)}`);
    if (rnd() < 0.5) parts.push(` EP${int(16)}`);
    return parts.join('');
  };
  const text = (/** @type {number} */ n) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const opt = (/** @type {number} */ p, /** @type {string} */ s) => (rnd() < p ? s : '');

  const prefill = (/** @type {string} */ head) =>
    `${head} Prefill batch${rnd() < 0.5 ? ` [${int(4096)}]` : ''}, #new-seq: ${1 + int(8)}, #new-token: ${int(16384)}, #cached-token: ${int(8192)}, ` +
    `${opt(0.5, `cache hit rate: ${f2(rnd() * 100)}%, `)}token usage: ${f2(rnd())}, ${opt(0.3, `full token usage: ${f2(rnd())}, swa token usage: ${f2(rnd())}, `)}` +
    `${opt(0.1, `mamba usage: ${f2(rnd())}, `)}#running-req: ${int(128)}, #queue-req: ${int(32)}, ${opt(0.5, `#pending-token: ${int(9000)}, `)}` +
    `${opt(0.2, `waiting-image-req: ${int(4)}, `)}${opt(0.6, `#prealloc-req: ${int(8)}, #bootstrap-req: ${int(8)}, #inflight-req: ${int(8)}, `)}` +
    `${opt(0.5, `cuda graph: ${rnd() < 0.5 ? 'True' : 'False'}, `)}${opt(0.2, `cpu graph: False, `)}input throughput (token/s): ${f2(rnd() * 40000)}, `;
  const decode = (/** @type {string} */ head) =>
    `${head} Decode batch${rnd() < 0.5 ? ` [${int(4096)}]` : ''}${rnd() < 0.5 ? '.' : ','} #running-req: ${int(256)}, ` +
    (rnd() < 0.7
      ? `#token: ${int(400000)}, token usage: ${f2(rnd())}, `
      : `#full token: ${int(400000)}, full token usage: ${f2(rnd())}, #swa token: ${int(90000)}, swa token usage: ${f2(rnd())}, `) +
    `${opt(0.1, `mamba num: ${int(64)}, mamba usage: ${f2(rnd())}, `)}${opt(0.4, `accept len: ${f2(1 + rnd() * 3)}, accept rate: ${f2(rnd())}, `)}` +
    `${opt(0.6, `pre-allocated usage: ${f2(rnd())}, #prealloc-req: ${int(8)}, #transfer-req: ${int(8)}, #retracted-req: ${int(2)}, `)}` +
    `cuda graph: ${rnd() < 0.9 ? 'True' : 'False'}, ${opt(0.2, 'cpu graph: False, ')}gen throughput (token/s): ${f2(rnd() * 9000)}, #queue-req: ${int(64)}, `;
  const sampling = () =>
    `{'temperature': ${f2(rnd())}, 'top_p': ${f2(rnd())}, 'max_new_tokens': ${int(4096)}, 'stop': None, 'skip_special_tokens': True}`;
  const receive = (/** @type {string} */ ts) =>
    `[${ts}] Receive: obj=GenerateReqInput(validation_time=${(rnd() / 100).toExponential(6)}, received_time=${(1.7e9 + rnd() * 1e7).toFixed(6)}, ` +
    `rid='${hex()}', text='${text(8 + int(36))}', input_ids=None, input_embeds=None, image_data=None, sampling_params=${sampling()}, ` +
    `return_logprob=False, logprob_start_len=-1, top_logprobs_num=0, stream=${rnd() < 0.7 ? 'True' : 'False'}, log_metrics=True, ` +
    `lora_path=None, custom_logit_processor=None, bootstrap_host='10.0.${int(255)}.${int(255)}', bootstrap_port=8998, bootstrap_room=${int(2 ** 53)}, data_parallel_rank=None)`;
  const finish = (/** @type {string} */ ts) =>
    `[${ts}] Finish: obj=GenerateReqInput(rid='${hex()}', text='${text(4 + int(20))}', sampling_params=${sampling()}, stream=True), ` +
    `out={'text': '${text(10 + int(50))}', 'meta_info': {'id': '${hex()}', 'finish_reason': {'type': '${rnd() < 0.8 ? 'stop' : 'length'}'}, ` +
    `'prompt_tokens': ${int(8000)}, 'completion_tokens': ${int(4000)}, 'cached_tokens': ${int(8000)}, 'e2e_latency': ${f2(rnd() * 60)}}}`;
  const access = (/** @type {string} */ ts) => {
    const client =
      rnd() < 0.8
        ? `10.${int(255)}.${int(255)}.${int(255)}:${1024 + int(64000)}`
        : `[fd00::${int(65535).toString(16)}]:${1024 + int(64000)}`;
    const route = pick([
      'POST /v1/chat/completions',
      'POST /generate',
      'GET /health',
      'GET /health_generate',
      'GET /get_server_info',
      'GET /metrics',
      'GET /v1/models',
      'POST /v1/completions',
      'POST /abort_request',
    ]);
    const st = pick([
      '200 OK',
      '200 OK',
      '200 OK',
      '200 OK',
      '400 Bad Request',
      '503 Service Unavailable',
      '499 Client Closed Request',
    ]);
    return `[${ts}] INFO:     ${client} - "${route} HTTP/1.1" ${st}`;
  };
  const traceback = (/** @type {string} */ ts) => {
    /** @type {string[]} */
    const frames = [];
    const depth = 40 + int(21);
    for (let k = 0; k < depth; k++) {
      const [file, line, fn, src] = FRAMES[k % FRAMES.length] ?? ['', 0, '', ''];
      frames.push(`  File "${file}", line ${line + int(3)}, in ${fn}`, `    ${src}`);
    }
    const exc = pick(EXCEPTIONS);
    const chained =
      rnd() < 0.3
        ? [
            '',
            'During handling of the above exception, another exception occurred:',
            '',
            'Traceback (most recent call last):',
            ...frames.slice(0, 12),
            exc,
          ]
        : [];
    return [
      `[${ts}] ERROR:    Exception in ASGI application`,
      'Traceback (most recent call last):',
      ...frames,
      exc,
      ...chained,
    ];
  };
  const misc = (/** @type {string} */ ts, /** @type {string} */ head) =>
    pick([
      `[${ts}] Router: request ${hex()} routed to prefill http://10.0.${int(255)}.${int(255)}:30000 decode http://10.0.${int(255)}.${int(255)}:30002`,
      `${head} Load weight end. type=DeepseekV32ForCausalLM, dtype=torch.bfloat16, avail mem=${f2(rnd() * 20)} GB, mem usage=${f2(rnd() * 80)} GB.`,
      `${head} KV Cache is allocated. #tokens: ${int(900000)}, K size: ${f2(rnd() * 30)} GB, V size: ${f2(rnd() * 30)} GB`,
      `${head} Cache flushed successfully!`,
      `[${ts}] The server is fired up and ready to roll!`,
      `${head} Scheduler: retract ${int(4)} requests, #new_token_ratio: ${f2(rnd())} -> ${f2(rnd())}`,
      `INFO ${ts.slice(5)} [loggers.py:257] Engine 000: Avg prompt throughput: ${f2(rnd() * 900)} tokens/s, Avg generation throughput: ${f2(rnd() * 900)} tokens/s, Running: ${int(64)} reqs, Waiting: ${int(8)} reqs, GPU KV cache usage: ${f2(rnd() * 100)}%, Prefix cache hit rate: ${f2(rnd() * 100)}%`,
      `${head} Prefill bootstrap room ${int(2 ** 53)} transfer done in ${f2(rnd() * 300)} ms`,
      `[${ts}] WARNING: The request ${hex()} was aborted by the client.`,
    ]);

  return () => {
    if (pending.length > 0) return pending.shift();
    ms += int(40);
    const ts = stamp(ms);
    const head = `[${ts}${prefix()}]`;
    const r = rnd();
    if (faults && r < 0.0002) {
      const n = thread++;
      pending.push(
        'Traceback (most recent call last):',
        '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
        '    self.run()',
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/disaggregation/nixl/conn.py", line 1412, in bootstrap_thread',
        '    waiting_req_bytes[0] == GUARD',
        `AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?`,
      );
      return `Exception in thread Thread-${n} (bootstrap_thread):`;
    }
    if (faults && r < 0.0006)
      return `${head} Decode transfer failed for request rank=${int(8)} decode_req.req.rid='${hex()}' decode_req.req.bootstrap_room=${int(2 ** 53)} with exception KVTransferError(bootstrap_room=${int(2 ** 53)}): Aborted by AbortReq.`;
    if (r < 0.0011) {
      const tb = traceback(ts);
      pending.push(...tb.slice(1));
      return tb[0];
    }
    if (r < 0.62) return decode(head);
    if (r < 0.74) return prefill(head);
    if (r < 0.8) return receive(ts);
    if (r < 0.86) return finish(ts);
    if (r < 0.96) return access(ts);
    return misc(ts, head);
  };
}

/** Writes `n` lines to `file`; resolves with the byte size. */
/**
 * @param {string} file
 * @param {number} n
 * @param {{ seed?: number, faults?: boolean }} [opts]
 */
export function writeVariedLog(file, n, opts = {}) {
  return writeLines(file, n, makeVariedSource(opts));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [n = '1000000', file = 'sglang-varied.log'] = process.argv.slice(2);
  const bytes = await writeVariedLog(file, Number(n));
  process.stdout.write(`${file}: ${n} lines, ${bytes} bytes\n`);
}
