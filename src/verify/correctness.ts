// correctness: known-answer questions (the canary probe's sums and nonce echoes) asked one at a time and then C
// at once, and the tool-call matrix, cell by cell. A deployment can be up, fast and wrong: a KV transfer that
// delivers another request's blocks answers 200 with garbage, and it shows under concurrency — a wrong answer
// that is another concurrent request's answer is named a cross-request mix-up. Any wrong answer fails the gate
// and is quoted. Everything is run by the daemon's own probe code (src/sources/probes/canary.ts, answer.ts, toolcall.ts
// through runner.ts), so verify and the watchdog judge answers the same way.
import { DEFAULT_TOOL_CELLS, endpointSchema, probeSchema, type ProbeConfig } from '../config/schema.js';
import { checkAnswer, type Question } from '../sources/probes/answer.js';
import { EndpointDispatchers, tlsOptions } from '../sources/probes/http.js';
import { runProbe } from '../sources/probes/runner.js';
import type { AnswerCheck, ProbeResultSignal } from '../core/signals.js';
import type { Target } from './target.js';
import { intKnob, maxTokensKnob, timeoutKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface CorrectnessKnobs {
  /** Questions asked one at a time (C=1). */
  n: number;
  /** Questions asked at once (one batch). */
  concurrency: number;
  maxTokens: number;
  /** Limit per question and per matrix cell. */
  timeoutMs: number;
}

const MIXUP_NOTE = ' (the answer of another request running at the same time: cross-request mix-up)';

/** The most quoted wrong answers and failed cells in the details (the counts cover the rest). */
const MAX_QUOTES = 8;

export interface LevelCount {
  level: string;
  asked: number;
  right: number;
  wrong: number;
  mixups: number;
  /** Runs that ended without an answer to judge (timeout, HTTP error, no answer within max_tokens). */
  errors: number;
}

function probeConfig(raw: Record<string, unknown>): ProbeConfig {
  return probeSchema.parse({ every: '1m', jitter: 0, ...raw });
}

/** The canary's question kinds come back in AnswerCheck as text: the expected answer says which. */
function asQuestion(a: AnswerCheck): Question {
  return { kind: /^\d+$/.test(a.expected) ? 'arithmetic' : 'echo', prompt: a.question, expected: a.expected };
}

/**
 * Judges one batch: a wrong answer that is the expected answer of another question of the same batch is a
 * cross-request mix-up (the canary alone knows only its own pair).
 */
export function judgeBatch(
  level: string,
  runs: ProbeResultSignal[],
): { count: LevelCount; quotes: string[] } {
  const answers = runs.flatMap((r) => r.detail?.answers ?? []);
  const expected = answers.map((a) => a.expected);
  const count: LevelCount = { level, asked: runs.length, right: 0, wrong: 0, mixups: 0, errors: 0 };
  const quotes: string[] = [];
  for (const r of runs) {
    const as = r.detail?.answers ?? [];
    if (r.result !== 'ok' && r.result !== 'wrong_output') {
      count.errors++;
      quotes.push(`${level}: ${r.result}${r.error ? `: ${r.error}` : ''}`);
      continue;
    }
    for (const a of as) {
      if (a.ok) {
        count.right++;
        continue;
      }
      count.wrong++;
      const others = expected.filter((e) => e !== a.expected);
      const check = checkAnswer(asQuestion(a), a.actual, others);
      const mixup = !check.ok && check.mixup !== undefined;
      if (mixup) count.mixups++;
      quotes.push(
        `${level}: wrong answer to ${JSON.stringify(a.question)}: expected ${JSON.stringify(a.expected)}, got ${JSON.stringify(a.actual)}` +
          (mixup ? MIXUP_NOTE : ''),
      );
    }
  }
  return { count, quotes };
}

/**
 * What it means when no answer was right, alone or at once: a model that cannot answer these questions (random or
 * very small weights) — or a server that garbles every answer (a corrupt KV cache, a wrong chat template). A fault
 * under load shows otherwise: right alone and wrong at once, or answers swapped between requests (mix-ups).
 * Undefined when that is not what was seen.
 */
export function modelLimitNote(levels: readonly LevelCount[]): string | undefined {
  const asked = levels.reduce((n, c) => n + c.asked, 0);
  if (asked === 0 || !levels.every((c) => c.right === 0 && c.errors === 0 && c.mixups === 0))
    return undefined;
  return `none right alone or at once: a model that cannot answer these (random or very small weights) fails here whatever the server does, as does a server that garbles every answer`;
}

function countLine(c: LevelCount): string {
  const mix = c.mixups > 0 ? ` (${c.mixups} cross-request mix-up${c.mixups > 1 ? 's' : ''})` : '';
  return `${c.level}: ${c.right}/${c.asked} right, wrong=${c.wrong}${mix}, errors=${c.errors}`;
}

export const correctnessStep = defineStep<CorrectnessKnobs>({
  name: 'correctness',
  flagPrefix: 'correctness',
  summary:
    'known-answer questions at C=1 and C=concurrency, and the tool-call matrix; any wrong answer fails and is quoted',
  knobs: {
    n: intKnob('n', 4, 'questions asked one at a time'),
    concurrency: intKnob('concurrency', 32, 'questions asked at once'),
    maxTokens: maxTokensKnob(8, 'per question'),
    timeoutMs: timeoutKnob(60_000, 'limit per question and per matrix cell'),
  },
  async run(ctx, k) {
    const hop = dispatchers(ctx.target);
    const timeout = `${k.timeoutMs}ms`;
    // One config for every question: the canary alternates sums and echoes by its run count.
    const canary = probeConfig({
      name: 'correctness',
      kind: 'canary',
      timeout,
      maxTokens: k.maxTokens,
      pairEvery: 0,
    });
    const ask = (probe: ProbeConfig): Promise<ProbeResultSignal> =>
      runProbe({
        target: 'verify',
        model: ctx.target.model,
        probe,
        hop,
        conn: 'fresh',
        headers: ctx.target.headers,
      }).then((o) => o.signal);
    try {
      const one: ProbeResultSignal[] = [];
      for (let i = 0; i < k.n; i++) one.push(await ask(canary));
      const c1 = judgeBatch('C=1', one);
      ctx.progress(countLine(c1.count));

      const level = `C=${k.concurrency}`;
      const many = await Promise.all(Array.from({ length: k.concurrency }, () => ask(canary)));
      const cN = judgeBatch(level, many);
      ctx.progress(countLine(cN.count));

      // Each cell on its own: a hung cell times out alone instead of eating the others' time.
      const cells: { cell: string; result: string; error?: string }[] = [];
      for (const cell of DEFAULT_TOOL_CELLS) {
        const r = await ask(
          probeConfig({ name: 'correctness-tools', kind: 'toolcall', timeout, cells: [cell] }),
        );
        const c = r.detail?.cells?.[0];
        cells.push(c ?? { cell, result: r.result, ...(r.error !== undefined ? { error: r.error } : {}) });
      }
      const failedCells = cells.filter((c) => c.result !== 'ok');
      const cellLine = `tool matrix: ${cells.length - failedCells.length}/${cells.length} cells pass`;
      ctx.progress(
        `${cellLine}${failedCells.length ? ` (failed: ${failedCells.map((c) => c.cell).join(', ')})` : ''}`,
      );

      const counts = [c1.count, cN.count];
      const wrong = counts.reduce((n, c) => n + c.wrong, 0);
      const errors = counts.reduce((n, c) => n + c.errors, 0);
      const mixups = counts.reduce((n, c) => n + c.mixups, 0);
      const quotes = [
        ...c1.quotes,
        ...cN.quotes,
        ...failedCells.map((c) => `tool matrix ${c.cell}: ${c.result}${c.error ? ` (${c.error})` : ''}`),
      ];
      // A mix-up names its cause: it is the one worth quoting first (as the canary does).
      const first = quotes.find((q) => q.endsWith(MIXUP_NOTE)) ?? quotes[0];
      const limit = modelLimitNote(counts);
      const summary =
        `wrong=${wrong} of ${counts.reduce((n, c) => n + c.asked, 0)} questions` +
        (mixups > 0 ? ` (${mixups} cross-request mix-up${mixups > 1 ? 's' : ''})` : '') +
        `, errors=${errors}` +
        (limit !== undefined ? ` (${limit})` : '') +
        `; ${cellLine}` +
        (first !== undefined ? `; ${first}` : '');
      return {
        ok: wrong === 0 && errors === 0 && failedCells.length === 0,
        summary,
        details: [
          ...counts.map(countLine),
          cellLine,
          ...quotes.slice(0, MAX_QUOTES),
          ...(quotes.length > MAX_QUOTES ? [`… ${quotes.length - MAX_QUOTES} more`] : []),
        ],
        figures: {},
        data: { levels: counts, cells },
      };
    } finally {
      await hop.close();
    }
  },
});

/** The target as a probe hop: same origin, path prefix and headers as the load client uses. */
function dispatchers(target: Target): EndpointDispatchers {
  const base = target.chatPath.replace(/\/v1\/chat\/completions$/, '');
  const endpoint = endpointSchema.parse({ name: 'target', url: `${target.origin}${base}` });
  return new EndpointDispatchers(endpoint, tlsOptions(endpoint));
}
