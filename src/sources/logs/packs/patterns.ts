// Patterns more than one pack uses.

// The exception line that ends a traceback (the matcher requires it to carry the header's prefix).
// Linear (issue 24): the name starts a run of name characters (tried once per run, not at every character of it),
// and once `: ` is seen the message runs to the line's end, so no start position scans the rest and then fails.
export const EXCEPTION_LINE = String.raw`(?<![\w.])(?<exception>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))(?:: ?(?<message>.*\S)?)?\s*$`;

/**
 * The incident key of a process's death, in every pack (issue 40): one dying engine prints its chain across packs
 * (a CUDA error from the gpu shapes, ggml's abort, the engine's own `… crashed`, the shell's `Aborted (core dumped)`),
 * and rules that share the key are one incident, one event, its first error the root cause. One log source watches
 * one engine, so the engines' chains never meet in one matcher.
 */
export const PROCESS_DEATH = 'process_death';

/** A docker compose service prefix (`svc-1  | `), which `docker compose logs` writes before every line. */
export const COMPOSE_PREFIX = String.raw`(?:[\w.-]{1,64} {1,16}\| )?`;
