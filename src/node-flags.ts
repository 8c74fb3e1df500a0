// The daemon's V8 flags, the one list: the systemd unit, the Dockerfile's ENTRYPOINT and bench:steady pass it on
// node's command line (test/ops/node-flags.test.ts keeps them equal to NODE_FLAGS), and `wedgewatch run` / `demo`
// started any other way (`node dist/cli.js run`, `npm start`) set it on themselves as their first step, through
// v8.setFlagsFromString, so a bare start gets the unit's memory (issue 30). No re-exec: a second node process
// beside the daemon would cost more RSS than the flags save, and would have to relay every signal.
//
// Setting a flag in a running isolate only works for flags V8 reads while it runs; each one here is:
// - --heap-growing-percent: read at every GC, MemoryController<Trait>::GrowingFactor (v8 src/heap/heap-controller.cc).
// - --no-flush-bytecode: read at every GC when it decides whether to flush (Heap::GetBytecodeFlushMode).
// - --liftoff-only: read when a WebAssembly module is compiled (undici's llhttp, on the first request); checked in
//   the test with %IsLiftoffFunction after tier-up would have happened.
// - --max-semi-space-size is not: the new space's maximum is fixed when the heap is set up (Heap::ConfigureHeap).
//   The new space only grows through SemiSpaceNewSpace::Grow, to growth_factor × its capacity (v8
//   src/heap/new-spaces.cc), and starts at 1 MB semi-spaces on 64-bit; a growth factor of 1 keeps it there, which
//   is what --max-semi-space-size=1 does. Set before the bundle's modules load (their start-up garbage grew it to
//   8 MB in a bare `run`); the test compares the new space with the unit's flag.
import { setFlagsFromString } from 'node:v8';

/** The flags between `node` and `dist/cli.js` in the unit, the image and the bench. */
export const NODE_FLAGS = [
  '--max-semi-space-size=1',
  '--heap-growing-percent=30',
  '--liftoff-only',
  '--no-flush-bytecode',
] as const;

export type NodeFlag = (typeof NODE_FLAGS)[number];

/** What each flag is set as in a process already running. */
export const RUNTIME_FORM: Record<NodeFlag, string> = {
  '--max-semi-space-size=1': '--semi-space-growth-factor=1',
  '--heap-growing-percent=30': '--heap-growing-percent=30',
  '--liftoff-only': '--liftoff-only',
  '--no-flush-bytecode': '--no-flush-bytecode',
};

/** `--max-semi-space-size=1` → `max-semi-space-size`; V8 takes `_` and `-` alike, and `--no-x` is a setting of x. */
function flagName(arg: string): string {
  return arg.replace(/^--?/, '').replace(/=.*$/s, '').replace(/_/g, '-').replace(/^no-/, '');
}

export interface AppliedFlags {
  /** The runtime forms set by applyNodeFlags. */
  set: string[];
  /** Shipped flags left alone because node's command line or NODE_OPTIONS already names them (the unit does). */
  given: NodeFlag[];
}

let applied: AppliedFlags = { set: [], given: [] };

/**
 * Sets every shipped flag the process was not started with. Idempotent; a flag the operator chose (any value,
 * on the command line or in NODE_OPTIONS) wins over the shipped one.
 */
export function applyNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
  set: (flags: string) => void = setFlagsFromString,
): AppliedFlags {
  const named = new Set(
    [...execArgv, ...nodeOptions.split(/\s+/).filter((w) => w.startsWith('-'))].map(flagName),
  );
  const out: AppliedFlags = { set: [], given: [] };
  for (const flag of NODE_FLAGS) {
    if (named.has(flagName(flag))) {
      out.given.push(flag);
      continue;
    }
    set(RUNTIME_FORM[flag]);
    out.set.push(RUNTIME_FORM[flag]);
  }
  applied = out;
  return out;
}

/** What the last applyNodeFlags did (the daemon logs it once it has a logger). */
export function appliedNodeFlags(): AppliedFlags {
  return applied;
}
