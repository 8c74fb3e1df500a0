// Generic Python signatures, for any engine. A dead worker thread is a wedge risk: the process keeps running
// (threading.excepthook prints and only the thread ends) and /health stays 200.
import type { RulePack } from './types.js';
import { EXCEPTION_LINE } from './patterns.js';

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
    // torch/cuda memory (torch 2.0 → 2.9): `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …`
    // (older `torch.cuda.OutOfMemoryError`). Whether it kills anything depends on who catches it: a warning.
    {
      name: 'python_cuda_oom',
      severity: 'warning',
      class: 'oom',
      upstream: 'torch/cuda/memory.py OutOfMemoryError (torch 2.0 → 2.9)',
      match: String.raw`OutOfMemoryError: (?:CUDA out of memory|Tried to allocate)`,
    },
  ],
};
