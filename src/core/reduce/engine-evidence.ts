// The engine signals beyond busy-and-progress (issue 26): the engine's own failure counters, a crawl (tokens per
// running request collapsing against the engine's own baseline), sleep, the router's oldest in-flight request and
// its worker health, and the PD-queue leak floor. The reducer's engine case (engines.ts) calls these; the shapes
// in src/core/verdict/ read what they remember.
import type { EngineSignal, RankSample } from '../signals.js';
import type {
  ClassifierConfig,
  CrawlMemory,
  DetectEvent,
  EngineFailureKind,
  EngineMemory,
  TargetMemory,
} from '../memory.js';
import { stale } from '../memory-read.js';
import { trackObjectives } from './objectives.js';

/** Samples of a healthy rate before the baseline is trusted (one scrape or batch line each). */
export const BASELINE_SAMPLES = 5;
/** A sample joins the baseline only at this fraction of it or more. */
const BASELINE_JOIN = 0.5;
/** Weight of a new sample in the trailing baseline (an exponential average: about the last 20 samples). */
const BASELINE_WEIGHT = 0.05;
/** Failure increases remembered per engine (a kind's count within failureWindow is what is judged). */
const FAILURES_KEEP = 64;
/** Our own timed-out completion runs remembered (each aborted its request at the engines). */
const OWN_CUTS_KEEP = 64;

const FIELDS: Record<EngineFailureKind, keyof EngineSignal> = {
  kv_transfer_failed: 'kvTransferFailedTotal',
  kv_expired: 'kvExpiredTotal',
  aborted: 'abortedTotal',
  preempted: 'preemptedTotal',
};

/** Everything the engine signal says beyond load and progress; called once per good signal. */
export function onEngineEvidence(
  e: EngineMemory,
  signal: EngineSignal,
  now: number,
  cfg: ClassifierConfig,
): void {
  if (signal.sleeping !== undefined) e.sleeping = signal.sleeping;
  if (signal.routerOldestInflightMs !== undefined) e.routerOldestMs = signal.routerOldestInflightMs;
  if (signal.workersUnhealthy !== undefined) e.workersUnhealthy = signal.workersUnhealthy;
  if (signal.circuitOpen !== undefined) e.circuitOpen = signal.circuitOpen;
  trackFailures(e, signal, now, cfg);
  const c = (e.crawl ??= { samples: 0, crawling: false });
  const rate = perRequestRate(c, signal, now, cfg.detect.stallAfter);
  // A baseline learns only while every objective is met (issue 41): a slowdown, a crawl from start-up or a
  // starving queue is never the engine's normal.
  const missed = trackObjectives(e, signal, rate, now, cfg);
  const floor = 1000 / e.objectives!.itlMs;
  trackCrawl(c, e, rate, now, cfg.detect.crawlFraction, (r) => !missed && r >= floor);
}

/** The counters' increases: a first reading is the baseline, a drop is a restart (its new value is the increase). */
function trackFailures(e: EngineMemory, signal: EngineSignal, now: number, cfg: ClassifierConfig): void {
  if (signal.source !== 'metrics') return;
  const f = (e.failures ??= { totals: {}, recent: [] });
  for (const kind of Object.keys(FIELDS) as EngineFailureKind[]) {
    const v = signal[FIELDS[kind]];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    const before = f.totals[kind];
    f.totals[kind] = v;
    if (before === undefined) continue;
    const n = v >= before ? v - before : v;
    if (n > 0) f.recent.push({ at: now, kind, n });
  }
  pruneFailures(f.recent, now, cfg);
}

/** Kept two failureWindows: a named KV failure holds on the rate over that long (candidates/counters.ts). */
function pruneFailures(recent: Array<{ at: number }>, now: number, cfg: ClassifierConfig): void {
  while (
    recent.length > 0 &&
    (recent.length > FAILURES_KEEP || now - recent[0]!.at >= 2 * cfg.detect.failureWindow)
  )
    recent.shift();
}

/** A completion probe of ours timed out: the engines logged (and counted) its abort. */
export function rememberOwnCut(s: TargetMemory, at: number): void {
  const cuts = (s.ownCuts ??= []);
  cuts.push(at);
  if (cuts.length > OWN_CUTS_KEEP) cuts.shift();
}

/**
 * Tokens per second per running request, or undefined when this signal cannot say (nothing running, no rate).
 * A throughput the engine reports (SGLang's gen_throughput gauge and batch lines, vLLM's stats line) is read as
 * is; otherwise the generated-token counter's rate since the last sample (vLLM's counts every iteration; SGLang's
 * only at a request's end, which is why its gauge comes first).
 *
 * Either is a rate over an interval, so it is a per-request rate only when requests ran through the interval:
 * requests running at its start as well as at its end. An interval in which a few short probes came and went,
 * divided by the one still running at its end, understates the rate several-fold; on an engine that is idle but
 * for our probes, such samples made vLLM's baseline 28–30 tokens/s where one stream makes 100, and a 30-fold
 * crawl read 13–14 % of it, never below the 10 % (vllm_crawl at the example cadence: 2 of 4 trials never named).
 * Where the engine exports its inter-token latency (vLLM), that is read first: tokens per second of a request
 * between its tokens, over the interval, with no running count to divide by and no interval to have been busy.
 */
function perRequestRate(
  c: CrawlMemory,
  signal: EngineSignal | RankSampleAt,
  now: number,
  itlStaleAfter: number,
): number | undefined {
  if ('interTokenLatencyCount' in signal && signal.interTokenLatencyCount !== undefined) {
    const sum = signal.interTokenLatencySumSeconds;
    if (sum === undefined) return undefined;
    const prev = c.lastItl;
    c.lastItl = { sum, count: signal.interTokenLatencyCount, at: now };
    // A restarted engine's smaller totals start over; no token since the last sample is the stall clock's.
    if (prev === undefined || signal.interTokenLatencyCount <= prev.count || sum <= prev.sum)
      return undefined;
    return (signal.interTokenLatencyCount - prev.count) / (sum - prev.sum);
  }
  // One measure per clock: an engine that exports its inter-token latency is judged on it alone (its stats line,
  // read from the log beside the scrape, is the interval rate this one replaces).
  // Only while a scrape carried the histogram within stallAfter: one whose histogram is gone (a downgrade, a
  // relabel rule) or whose scrapes fail while its log goes on falls back to the other rates.
  if (c.lastItl !== undefined && now - c.lastItl.at < itlStaleAfter) return undefined;
  c.lastItl = undefined;
  let running = signal.running;
  let rate: number | undefined;
  let busyBefore: boolean;
  if ('genThroughput' in signal && signal.genThroughput !== undefined) {
    rate = signal.genThroughput;
    busyBefore = (c.lastReportedRunning ?? 0) > 0;
    if (running !== undefined) c.lastReportedRunning = running;
  } else if (signal.generatedTokensTotal !== undefined) {
    busyBefore = (c.lastRunning ?? 0) > 0;
    if (
      c.lastTokens !== undefined &&
      c.lastAt !== undefined &&
      now > c.lastAt &&
      signal.generatedTokensTotal >= c.lastTokens
    ) {
      rate = ((signal.generatedTokensTotal - c.lastTokens) * 1000) / (now - c.lastAt);
      // The interval's tokens came from every request that ran in it: the more of the two readings.
      if (running !== undefined && c.lastRunning !== undefined) running = Math.max(running, c.lastRunning);
    }
    c.lastTokens = signal.generatedTokensTotal;
    c.lastAt = now;
    if (signal.running !== undefined) c.lastRunning = signal.running;
  } else return undefined;
  // Busy at both ends: the reading now as well as the one before (`running` may be the more of the two).
  if (!busyBefore || !((signal.running ?? 0) > 0) || running === undefined || rate === undefined)
    return undefined;
  return rate / running;
}

type RankSampleAt = RankSample & { genThroughput?: undefined };

/**
 * One sample into the crawl clock. Below crawlFraction of a trusted baseline starts (or keeps) it; a sample at or
 * above it stops it and may join the baseline (`joins`: the objectives are met). Nothing running does not stop
 * it (issue 41): on an engine idle but for our probes, the crawl is judged across probe runs, and the clock ends
 * only at a sample at the baseline, or when no sample below came for stallAfter (judgeCrawl). Samples below
 * never join the baseline, so a collapse cannot become the new normal.
 */
function trackCrawl(
  c: CrawlMemory,
  e: { running: number; sleeping?: boolean },
  rate: number | undefined,
  now: number,
  fraction: number,
  joins: (rate: number) => boolean,
): void {
  if (e.sleeping === true) {
    c.belowSince = undefined;
    return;
  }
  if (rate === undefined) {
    if (e.running <= 0 && c.belowSince === undefined) c.ratio = undefined;
    return;
  }
  const trusted = c.baseline !== undefined && c.samples >= BASELINE_SAMPLES;
  c.ratio = c.baseline !== undefined && c.baseline > 0 ? rate / c.baseline : undefined;
  if (trusted && c.ratio !== undefined && c.ratio < fraction) {
    c.belowSince ??= now;
    c.lastBelowAt = now;
    return;
  }
  // Hysteresis: a crawl that hovers at the fraction (a sample read just as a request ends) keeps its clock; it
  // ends at twice the fraction.
  if (trusted && c.ratio !== undefined && c.belowSince !== undefined && c.ratio < Math.min(1, 2 * fraction)) {
    c.lastBelowAt = now;
    return;
  }
  c.belowSince = undefined;
  c.lastBelowAt = undefined;
  if (joins(rate)) joinBaseline(c, rate);
}

/** Only samples near the baseline join it: a slowdown, let alone a crawl, must not become the new normal. */
function joinBaseline(c: CrawlMemory, rate: number): void {
  const trusted = c.baseline !== undefined && c.samples >= BASELINE_SAMPLES;
  if (rate <= 0 || (trusted && rate < BASELINE_JOIN * c.baseline!)) return;
  c.baseline = c.baseline === undefined ? rate : c.baseline * (1 - BASELINE_WEIGHT) + rate * BASELINE_WEIGHT;
  c.samples++;
}

/** Per data-parallel rank: the same clock on the rank's own running count and token counter. */
export function onRankEvidence(
  r: { running: number; crawl?: CrawlMemory },
  sample: RankSample,
  now: number,
  cfg: ClassifierConfig,
): void {
  const c = (r.crawl ??= { samples: 0, crawling: false });
  trackCrawl(
    c,
    r,
    perRequestRate(c, sample as RankSampleAt, now, cfg.detect.stallAfter),
    now,
    cfg.detect.crawlFraction,
    () => true,
  );
}

/**
 * Crawling: below the fraction for stallAfter, the last sample below within stallAfter (idle gaps between probe
 * runs are part of the crawl; a clock with no evidence for stallAfter is let go), not asleep, and not stalled
 * outright (no tokens at all is a stall, judged by engines.ts). Emits engine_crawling once per crawl.
 */
export function judgeCrawl(s: TargetMemory, now: number, cfg: ClassifierConfig, events: DetectEvent[]): void {
  const after = cfg.detect.stallAfter;
  for (const e of Object.values(s.engines)) {
    const judge = (c: CrawlMemory | undefined, running: number, rank?: string) => {
      if (c === undefined) return;
      if (c.belowSince !== undefined && now - (c.lastBelowAt ?? c.belowSince) >= after) {
        c.belowSince = undefined;
        c.lastBelowAt = undefined;
      }
      const crawling =
        !stale(e, now, cfg) &&
        e.sleeping !== true &&
        c.belowSince !== undefined &&
        now - c.belowSince >= after;
      if (crawling && !c.crawling) {
        events.push({
          type: 'engine_crawling',
          at: now,
          service: e.service,
          ...(rank !== undefined ? { rank } : {}),
          running,
          ratio: c.ratio ?? 0,
          sinceMs: now - c.belowSince!,
        });
      }
      c.crawling = crawling;
    };
    judge(e.crawl, e.running);
    for (const [id, r] of Object.entries(e.ranks ?? {})) judge(r.crawl, r.running, id);
  }
}
