// llama.cpp's server (`llama-server`, tools/server), read at ggml-org/llama.cpp v0.5.0 (the source tree bundled in
// node-llama-cpp 3.22.1, snapshot of 2026-09-28; the repository is over the fetch limit). Its log is common/log.cpp's:
// no prefix by default (`--log-prefix` adds the level letter, `--log-timestamps` a relative stamp), the server's
// own messages start `srv  %12s: ` (SRV_*, tools/server/server-common.h:33) or `slot %12s: id %2d | task %d | `
// (SLT_*), the library's `func: ` (LLAMA_LOG_*). Ollama runs this server and prints its output into its own log
// (./ollama.ts), so every rule here is read there too.
//
// ggml's aborts, CUDA errors and a death by a signal are the generic shapes (./native.ts, ./gpu.ts): llama.cpp's own
// kill switch is `GGML_ABORT("fatal error - …")` after `no tokens to decode` (tools/server/server-context.cpp:3656).
import type { Carrier } from '../carriers.js';
import { PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

const UPSTREAM = 'ggml-org/llama.cpp v0.5.0 (node-llama-cpp 3.22.1 bundle, 2026-09-28)';

// Where a carrier of user text ends: the next line that starts as a log line does — llama-server's own (its module
// prefixes after the optional stamp and level letter), the library's `func: ` lines, or another program's stamped
// line (Ollama's slog records, a container's time) — so an unterminated record never shields the rest of the log.
const RECORD =
  /^(?:\d{1,6}\.\d\d\.\d{3}\.\d{3} )?(?:[IWED] )?(?:(?:srv {1,2}|slot |que {2}|res {2})[ \w]{1,12}|[a-z_]{2,64}): |^\[?\d{4}-\d\d-\d\d[T ]|^time=\d|^\[GIN\] /;

/**
 * llama.cpp's records that print user text raw: the request's grammar after a parse error (it ends on the library's
 * `failed to parse grammar`) and the model's output after a tool-call parse error (to the server's next line).
 */
const CARRIERS: readonly Carrier[] = [
  {
    name: 'llamacpp_grammar',
    upstream: `src/llama-grammar.cpp:716 parse, :1225 llama_grammar_init_impl (${UPSTREAM})`,
    literal: 'error parsing grammar: ',
    open: /parse: error parsing grammar: /,
    // To the next log line (the library's `failed to parse grammar` after the grammar is shielded with it): a tail
    // the grammar can print would end the record where the user likes.
    end: { kind: 'next_record', record: RECORD },
    raises: ['llamacpp_grammar_parse_error'],
  },
  {
    name: 'llamacpp_unparsed_output',
    upstream: `common/chat.cpp:1496 common_chat_peg_parse (${UPSTREAM})`,
    literal: ': unparsed ',
    open: /common_chat_peg_parse: unparsed [\w .-]{1,64} output: /,
    end: { kind: 'next_record', record: RECORD },
    raises: ['llamacpp_tool_call_unparsed'],
  },
];

export const llamacppPack: RulePack = {
  name: 'llamacpp',
  engineLines: [],
  carriers: CARRIERS,
  rules: [
    // tools/server/server-context.cpp:3653 decode(): `SRV_WRN("%s", "no tokens to decode\n")`, and past three in a
    // row `GGML_ABORT("fatal error - please provide logs and repro in %s\n", …)` (:3656): the server's own kill
    // switch for a loop that schedules nothing. The line repeats each loop: one event per 5 s (`perRequest` on the
    // function name, a constant), and the abort after it is the death (./native.ts ggml_abort).
    {
      name: 'llamacpp_no_tokens_to_decode',
      severity: 'warning',
      class: 'engine_error',
      upstream: `tools/server/server-context.cpp:3653 decode() SRV_WRN (${UPSTREAM})`,
      logger: 'llamacpp',
      perRequest: 'func',
      match: String.raw`srv {1,12}(?<func>decode): no tokens to decode\s*$`,
    },
    // tools/server/server-context.cpp:3710 decode(): `SRV_ERR("%s off = %d, n_batch = %d, ret = %d\n", err, …)` with
    // err `Context size has been exceeded.` (n_batch 1, ret 1: not even one token has a KV slot), `Invalid input
    // batch.` (ret -1) or `Compute error.` (ret < -1): every processing slot gets the error and the context is
    // cleared; the server serves on. A full context is memory pressure (`retract`), the others the engine's errors.
    {
      name: 'llamacpp_decode_failed',
      severity: 'warning',
      class: 'engine_error',
      classWhen: [{ class: 'retract', in: ['error'], match: '^Context size' }],
      upstream: `tools/server/server-context.cpp:3710 decode() SRV_ERR (${UPSTREAM})`,
      logger: 'llamacpp',
      match: String.raw`srv {1,12}decode: (?<error>Context size has been exceeded|Invalid input batch|Compute error)\. off = \d{1,10}, n_batch = (?<n_batch>\d{1,10}), ret = (?<ret>-?\d{1,10})`,
    },
    // tools/server/server-context.cpp:3733 decode(): `SRV_WRN("failed to find free space in the KV cache, retrying
    // with smaller batch size, off = %d, n_batch = %d, ret = %d\n", …)` after src/llama-context.cpp:1837
    // llama_context::decode `LLAMA_LOG_WARN("%s: failed to find a memory slot for batch of size %d\n", …)`: the KV
    // cache is full, the batch is halved and retried.
    {
      name: 'llamacpp_kv_cache_full',
      severity: 'warning',
      class: 'retract',
      upstream: `tools/server/server-context.cpp:3733 decode(), src/llama-context.cpp:1837 llama_context::decode (${UPSTREAM})`,
      logger: 'llamacpp',
      match: String.raw`srv {1,12}decode: failed to find free space in the KV cache, retrying with smaller batch size|decode: failed to find a memory slot for batch of size (?<size>\d{1,10})`,
    },
    // src/llama.cpp:375 llama_model_load: `LLAMA_LOG_ERROR("%s: error loading model: %s\n", __func__, err.what())`
    // (a missing or corrupt file, `unable to allocate CUDA0 buffer` when the weights do not fit), then
    // tools/server/server.cpp:478 llama_server: `SRV_ERR("%s", "exiting due to model loading error\n")` and exit 1.
    // The load error is the root cause; the exit is the same incident.
    {
      name: 'llamacpp_model_load_error',
      severity: 'critical',
      class: 'engine_death',
      upstream: `src/llama.cpp:375 llama_model_load (${UPSTREAM})`,
      incident: PROCESS_DEATH,
      logger: 'llamacpp',
      match: String.raw`llama_model_load: (?<exception>error loading model): (?<message>[^\n]{0,500}?)\s*$`,
    },
    {
      name: 'llamacpp_exit_model_load',
      severity: 'critical',
      class: 'engine_death',
      upstream: `tools/server/server.cpp:478 llama_server (${UPSTREAM})`,
      incident: PROCESS_DEATH,
      logger: 'llamacpp',
      match: String.raw`srv {1,12}llama_server: exiting due to model loading error\s*$`,
    },
    // ggml/src/ggml-cuda/ggml-cuda.cu:893 ggml_backend_cuda_buffer_type_alloc_buffer: `GGML_LOG_ERROR("%s: allocating
    // %.2f MiB on device %d: cudaMalloc failed: %s\n", …)` and ggml/src/ggml-alloc.c:941/1134 `%s: failed to allocate %s
    // buffer of size %zu`: device memory ran out, at load (the load then fails: the death above) or for a compute
    // buffer. Whether it kills anything depends on who catches it: a warning, as torch's (python_cuda_oom).
    {
      name: 'llamacpp_cuda_oom',
      severity: 'warning',
      class: 'oom',
      upstream: `ggml/src/ggml-cuda/ggml-cuda.cu:893, ggml/src/ggml-alloc.c:941 (${UPSTREAM})`,
      // The function name before each is left out of the match (a run of word characters tried at every position
      // costs its length): the words follow `: `.
      match: String.raw`(?<=: )allocating [\d.]{1,16} MiB on device (?<device>\d{1,4}): cudaMalloc failed: |(?<=: )failed to allocate (?<buffer>[\w-]{1,32}) buffer of size (?<size>\d{1,20})`,
    },
    // src/llama-grammar.cpp:716 llama_grammar_parser::parse: `fprintf(stderr, "%s: error parsing grammar: %s\n\n%s\n",
    // __func__, err.what(), src)`: the request's grammar failed to parse, and the grammar (the user's) is printed raw
    // after it, then src/llama-grammar.cpp:1225 `failed to parse grammar`. A user's grammar raises this at will: a
    // warning whose class names nothing, matching the engine's words only; the grammar after it is a carrier record.
    {
      name: 'llamacpp_grammar_parse_error',
      severity: 'warning',
      class: 'grammar',
      upstream: `src/llama-grammar.cpp:716 llama_grammar_parser::parse (${UPSTREAM})`,
      logger: 'llamacpp',
      match: String.raw`parse: error parsing grammar: `,
    },
    // common/chat.cpp:1496 common_chat_peg_parse: `LOG_WRN("%s: unparsed %s output: %s\n", __func__, format, …)`: the
    // model's output did not parse as the chat format's tool calls; the output (the model's, which the user steers)
    // follows raw, over as many lines as it has.
    {
      name: 'llamacpp_tool_call_unparsed',
      severity: 'warning',
      class: 'tool_call_parse_error',
      upstream: `common/chat.cpp:1496 common_chat_peg_parse (${UPSTREAM})`,
      logger: 'llamacpp',
      match: String.raw`common_chat_peg_parse: unparsed [\w .-]{1,64} output: `,
    },
  ],
};
