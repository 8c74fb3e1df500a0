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
  ],
};
