// How much of one streamed answer verify reads and keeps, derived from the max_tokens it asked for: the engine
// decides how much it sends, so every size here is a bound on the engine, not a guess about it. Past a bound
// the request stops and fails (an answer longer than what was asked is not an answer); docs/decisions.md
// (issue 37, verify) has the figures behind each number.

export interface AnswerBounds {
  /** Token chunks read before the answer is cut: max_tokens plus slack. */
  maxChunks: number;
  /** Bytes read from the body (events, comments, pings) before the answer is cut. */
  maxBytes: number;
  /** Characters of content (text, reasoning, tool-call names and arguments) kept from one answer. */
  maxKeptChars: number;
}

/**
 * Chunks beyond max_tokens: a tool-call parser may send a name and an arguments delta for one token, and the
 * role chunk of some engines carries text; a quarter more, at least 32, covers those without letting an endless
 * stream run on.
 */
export const CHUNK_SLACK_FRACTION = 0.25;
export const MIN_CHUNK_SLACK = 32;
/** A chunk's JSON envelope is 150–400 bytes on SGLang, vLLM and llama.cpp; 4 KiB leaves room for usage fields. */
export const BYTES_PER_CHUNK = 4 * 1024;
/** For the few non-token events (role, finish, usage, timings) and one event up to the SSE scanner's limit. */
export const FIXED_BYTES = 1024 * 1024;
/** Characters one token can decode to, generously (whitespace runs in code, long words); plus a fixed margin. */
export const CHARS_PER_TOKEN = 64;
export const FIXED_CHARS = 4 * 1024;
/** Tool calls one answer may open (verify asks for one; the parallel cell of the matrix for two). */
export const MAX_TOOL_CALLS = 16;

export function answerBounds(maxTokens: number): AnswerBounds {
  const maxChunks = maxTokens + Math.max(MIN_CHUNK_SLACK, Math.ceil(maxTokens * CHUNK_SLACK_FRACTION));
  return {
    maxChunks,
    maxBytes: FIXED_BYTES + maxChunks * BYTES_PER_CHUNK,
    maxKeptChars: FIXED_CHARS + maxTokens * CHARS_PER_TOKEN,
  };
}

/**
 * The token count of an answer: the chunks counted, or the server's usage.completion_tokens where it is at least
 * that (speculative decoding sends several tokens a chunk) and within max_tokens. Above max_tokens it is a wrong
 * answer: `error` says so and the count stays the chunks.
 */
export function tokenCount(
  chunks: number,
  usage: number | undefined,
  maxTokens: number,
): { tokens: number; error?: string } {
  if (usage === undefined) return { tokens: chunks };
  if (usage > maxTokens)
    return {
      tokens: chunks,
      error: `usage.completion_tokens ${usage} is more than max_tokens ${maxTokens} (${chunks} token chunks read): a wrong answer, not a throughput`,
    };
  return { tokens: usage >= chunks ? usage : chunks };
}

/** A usage count as the server sent it: a non-negative integer, else not a count. */
export function usageCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}
