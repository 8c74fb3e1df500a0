// Rust panics, for the Rust parts of a deployment: SGLang's router/gateway (sgl-project/sglang sgl-model-gateway,
// formerly sgl-router) and NVIDIA Dynamo's frontend and runtime. Both print through Rust's default panic hook on
// stderr whatever their tracing setup, so the wording is the standard library's.
import { PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

export const rustPack: RulePack = {
  name: 'rust',
  engineLines: [],
  rules: [
    // rust-lang/rust library/std/src/panicking.rs default_hook: Rust ≥ 1.73 `\nthread '{name}' panicked at
    // {location}:\n{msg}` (the message on the next line; PR #112849); Rust < 1.73 `thread '{name}' panicked at
    // '{msg}', {location}`; newer toolchains add the thread id, `thread '{name}' ({id}) panicked at …`. A panic
    // ends its thread: the process (a `main` panic) or a tokio worker's task and what it served is gone. Critical.
    // The message is the root cause (issue 40): on the header line (old) or the line after it (new, which never
    // starts `note: `, the hook's hint about RUST_BACKTRACE).
    {
      name: 'rust_panic',
      severity: 'critical',
      class: 'thread_death',
      upstream: 'rust-lang/rust library/std/src/panicking.rs default_hook (Rust 1.0 → 1.9x)',
      incident: PROCESS_DEATH,
      // The words `panicked at` stay outside any group: the chunk prefilter needs them (the exception is read ahead).
      match: String.raw`\b(?=(?<exception>thread '[^'\n]{1,200}'(?: \(\d{1,20}\))? panicked))thread '(?<thread>[^'\n]{1,200})'(?: \((?<tid>\d{1,20})\))? panicked at (?:'(?<message>[^\n]{0,500})', (?<location>\S{1,500})|(?<at>[^\s']{1,500}?:\d{1,7}:\d{1,7}):?\s*$)`,
      follows: {
        match: String.raw`^(?!note: |stack backtrace:)(?<message>\S[^\n]{0,500}?)\s*$`,
        within: 1,
        first: true,
      },
      emitUnclosed: true,
    },
  ],
};
