// Go's runtime, for the Go parts of a deployment (Ollama's server, Envoy AI Gateway's external processor): an
// unrecovered panic or a fatal runtime error prints its message and every goroutine's stack on stderr and exits 2,
// whatever the program's logger (slog, zap) is. golang/go src/runtime/panic.go printpanics (`panic: ` + the value,
// ` [recovered]`) and fatalthrow/throw (`fatal error: ` + the message), go 1.0 → 1.25. The message is the root cause.
import { COMPOSE_PREFIX, PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

export const goPack: RulePack = {
  name: 'go',
  engineLines: [],
  rules: [
    {
      name: 'go_panic',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'golang/go src/runtime/panic.go printpanics (go 1.0 → 1.25)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}(?=(?<exception>panic))panic: (?<message>[^\n]{0,500}?)(?: \[recovered\])?\s*$`,
    },
    // fatal runtime errors are not recoverable: `fatal error: concurrent map writes`, `fatal error: runtime: out of
    // memory`, `fatal error: all goroutines are asleep - deadlock!`; then the goroutine dump.
    {
      name: 'go_fatal_error',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'golang/go src/runtime/panic.go throw, fatal (go 1.0 → 1.25)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}(?=(?<exception>fatal error))fatal error: (?<message>[^\n]{1,500}?)\s*$`,
    },
  ],
};
