// vLLM only. The engine core process dies mid-step (a CUDA fault in a worker): vllm/v1/engine/core.py
// run_engine_core logs "EngineCore encountered a fatal error." with the traceback and sends ENGINE_CORE_DEAD;
// the API server's AsyncLLM output_handler logs "AsyncLLM output_handler failed." ending in EngineDeadError,
// every in-flight request fails, new ones get 500, /health answers 503 (api_server.py health). Unless
// VLLM_KEEP_ALIVE_ON_ENGINE_DEATH is set, launcher.py terminate_if_errored (on a failed request, or the
// watchdog_loop every VLLM_WATCHDOG_TIME_S = 5 s) then shuts uvicorn down and the port closes.
import type { FaultDef } from './types.js';

export const engineCoreDeath: FaultDef = {
  name: 'engine_core_death',
  engines: ['vllm'],
  summary:
    'the engine core dies (fatal-error traceback, EngineDeadError): requests fail, /health 503, then the API server exits unless keep_alive=1',
  params: {
    keep_alive: {
      default: 0,
      help: '1: VLLM_KEEP_ALIVE_ON_ENGINE_DEATH, the API server stays up answering 503/500; 0: it exits within 5 s',
    },
  },
  validate(p) {
    return p.keep_alive === 0 || p.keep_alive === 1
      ? undefined
      : `keep_alive must be 0 or 1 (got ${JSON.stringify(p.keep_alive)})`;
  },
  onEnable(ctl, p) {
    ctl.vllm?.killEngineCore(p.keep_alive === 1);
  },
};
