// Lines that echo a request (and so carry user text) must never raise a built-in event: a prompt that quotes
// `First message should be b'NixlMsgGuard'` is not a dead bootstrap thread. Two independent guards:
// 1. lines carrying an engine's request-echo marker are skipped outright;
// 2. a built-in match must start within a logger prefix: at most MAX_PREFIX characters in, with no quote
//    before it. Engines print user text quoted (Python repr, JSON), so text inside a prompt always has a quote
//    before it; logger prefixes (`[time DP0 TP0] `, `(EngineCore_DP0 pid=1) ERROR … [core.py:1] `,
//    `svc-1  | `, CRI `… stdout F `) have none.

/** Request-echo markers, each quoted from the engine that prints it. */
export const REQUEST_ECHO_MARKERS = [
  // SGLang managers/tokenizer_manager.py _handle_... `--log-requests`: `Receive: obj={obj}` (2024 → 2026-08).
  'Receive: obj=',
  // SGLang managers/tokenizer_manager.py: `Finish: obj={obj}, out={out}` (2024 → 2026-08).
  'Finish: obj=',
  // vLLM entrypoints/logger.py RequestLogger.log_inputs: `Received request %s: prompt: %r, …` (0.4 → 2026-08).
  'Received request ',
  // vLLM entrypoints/logger.py RequestLogger.log_outputs: `Generated response %s: output: %r, …` (0.9 → 2026-08).
  'Generated response ',
];

/** Longest logger prefix a built-in match may have before it (container + vLLM process + logger prefix). */
export const MAX_PREFIX = 256;

export function isRequestEcho(line: string): boolean {
  for (const m of REQUEST_ECHO_MARKERS) if (line.includes(m)) return true;
  return false;
}

/** How far into a line its logger prefix's `] ` is looked for by echoAfterPrefix. */
const ECHO_PREFIX_SCAN = 160;

/**
 * Whether the line s[p, end) has a request-echo marker right after the first `] ` of its logger prefix
 * (`[time DP0 TP0] Receive: obj=…`, `INFO … [logger.py:43] Received request …`): where the engines print it. True
 * implies isRequestEcho, so the scanner may pass such a line by without decoding it when only built-in rules run
 * (none of them matches an echo). Reads only the prefix: a request log line is long (the whole prompt), and
 * searching all of it was most of the scanner's time on logs written with --log-requests.
 */
export function echoAfterPrefix(s: string, p: number, end: number): boolean {
  const stop = Math.min(end - 1, p + ECHO_PREFIX_SCAN);
  let i = p;
  while (i < stop && s.charCodeAt(i) !== 93 /* ] */) i++;
  if (i >= stop || s.charCodeAt(i + 1) !== 32) return false;
  for (const m of REQUEST_ECHO_MARKERS) {
    if (i + 2 + m.length <= end && s.startsWith(m, i + 2)) return true;
  }
  return false;
}

// Docker's json-file driver wraps every line as {"log":"…"}: its own quote is not user text.
const DOCKER_JSON = '{"log":"';

/** Whether a match starting at `index` sits right after a logger prefix (see 2. above). */
export function prefixAllows(line: string, index: number): boolean {
  if (index > MAX_PREFIX) return false;
  const from = line.startsWith(DOCKER_JSON) ? DOCKER_JSON.length : 0;
  for (let i = from; i < index; i++) {
    const c = line.charCodeAt(i);
    if (c === 39 /* ' */ || c === 34 /* " */ || c === 96 /* ` */) return false;
  }
  return true;
}

/** A prefix with its digits dropped: the lines of one record share it (times and pids aside). */
export function prefixShape(prefix: string): string {
  return prefix.replace(/\d+/g, '');
}
