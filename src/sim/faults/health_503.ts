// The decode engine's detokenizer heartbeat stops while the process lives: no tokens come out, and /health — a
// real 1-token generation in non-PD SGLang (/health and /health_generate are one handler) — waits
// SGLANG_HEALTH_CHECK_TIMEOUT, logs the real line and answers 503. Upstream: sgl-project/sglang
// python/sglang/srt/entrypoints/http_server.py, health_generate: `while time.time() < tic + HEALTH_CHECK_TIMEOUT`
// waits for `tokenizer_manager.last_receive_tstamp > tic`, else logs "Health check failed. Server couldn't get a
// response from detokenizer for last {HEALTH_CHECK_TIMEOUT} seconds. tic start time: ... last_heartbeat time: ..."
// and returns Response(status_code=503). The port answers and the process is up: restarting it is the fix.
import type { FaultDef } from './types.js';

export const health503: FaultDef = {
  name: 'health_503',
  summary:
    "decode's detokenizer heartbeat stops: no tokens, and its /health generates, logs `Health check failed` and answers 503 after the health-check timeout",
  params: {},
  onEnable(ctl) {
    ctl.setDecodeStalled(true);
  },
  onDisable(ctl) {
    ctl.setDecodeStalled(false);
  },
  healthGenerates(service) {
    return service === 'decode';
  },
};
