// Ollama (ollama/ollama, read at fb30760996871fa9460115c753afd2c60d4ab0f7, 2026-08-21; the runner rules of older
// builds at f63eea3d273816ffc27fbeb0662ab44d236abc45, the last commit before 9db4bdba "use llama-server
// exclusively", 2026-05-29). Ollama logs through Go's slog TextHandler (logutil/logutil.go NewLogger:
// `time=… level=ERROR source=llama_server.go:1023 msg="llama-server terminated" error=…`), a logfmt record whose
// message is `msg` (formats/structured.ts): each rule is the whole message, anchored at both ends, so an attribute
// or a prompt holding the words is not the record. The llama-server it runs writes its own lines into the same
// log (llm/status.go StatusWriter passes them through): the llamacpp pack reads those, and a death's CUDA error or
// ggml abort (./gpu.ts, ./native.ts) is the root cause of the `terminated` record after it (one incident).
import { PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

const AT = 'ollama @ fb307609';
const OLD = 'ollama @ f63eea3d (before 2026-05-29)';

export const ollamaPack: RulePack = {
  name: 'ollama',
  engineLines: [],
  rules: [
    // llm/llama_server.go:1023 startProcess: `slog.Error("llama-server terminated", "error", err, "exit", …)` when
    // the server process exits with an error it printed; llm/server.go:316 (older) `slog.Error("llama runner
    // terminated", "error", err)`. Every loaded model of that runner is gone; the next request reloads it.
    {
      name: 'ollama_runner_terminated',
      severity: 'critical',
      class: 'engine_death',
      upstream: `llm/llama_server.go:1023 startProcess (${AT}); llm/server.go:316 (${OLD})`,
      incident: PROCESS_DEATH,
      match: String.raw`^(?<runner>llama-server|llama runner) terminated\s*$`,
    },
    // llm/llama_server.go:1196 getServerStatus: `slog.Warn("llama-server process no longer running", "sys", …)` when
    // the process ended by a signal (exit code -1); llm/server.go:1305 (older) `llama runner process no longer
    // running`. The model is gone from under its requests.
    {
      name: 'ollama_runner_gone',
      severity: 'critical',
      class: 'engine_death',
      upstream: `llm/llama_server.go:1196 getServerStatus (${AT}); llm/server.go:1305 (${OLD})`,
      incident: PROCESS_DEATH,
      match: String.raw`^(?:llama-server|llama runner) process no longer running\s*$`,
    },
    // server/sched.go:734 (WaitUntilRunning failed): `slog.Error("error loading llama server", "error", err)`; the
    // request that asked for the model fails with it.
    {
      name: 'ollama_load_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: `server/sched.go:734 (${AT})`,
      incident: PROCESS_DEATH,
      match: String.raw`^error loading llama server\s*$`,
    },
    // llm/llama_server.go:1640 completion: `slog.Error("llama-server completion error", "error", err)`: the request to
    // the server failed at the transport (the runner died under it: "model runner has unexpectedly stopped").
    {
      name: 'ollama_completion_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: `llm/llama_server.go:1640 completion (${AT})`,
      incident: PROCESS_DEATH,
      match: String.raw`^llama-server (?:completion|chat) error\s*$`,
    },
    // server/sched.go:652/667: `slog.Warn("llama-server load failed; reducing automatic context and retrying once",
    // …)` / `"llama-server load failed; evicting all other models and retrying once"`, and :1648 `slog.Warn("runtime
    // OOM detected; expiring loaded models to clear memory before next request", …)`: device memory ran out, at load
    // or while serving; Ollama retries.
    {
      name: 'ollama_oom',
      severity: 'warning',
      class: 'oom',
      upstream: `server/sched.go:652, :667, :1648 (${AT})`,
      match: String.raw`^llama-server load failed; (?<retry>reducing automatic context|evicting all other models) and retrying once\s*$|^runtime OOM detected; expiring loaded models`,
    },
  ],
};
