// The simulated model's knowledge: it answers the canary's two question shapes correctly (a sum, an echo),
// writes JSON that fits a response_format schema, and answers a tool result in text. Anything else gets the
// filler sentence. Faults (kv_corruption) then make these answers wrong the way broken KV does.

/** The answer to the last user message, when it is a question the simulated model knows. */
export function knownAnswer(prompt: string): string | undefined {
  const sum = /What is (\d{1,12}) \+ (\d{1,12})\?/.exec(prompt);
  if (sum) return String(Number(sum[1]) + Number(sum[2]));
  const echo = /Repeat exactly: (\S{1,64})/.exec(prompt);
  if (echo) return echo[1];
  return undefined;
}

/** A plausible wrong answer: one character off (a digit, a nonce letter), as corrupted KV produces. */
export function nearMiss(answer: string, rng: () => number = Math.random): string {
  const positions = [...answer].map((c, i) => (/[0-9A-Z]/.test(c) ? i : -1)).filter((i) => i >= 0);
  if (positions.length === 0) return `${answer}?`;
  const i = positions[Math.floor(rng() * positions.length)]!;
  const c = answer[i]!;
  const pool = /[0-9]/.test(c) ? '0123456789' : 'ABCDEFGHJKLMNPQRSTUVWXYZ';
  let r = c;
  while (r === c) r = pool[Math.floor(rng() * pool.length)]!;
  return answer.slice(0, i) + r + answer.slice(i + 1);
}

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  items?: Schema;
  minimum?: number;
}

/** A value that satisfies a JSON schema (the subset the probes use), for json_schema response formats. */
export function exampleValue(schema: unknown, depth = 0): unknown {
  const s = (schema ?? {}) as Schema;
  if (s.enum?.length) return s.enum[0];
  switch (s.type) {
    case 'integer':
    case 'number':
      return Math.max(1, s.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return depth > 4 || !s.items ? [] : [exampleValue(s.items, depth + 1)];
    case 'string':
      return 'Paris';
    case 'object':
    default: {
      if (depth > 4) return {};
      const props = s.properties ?? {};
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(props)) out[k] = exampleValue(props[k], depth + 1);
      return out;
    }
  }
}

/** Splits an answer into token-sized pieces (about four characters each, as a BPE tokenizer would). */
export function answerPieces(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += 4) out.push(chars.slice(i, i + 4).join(''));
  return out.length > 0 ? out : [''];
}
