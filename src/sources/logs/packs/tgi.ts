// Hugging Face TGI (huggingface/text-generation-inference, read at db931fcf42da018a3657580c64bf2720f167f9ab,
// 2026-01-08; the repository was archived in 2026 and is still deployed). The launcher and router log through Rust
// `tracing` (launcher/src/main.rs: `.compact()`, or `.json()` with --json-output): `2026-01-08T15:02:49.123456Z
// ERROR text_generation_launcher: Shard 0 crashed`. The Python shards log through loguru serialized to JSON on
// their stdout; the launcher relogs each record's text at its level (PythonLogMessage::trace), so a shard's error
// and its traceback are one launcher record (the traceback lines unprefixed).
import { EXCEPTION_LINE, PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

const LAUNCHER = 'launcher/src/main.rs';
const AT = '@ db931fcf';

export const tgiPack: RulePack = {
  name: 'tgi',
  engineLines: [],
  rules: [
    // launcher/src/main.rs:1217 shard_manager: `tracing::error!("Shard complete standard error output:\n{err}")` when
    // a shard process exited: the shard's stderr follows in the same record (its traceback, CUDA errors, a CPython
    // fatal error), then :1220 `Shard process was signaled to shutdown with signal {signal}` when a signal ended it.
    // The record's last exception line is the shard's cause.
    {
      name: 'tgi_shard_stderr',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${LAUNCHER}:1217 shard_manager ${AT}`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Shard complete standard error output:\s*$`,
      follows: { match: EXCEPTION_LINE, within: 400 },
      emitUnclosed: true,
    },
    {
      name: 'tgi_shard_signaled',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${LAUNCHER}:1220 shard_manager ${AT}`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Shard process was signaled to shutdown with signal (?<signal>\d{1,3})`,
    },
    // launcher/src/main.rs:2335 main loop: `tracing::error!("Shard {rank} crashed")` (a shard's status channel said
    // Failed: the launcher shuts every shard down and exits), :1677 `Shard {rank} failed to start` (start-up),
    // :2342 `Webserver Crashed` (the router process exited: the launcher shuts the shards down).
    {
      name: 'tgi_shard_crashed',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${LAUNCHER}:2335, :1677 ${AT}`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Shard (?<rank>\d{1,4}) (?:crashed|failed to start)\s*(?:rank=\d{1,4}\s*)?$`,
    },
    {
      name: 'tgi_webserver_crashed',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${LAUNCHER}:2342 ${AT}`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Webserver Crashed\s*$`,
    },
    // server/text_generation_server/interceptor.py:27 ExceptionInterceptor: `logger.exception(f"Method {method_name}
    // encountered an error.")` when a gRPC call of the shard raised (Prefill, Decode, Warmup…): the batch's
    // requests fail with it (`Request failed during generation: Server error: …` in the router); the shard serves
    // on unless the error was a sticky CUDA error (the gpu shapes catch it in the traceback, the same incident).
    // The launcher relogs it at ERROR with the traceback after it, unprefixed: the record closes on its exception.
    {
      name: 'tgi_method_error',
      severity: 'warning',
      class: 'engine_error',
      upstream: `server/text_generation_server/interceptor.py:27 ExceptionInterceptor ${AT}`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Method (?<method>\w{1,64}) encountered an error\.\s*$`,
      follows: { match: EXCEPTION_LINE, within: 400 },
      emitUnclosed: true,
    },
    // backends/v3/src/backend.rs:546 send_errors (@ db931fcf): `tracing::error!("{err}")` for every request of a batch
    // the shard failed, err = router/src/infer/mod.rs:410 `Request failed during generation: {0}` around
    // backends/v3/src/client/mod.rs `Server error: {0}` (the shard's error) or `Could not connect to Text Generation
    // server: {0}` (the shard is gone). Quoted in huggingface/text-generation-inference #3317 (2025-08, JSON output).
    // Each request logs it: one incident while it lasts, a warning (the shard's death, if it died, is critical).
    {
      name: 'tgi_request_failed',
      severity: 'warning',
      class: 'engine_error',
      upstream: `backends/v3/src/backend.rs:546 send_errors, router/src/infer/mod.rs:410 ${AT}; TGI #3317`,
      incident: PROCESS_DEATH,
      logger: 'tracing',
      match: String.raw`Request failed during generation: (?<error>Server error|Could not connect to Text Generation server): `,
    },
  ],
};
