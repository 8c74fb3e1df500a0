// liveness: N small chat completions over brand-new connections and N over one reused keep-alive connection;
// each must reach [DONE] within its timeout. "Fresh works, reused stalls" points at a proxy
// (docs/design.md#principles, 2).
import { Client } from '../lib/http/undici.js';
import { streamChat, type StreamResult } from './load-client.js';
import { percentile, secs } from './stats.js';
import type { Target } from './target.js';
import { maxTokensKnob, timeoutKnob } from './knob-specs.js';
import { defineStep, type Figure } from './types.js';

export interface LivenessKnobs {
  n: number;
  timeoutMs: number;
  maxTokens: number;
}

// 4 per connection kind: the fewest completions whose latency has a 95 % interval against a baseline's 4.
export const LIVENESS_DEFAULTS: LivenessKnobs = { n: 4, timeoutMs: 30_000, maxTokens: 16 };

export interface ProbeRound {
  conn: 'fresh' | 'reused';
  results: StreamResult[];
}

const PROMPT = [{ role: 'user', content: 'Reply with one short sentence: are you up?' }];

/**
 * Runs n fresh-connection then n reused-connection completions, one at a time. The reused round starts with an
 * uncounted warm-up request; if that fails it is reported as a failure of the round.
 */
export async function runLivenessProbes(
  target: Target,
  k: LivenessKnobs,
  progress: (line: string) => void,
): Promise<ProbeRound[]> {
  const fresh: StreamResult[] = [];
  for (let i = 0; i < k.n; i++) {
    const c = new Client(target.origin, { pipelining: 1 });
    try {
      fresh.push(
        await streamChat(c, target, { messages: PROMPT, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs }),
      );
    } finally {
      await c.destroy().catch(() => {});
    }
  }
  progress(roundLine('fresh', fresh));
  const reused: StreamResult[] = [];
  const keep = new Client(target.origin, { pipelining: 1, keepAliveTimeout: 600_000 });
  try {
    // An uncounted first request opens the connection, so every counted one (even with n=1) reuses it.
    const warm = await streamChat(keep, target, {
      messages: PROMPT,
      maxTokens: k.maxTokens,
      timeoutMs: k.timeoutMs,
    });
    if (!warm.ok) reused.push({ ...warm, error: `warm-up request failed: ${warm.error}` });
    for (let i = 0; i < k.n; i++) {
      reused.push(
        await streamChat(keep, target, { messages: PROMPT, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs }),
      );
    }
  } finally {
    await keep.destroy().catch(() => {});
  }
  progress(roundLine('reused', reused));
  return [
    { conn: 'fresh', results: fresh },
    { conn: 'reused', results: reused },
  ];
}

export function roundLine(conn: string, results: StreamResult[]): string {
  const ok = results.filter((r) => r.ok);
  const lat = ok.map((r) => r.totalMs);
  const first = results.find((r) => !r.ok);
  const again = results.filter((r) => r.reconnected).length;
  return (
    `${conn}: ${ok.length}/${results.length} completed` +
    (lat.length ? `, p50 ${secs(percentile(lat, 50))} max ${secs(Math.max(...lat))}` : '') +
    (first ? `; first failure: ${first.error}` : '') +
    // What was seen: a server that closes after each response leaves no reused connection to test.
    (again === 0
      ? ''
      : again === results.length && conn === 'reused'
        ? '; the server closed the connection after every response: none went over a reused connection'
        : `; ${again} found the connection closed by the server and went over a new one`)
  );
}

export const livenessStep = defineStep<LivenessKnobs>({
  name: 'liveness',
  flagPrefix: 'liveness',
  summary: 'N completions over fresh and over reused connections, each within its timeout',
  defaults: LIVENESS_DEFAULTS,
  knobs: [
    { key: 'n', flag: 'n', kind: 'int', help: 'completions per connection kind' },
    timeoutKnob('limit per completion'),
    maxTokensKnob('per completion'),
  ],
  async run(ctx, k) {
    const rounds = await runLivenessProbes(ctx.target, k, ctx.progress);
    const all = rounds.flatMap((r) => r.results);
    const okCount = all.filter((r) => r.ok).length;
    const figures: Record<string, Figure> = {};
    for (const r of rounds) {
      const lat = r.results.filter((x) => x.ok).map((x) => x.totalMs / 1000);
      if (lat.length)
        // Each completion is one trial of this figure, for the comparison's interval.
        figures[`${r.conn}.p50_lat_s`] = {
          value: percentile(lat, 50),
          unit: 's',
          better: 'lower',
          trials: lat,
        };
    }
    return {
      ok: okCount === all.length,
      summary: `${okCount}/${all.length} completed within ${secs(k.timeoutMs)} (${rounds.map((r) => `${r.conn} ${r.results.filter((x) => x.ok).length}/${r.results.length}`).join(', ')})`,
      details: rounds.map((r) => roundLine(r.conn, r.results)),
      figures,
      data: rounds.map((r) => ({ conn: r.conn, results: r.results })),
    };
  },
});
