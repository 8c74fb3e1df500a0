// The toolcall probe's matrix cases, free of zod and of the probe's code: the config schema validates `cases`
// against them, the probe runs them. Here and not beside the probe: the config must not import a source (folders
// import one way, sources → config; test/ops/layout.test.ts).

/** The tool-call matrix: a tool_choice case, streamed, or with `/nonstream` the same request with stream: false. */
export const TOOL_CASES = [
  'auto',
  'required',
  'named',
  'none',
  'parallel',
  'second_turn',
  // One call whose arguments are ≈ 2 KB of JSON, streamed in many fragments: where reassembly bugs live.
  'large_args',
] as const;
