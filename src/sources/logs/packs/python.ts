// Generic Python signatures, for any engine. A dead worker thread is a wedge risk: the process keeps running
// (threading.excepthook prints and only the thread ends) and /health stays 200.
import type { RulePack } from './types.js';
import { COMPOSE_PREFIX, EXCEPTION_LINE, PROCESS_DEATH } from './patterns.js';

export const pythonPack: RulePack = {
  name: 'python',
  engineLines: [],
  rules: [
    // CPython Lib/threading.py excepthook (3.8 → 3.13): `Exception in thread Thread-3 (forward_thread_func):`
    // (3.10+) or `Exception in thread Thread-3:` (older, or a named thread), then the traceback, whose last
    // line names the exception. Any prefix is tolerated (vLLM's `(EngineCore_DP0 pid=N) `, `svc-1  | `); the
    // closing line must carry the header's prefix, which keeps traceback source lines from closing it.
    {
      name: 'python_thread_exception',
      severity: 'critical',
      class: 'thread_death',
      upstream: 'cpython Lib/threading.py excepthook (3.8 → 3.13)',
      incident: 'thread_death',
      // The thread name is bounded (CPython names are short): `.+?` tried the rest of the line after every copy of
      // the literal, quadratic on a line that repeats it (issue 24).
      match: String.raw`Exception in thread (?<thread>.{1,200}?)(?: \((?<target>[\w.<>]{1,200})\))?:\s*$`,
      follows: { match: EXCEPTION_LINE, within: 100 },
      // The PD bootstrap thread (NIXL, Mooncake: `_start_bootstrap_thread` names its thread target
      // bootstrap_thread) dying on any exception is the KV bootstrap incident, whatever the engine pack; so is a
      // thread death that ends on NIXL's GUARD assertion (disaggregation/nixl/conn.py, see ./nixl.ts).
      classWhen: [
        { class: 'kv_bootstrap_dead', in: ['target', 'thread'], match: 'bootstrap_thread' },
        { class: 'kv_bootstrap_dead', in: ['message'], match: "^First message should be b'NixlMsgGuard'" },
      ],
    },
    // CPython Python/pylifecycle.c fatal_error (3.8 → 3.13) and Modules/faulthandler.c: a crash in native code (a
    // segfault in a CUDA kernel launch, an abort from C++) prints `Fatal Python error: Segmentation fault` (or
    // `Aborted`, `Bus error`, …; `Fatal Python error: _enter_buffered_busy: could not acquire lock …` for an
    // interpreter error), then each thread's stack (`Thread 0x… (most recent call first):`, `Current thread 0x… (most
    // recent call first):`, `  File "…", line N in func`), then the process dies by the signal. No traceback, no
    // exception line: the current thread's innermost frame is where it died, the root cause with the signal.
    {
      name: 'python_fatal_error',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'cpython Python/pylifecycle.c fatal_error, Modules/faulthandler.c (3.8 → 3.13)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}Fatal Python error: (?<exception>[^\n:]{1,120}?)(?:: (?<message>[^\n]{1,300}?))?\s*$`,
      follows: {
        // The frame is the root cause's message (the header named the signal): `File "…", line N in func`.
        match: String.raw`^${COMPOSE_PREFIX}\s{0,8}(?<message>File "(?<file>[^"\n]{1,300})", line (?<line>\d{1,6}) in (?<func>\S{1,200}))\s*$`,
        within: 400,
        after: String.raw`^${COMPOSE_PREFIX}Current thread 0x[0-9a-fA-F]{1,16}[^\n]{0,120}\(most recent call first\):\s*$`,
        first: true,
      },
      emitUnclosed: true,
    },
    // uvicorn/protocols/http/*_impl.py access log (uvicorn 0.20 → 0.35): `%s - "%s %s HTTP/%s" %d %s`, as SGLang, vLLM
    // and LiteLLM print it: `INFO:     10.0.0.1:5555 - "GET /health HTTP/1.1" 503 Service Unavailable`. The engine's own
    // /health said it is unhealthy (vLLM: the engine is dead; SGLang: a health check failed). Anchored at the line's
    // end, so a path with quotes in it (the requester's) cannot print a status the server did not answer. One streak
    // of probes is one incident.
    {
      name: 'python_health_503',
      severity: 'warning',
      class: 'health_check_failed',
      upstream: 'uvicorn/protocols/http/h11_impl.py, httptools_impl.py access log (0.20 → 0.35)',
      incident: 'health_503',
      match: String.raw`- "GET /health HTTP/1\.[01]" 503 Service Unavailable\s*$`,
    },
    // torch/cuda memory (torch 2.0 → 2.9): `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …`
    // (older `torch.cuda.OutOfMemoryError`). Whether it kills anything depends on who catches it: a warning.
    {
      name: 'python_cuda_oom',
      severity: 'warning',
      class: 'oom',
      // Inside an engine's traceback (the exception its death record closes on) the death is the event.
      generic: true,
      upstream: 'torch/cuda/memory.py OutOfMemoryError (torch 2.0 → 2.9)',
      match: String.raw`OutOfMemoryError: (?:CUDA out of memory|Tried to allocate)`,
    },
  ],
};
