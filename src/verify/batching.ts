// batching: are concurrent requests batched by the engine or served one after another? One request alone gives
// the reference time; then N at once while sampling the engine's running count. Batched means the engine ran
// (nearly) all of them together: peak running ≥ 0.75·N in the engine's own batch (SGLang, vLLM: their running
// gauge, SGLang's Decode batch lines). Only where the engine shows no batch (llama.cpp's busy slots without its
// counters) must the wall time also stay within ~2× one request.
// llama.cpp counts its decode steps (decode-steps.ts): there batched means the steps of the N requests generated
// ≥ 0.75·N tokens each, read from the engine itself. That is the verdict when the counters are there: the wall
// time of N batched requests on a CPU (or a shared machine) can be N× one request's with every step batched,
// which says how fast the hardware is, not whether the engine batches.
import { reconnectedNote } from './load-client.js';
import { runLoad } from './load-run.js';
import { readDecodeCounters, tokensPerStep } from './decode-steps.js';
import { RunningSampler, type RunningPeak } from './running-sampler.js';
import { fitToSlots, readServerInfo } from './server-info.js';
import { secs } from './stats.js';
import { durationKnob, intKnob, maxTokensKnob, ratioKnob, timeoutKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface BatchingKnobs {
  /** Concurrent requests; 0 = DEFAULT_N, or the server's slot count when it reports fewer. */
  n: number;
  maxTokens: number;
  timeoutMs: number;
  sampleIntervalMs: number;
  /** Batched needs wall ≤ wallFactor × one request. */
  wallFactor: number;
  /** Batched needs peak running ≥ peakFraction × N. */
  peakFraction: number;
}

export interface BatchingVerdict {
  verdict: 'batched' | 'serialized' | 'not sampled';
  reasons: string[];
}

/** What the engine itself says about its batching, each undefined when it was not read. */
export interface BatchEvidence {
  /** Tokens generated per decode step over the run (llama.cpp's counters). */
  perStep?: number;
  /** Peak of the engine's running batch (SGLang's/vLLM's gauge, SGLang's Decode batch lines). */
  batchPeak?: number;
}

/**
 * Pure verdict; `peak` undefined means no running count was sampled. The engine's own evidence decides alone
 * when there is some: tokens per decode step (llama.cpp), else the peak of its running batch (SGLang, vLLM: every
 * request in it advances each step). Wall time only judges without it (llama.cpp's busy slots, no counters): a
 * loaded host stretches the wall time of a batched run, so it is not asked of an engine that shows its batch.
 * Wall time alone cannot tell a batched engine from a partly serialized one (a few slots in parallel still
 * finishes within 2x), so that is a failure.
 */
export function batchingVerdict(
  n: number,
  peak: number | undefined,
  wallMs: number,
  singleMs: number,
  k: Pick<BatchingKnobs, 'wallFactor' | 'peakFraction'>,
  evidence: BatchEvidence = {},
): BatchingVerdict {
  const reasons: string[] = [];
  const { perStep, batchPeak } = evidence;
  if (perStep !== undefined) {
    const needStep = k.peakFraction * n;
    const figure = `${perStep.toFixed(2)} tokens per decode step`;
    return perStep >= needStep
      ? { verdict: 'batched', reasons: [`${figure} >= ${needStep.toFixed(2)} (${k.peakFraction}·N)`] }
      : { verdict: 'serialized', reasons: [`${figure} < ${needStep.toFixed(2)} (${k.peakFraction}·N)`] };
  }
  const need = Math.ceil(k.peakFraction * n);
  if (batchPeak !== undefined) {
    const figure = `peak running in the engine's batch ${batchPeak}`;
    return batchPeak >= need
      ? { verdict: 'batched', reasons: [`${figure} >= ${need} (${k.peakFraction}·N)`] }
      : { verdict: 'serialized', reasons: [`${figure} < ${need} (${k.peakFraction}·N)`] };
  }
  if (peak !== undefined && peak < need) reasons.push(`peak running ${peak} < ${need} (${k.peakFraction}·N)`);
  if (wallMs > k.wallFactor * singleMs) {
    reasons.push(
      `wall ${secs(wallMs)} > ${k.wallFactor}× one request (${secs(singleMs)}), judged on wall time: no engine batch count`,
    );
  }
  if (reasons.length) return { verdict: 'serialized', reasons };
  if (peak === undefined) return { verdict: 'not sampled', reasons: ['no running count was sampled'] };
  return { verdict: 'batched', reasons };
}

/** How the verdict was reached, for the step's summary. */
export function judgedOn(evidence: BatchEvidence): string {
  if (evidence.perStep !== undefined) return 'judged on tokens per decode step (llamacpp:n_decode_total)';
  if (evidence.batchPeak !== undefined) return "judged on the engine's running batch, not wall time";
  return 'judged on wall time and busy slots: no engine batch count';
}

/** Concurrent requests when neither the flag nor the server's slot count says otherwise. */
export const DEFAULT_N = 16;

export const batchingStep = defineStep<BatchingKnobs>({
  name: 'batching',
  flagPrefix: 'batching',
  summary: 'N concurrent requests while sampling the engine running count: batched or serialized',
  knobs: {
    n: intKnob('n', 0, `concurrent requests (default ${DEFAULT_N}, or the server's slot count when fewer)`),
    maxTokens: maxTokensKnob(128, 'per request'),
    timeoutMs: timeoutKnob(300_000),
    sampleIntervalMs: durationKnob('sample-interval', 100, 'how often the running count is sampled'),
    wallFactor: ratioKnob('wall-factor', 2, 'batched needs wall <= this x one request'),
    peakFraction: ratioKnob('peak-fraction', 0.75, 'batched needs peak running >= this x N'),
  },
  async run(ctx, knobs) {
    const info = await readServerInfo(ctx.target);
    const size = fitToSlots({ value: knobs.n, name: '--batching.n' }, DEFAULT_N, info.slots);
    const k = { ...knobs, n: size.n };
    const slotsUrl = info.slotsPath ? `${ctx.target.origin}${info.slotsPath}` : undefined;
    if (!ctx.metricsUrl && ctx.logs.length === 0 && !slotsUrl) {
      return {
        ok: false,
        summary: 'no running-count source (give --metrics-url or --log)',
        details: [
          'batched vs serialized needs the engine running count; wall time alone cannot tell them apart',
        ],
        figures: {},
        data: { verdict: 'not sampled' },
      };
    }
    const single = await runLoad(ctx.target, {
      concurrency: 1,
      n: 1,
      maxTokens: k.maxTokens,
      timeoutMs: k.timeoutMs,
    });
    const one = single.results[0]!;
    if (!one.ok) {
      return {
        ok: false,
        summary: `the single reference request failed: ${one.error}`,
        details: [],
        figures: {},
      };
    }
    ctx.progress(`one request alone: ${secs(one.totalMs)} (${one.tokens} tokens); N=${k.n} (${size.source})`);
    const sampler = new RunningSampler(
      { metricsUrl: ctx.metricsUrl, slotsUrl, headers: ctx.target.headers, logs: ctx.logs },
      k.sampleIntervalMs,
    );
    // llama.cpp's decode-step counters, read around the run (none on other engines: the reading is undefined).
    const countersBefore = ctx.metricsUrl ? await readDecodeCounters(ctx.metricsUrl) : undefined;
    sampler.start();
    let peak: RunningPeak;
    let run;
    try {
      run = await runLoad(ctx.target, {
        concurrency: k.n,
        n: k.n,
        maxTokens: k.maxTokens,
        timeoutMs: k.timeoutMs,
      });
    } finally {
      peak = await sampler.stop();
    }
    const steps =
      ctx.metricsUrl && countersBefore
        ? tokensPerStep(countersBefore, await readDecodeCounters(ctx.metricsUrl))
        : undefined;
    const errors = run.results.filter((r) => !r.ok);
    const evidence: BatchEvidence = { perStep: steps?.perStep, batchPeak: peak.batchPeak };
    const v = batchingVerdict(k.n, peak.peak, run.wallMs, one.totalMs, k, evidence);
    const judged = judgedOn(evidence);
    const sources = [
      ctx.metricsUrl
        ? `metrics ${peak.metricsSamples} samples peak ${peak.metricsPeak ?? 'n/a'}${peak.metricsError ? ` (${peak.metricsError})` : ''}`
        : undefined,
      slotsUrl
        ? `slots ${peak.slotsSamples} samples peak ${peak.slotsPeak ?? 'n/a'}${peak.slotsError ? ` (${peak.slotsError})` : ''}`
        : undefined,
      ctx.logs.length ? `Decode batch lines ${peak.logSamples} peak ${peak.logPeak ?? 'n/a'}` : undefined,
    ].filter(Boolean);
    const notSampled = [
      ctx.metricsUrl && peak.metricsSamples === 0
        ? `${ctx.metricsUrl}: ${peak.metricsError ?? 'no sample taken'}`
        : undefined,
      slotsUrl && peak.slotsSamples === 0
        ? `${slotsUrl}: ${peak.slotsError ?? 'no sample taken'}`
        : undefined,
      ctx.logs.length && peak.logSamples === 0
        ? `no Decode batch line in ${ctx.logs.join(', ')} during the run`
        : undefined,
    ].filter((s): s is string => s !== undefined);
    const figuresLine =
      `N=${k.n} max_tokens=${k.maxTokens} | peak running=${peak.peak ?? 'not sampled'} | wall=${secs(run.wallMs)} | ` +
      `one request=${secs(one.totalMs)} | ratio=${(run.wallMs / one.totalMs).toFixed(2)}x | errs=${errors.length}` +
      (steps
        ? ` | ${steps.perStep.toFixed(2)} tokens/decode step (${steps.predicted} tokens in ${steps.decodes} steps)`
        : '');
    ctx.progress(`${v.verdict}: ${figuresLine}`);
    return {
      ok: v.verdict === 'batched' && errors.length === 0,
      summary:
        v.verdict === 'not sampled'
          ? `not sampled: no running count (${notSampled.join('; ')})`
          : steps
            ? `${v.verdict}: ${steps.perStep.toFixed(2)} tokens per decode step with N=${k.n} (llamacpp:n_decode_total), peak running ${peak.peak ?? 'not sampled'}/${k.n}, wall ${secs(run.wallMs)} vs one request ${secs(one.totalMs)}${errors.length ? `; ${errors.length} errors (${errors[0]!.error})` : ''}`
            : `${v.verdict}: peak running ${peak.peak ?? 'not sampled'}/${k.n}, wall ${secs(run.wallMs)} vs one request ${secs(one.totalMs)} (${judged})${errors.length ? `; ${errors.length} errors (${errors[0]!.error})` : ''}`,
      details: [
        figuresLine,
        `running count from: ${sources.join('; ')}`,
        ...(v.verdict === 'not sampled' ? [] : notSampled.map((s) => `no samples from ${s}`)),
        ...v.reasons.map((r) => `${v.verdict} because ${r}`),
        judged,
        ...reconnectedNote([...single.results, ...run.results]),
      ],
      figures: {},
      data: {
        verdict: v.verdict,
        n: k.n,
        nSource: size.source,
        reasons: v.reasons,
        peak,
        steps,
        wallMs: run.wallMs,
        singleMs: one.totalMs,
        errors: errors.length,
      },
    };
  },
});
