// liveness: N small chat completions over brand-new connections and N over one reused keep-alive connection;
// each must reach [DONE] within its timeout. "Fresh works, reused stalls" points at a proxy
// (docs/design.md#principles, 2).
import { Client } from '../lib/http/undici.js';
import { streamChat, type StreamResult } from './load-client.js';
import { percentile, secs } from './stats.js';
import type { Target } from './target.js';
import { intKnob, maxTokensKnob, timeoutKnob } from './knob-specs.js';
import { defineStep, type Figure } from './types.js';

export interface LivenessKnobs {
  n: number;
  timeoutMs: number;
  maxTokens: number;
}

export interface ProbeRound {
  conn: 'fresh' | 'reused';
  results: StreamResult[];
  /** Reused round: requests that went over a new connection (the server had closed the kept one). */
  newConnections?: number;
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
  let opened = 0;
  keep.on('connect', () => opened++);
  let newConnections: number;
  try {
    // An uncounted first request opens the connection, so every counted one (even with n=1) reuses it.
    const warm = await streamChat(keep, target, {
      messages: PROMPT,
      maxTokens: k.maxTokens,
      timeoutMs: k.timeoutMs,
    });
    if (!warm.ok) reused.push({ ...warm, error: `warm-up request failed: ${warm.error}` });
    const warmOpened = opened;
    for (let i = 0; i < k.n; i++) {
      reused.push(
        await streamChat(keep, target, { messages: PROMPT, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs }),
      );
    }
    // Either the client found the kept socket gone and opened another, or the request met it closing and was
    // sent again (reconnected): both went over a new connection.
    newConnections = opened - warmOpened + reused.filter((r) => r.reconnected).length;
  } finally {
    await keep.destroy().catch(() => {});
  }
  progress(roundLine('reused', reused, newConnections));
  return [
    { conn: 'fresh', results: fresh },
    { conn: 'reused', results: reused, newConnections },
  ];
}

/**
 * `newConnections`: of a reused round, the requests that went over a new connection. What was seen is said: a
 * server that closes after each response leaves no reused connection to test.
 */
export function roundLine(conn: string, results: StreamResult[], newConnections = 0): string {
  const ok = results.filter((r) => r.ok);
  const lat = ok.map((r) => r.totalMs);
  const first = results.find((r) => !r.ok);
  const again = Math.max(newConnections, results.filter((r) => r.reconnected).length);
  return (
    `${conn}: ${ok.length}/${results.length} completed` +
    (lat.length ? `, p50 ${secs(percentile(lat, 50))} max ${secs(Math.max(...lat))}` : '') +
    (first ? `; first failure: ${first.error}` : '') +
    (again === 0
      ? ''
      : conn !== 'reused'
        ? `; ${again} sent again on a new connection after the server closed one unanswered`
        : again >= results.length
          ? '; the server closed the connection after every response: none went over a reused connection'
          : `; ${again} went over a new connection, the server having closed the kept one`)
  );
}

export const livenessStep = defineStep<LivenessKnobs>({
  name: 'liveness',
  flagPrefix: 'liveness',
  summary: 'N completions over fresh and over reused connections, each within its timeout',
  knobs: {
    // 4 per connection kind: the fewest completions whose latency has a 95 % interval against a baseline's 4.
    n: intKnob('n', 4, 'completions per connection kind'),
    timeoutMs: timeoutKnob(30_000, 'limit per completion'),
    maxTokens: maxTokensKnob(16, 'per completion'),
  },
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
      details: rounds.map((r) => roundLine(r.conn, r.results, r.newConnections)),
      figures,
      data: rounds.map((r) => ({ conn: r.conn, results: r.results })),
    };
  },
});
