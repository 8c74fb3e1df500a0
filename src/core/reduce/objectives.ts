// An engine's objectives (issue 41 item 3): its inter-token latency against an objective — configured, or learned
// from its first healthy window and never from a window over ITL_CEILING_MS — and its queue: requests queued
// without a break for `starveAfter` while requests finish and tokens move, and none of those that finished (vLLM)
// or were admitted (SGLang) waited: the queue does not admit (waiting for a cache tier, a full KV pool). The
// verdict reads `slow` and `starved` (candidates/objectives.ts); the crawl baseline joins only samples taken
// while every objective is met (engine-evidence.ts).
import type { EngineSignal } from '../signals.js';
import type { ClassifierConfig, EngineMemory, TargetMemory } from '../memory.js';
import {
  ITL_CEILING_MS,
  ITL_SLOWDOWN,
  LEARN_SAMPLES,
  PROBE_ITL_FLOOR_MS,
  PROBE_RATE_WINDOW,
  QUEUE_CEILING_MS,
  QUEUE_FLOOR_MS,
  QUEUE_SLOWDOWN,
  SLOW_MIN_MS,
  type ObjectiveMemory,
  type StoredBaseline,
} from '../objective-memory.js';
import { oursAt, stale } from '../memory-read.js';
import { isRouter } from '../progress-read.js';

/** The engine's objectives, created from the config (or the ceiling and floor, until learned). */
export function objectivesOf(e: EngineMemory, cfg: ClassifierConfig): ObjectiveMemory {
  if (e.objectives !== undefined) return e.objectives;
  const itl = cfg.objectives?.interTokenLatency;
  const queue = cfg.objectives?.queueTime;
  e.objectives = {
    itlMs: itl ?? ITL_CEILING_MS,
    itlFrom: itl !== undefined ? 'config' : 'ceiling',
    queueMs: queue ?? QUEUE_FLOOR_MS,
    queueFrom: queue !== undefined ? 'config' : 'ceiling',
  };
  return e.objectives;
}

/** The queue must hold this long before starvation is judged: a hang's worth, and twice its objective. */
export function starveAfter(o: ObjectiveMemory, cfg: ClassifierConfig): number {
  return Math.max(cfg.detect.hangAfter, 2 * o.queueMs);
}

/**
 * One engine signal into the objectives; `rate` is the per-request token rate the crawl clock reads (tokens/s,
 * undefined when this signal cannot say). Returns whether an objective is violated now: the baseline learns
 * nothing then.
 */
export function trackObjectives(
  e: EngineMemory,
  signal: EngineSignal,
  rate: number | undefined,
  now: number,
  cfg: ClassifierConfig,
): boolean {
  const o = objectivesOf(e, cfg);
  trackQueue(o, e, signal, now, cfg);
  const queueMissed = o.starved === true || (o.lastWaitMs !== undefined && o.lastWaitMs > o.queueMs);
  if (rate !== undefined && rate > 0 && e.sleeping !== true) itlSample(o, 1000 / rate, now, !queueMissed);
  return queueMissed || o.slowSince !== undefined;
}

/**
 * One inter-token latency (ms) into an objective's clock: over the objective starts (or keeps) it; within it stops it
 * and, while no objective is learned yet and `learn` allows, counts toward the first healthy window (never a sample
 * over the ceiling: a crawl from start-up is not learned).
 */
function itlSample(o: ObjectiveMemory, itl: number, now: number, learn: boolean): void {
  o.lastItlMs = itl;
  if (itl > o.itlMs) {
    o.slowSince ??= now;
    o.lastSlowAt = now;
    return;
  }
  o.slowSince = undefined;
  o.slow = false;
  if (o.itlFrom !== 'ceiling' || !learn) return;
  const w = (o.itlLearning ??= []);
  w.push(itl);
  if (w.length >= LEARN_SAMPLES) {
    o.itlMs = Math.min(ITL_CEILING_MS, ITL_SLOWDOWN * mean(w));
    o.itlFrom = 'learned';
    o.itlLearnedAt = now;
    o.itlLearning = undefined;
  }
}

/**
 * Our own streamed completions' token rate after their first token (chat probes: `tokensPerSecond`), against the
 * same kind of objective at the target level: an engine whose mapping gives no token rate (llama.cpp: issue 38's 10×
 * crawl stayed ok) is still judged by what its users see. Only passing runs carry a rate.
 */
export function onProbeRate(
  s: TargetMemory,
  probeKind: string,
  result: string,
  tokensPerSecond: number | undefined,
  runStart: number,
  now: number,
  cfg: ClassifierConfig,
): void {
  if (probeKind !== 'chat' || result !== 'ok' || tokensPerSecond === undefined || !(tokensPerSecond > 0))
    return;
  const itl = cfg.objectives?.interTokenLatency;
  const o = (s.probeObjective ??= {
    itlMs: itl ?? ITL_CEILING_MS,
    itlFrom: itl !== undefined ? 'config' : 'ceiling',
    queueMs: QUEUE_FLOOR_MS,
    queueFrom: 'ceiling',
  });
  // A run beside others' work on the engine (its last gauges) says how the engine serves a load, not how it serves
  // us alone: a learned objective is our probes' alone (below), so such a run neither starts nor stops its clock, nor
  // teaches it. A llama.cpp server that serves its parallel slots by day and only our probes by night read
  // engine_slow every busy period against the night's objective (issue 41 item 9: busy is not wedged). A configured
  // objective and the ceiling judge every run. No gauge (no mapping, a stale scrape): every run counts, as before.
  const busy = othersBeside(s, runStart, now, cfg);
  if (busy !== undefined && busy > 0 && o.itlFrom === 'learned') return;
  // The median of the last few runs: one run that came whole inside a fast step of a crawl neither stops the clock
  // nor is a slow one among fast ones enough to start it.
  const run = 1000 / tokensPerSecond;
  const recent = (o.recentItlMs ??= []);
  recent.push(run);
  if (recent.length > PROBE_RATE_WINDOW) recent.shift();
  itlSample(o, median(recent), now, false);
  if (busy === undefined || busy <= 0) learnProbeObjective(o, run, now);
}

/**
 * Requests the engines were running beside ours at their last gauges (the most over the engines: the running count
 * less our completions in flight then), or undefined where no engine reports one that stands. A router's count is
 * not an engine's load. A reading since the run started (or the one before it, which stood at its start) that showed
 * others' work counts too: the gauges after a run can show none where its other slot's generation ended meanwhile
 * (the real llama-server's saturation: our runs batched beside a long generation read 23 ms a token against an
 * objective learned alone, 20 ms, and `engine_slow` held for minutes on a healthy busy engine).
 */
function othersBeside(
  s: TargetMemory,
  runStart: number,
  now: number,
  cfg: ClassifierConfig,
): number | undefined {
  let most: number | undefined;
  for (const e of Object.values(s.engines)) {
    if (isRouter(e) || stale(e, now, cfg)) continue;
    let others = e.running - oursAt(s, cfg, e.lastSignalAt);
    // The readings since the run started, and the one before it (it stood at the start): our runs are known now
    // (onProbe came first), so each reading's share of ours is.
    const readings = e.recentRunning ?? [];
    const first = readings.findLastIndex(([at]) => at <= runStart);
    for (const [at, running] of readings.slice(Math.max(0, first)))
      others = Math.max(others, running - oursAt(s, cfg, at));
    most = Math.max(most ?? others, others);
  }
  return most;
}

/**
 * Our probes' objective, from their own runs: ITL_SLOWDOWN × the median of the last LEARN_SAMPLES runs' inter-token
 * latencies, within the floor and the ceiling, taken when none is learned yet and again whenever it is lower than the
 * one held — never higher. The first runs of a server that has just started on a loaded host are slow (issue 38's
 * real crawl stayed ok for all 180 s once: 4 busy loops beside it, its first runs streamed 25–59 ms a token against
 * 3–15 ms quiet, and 1.5× the mean of the first five rolling medians, 62 ms, was over the crawl's median of 56): the
 * first quieter window after them lowers the objective, and one slow run among five moves a median, not a mean. Runs
 * while the objective is missed (a crawl, a slowdown) teach nothing, and it is never raised: what a loaded host makes
 * of a healthy engine after a quiet window is judged as a quiet window would judge it, and the 20 ms floor is what
 * keeps that from reading jitter as slowness. Only runs with nothing of others' running beside them teach it
 * (onProbeRate): the objective is what the engine makes of our probes alone.
 */
function learnProbeObjective(o: ObjectiveMemory, itl: number, now: number): void {
  if (o.itlFrom === 'config' || o.slowSince !== undefined || itl > ITL_CEILING_MS) return;
  const w = (o.itlLearning ??= []);
  w.push(itl);
  if (w.length > LEARN_SAMPLES) w.shift();
  if (w.length < LEARN_SAMPLES) return;
  const objective = Math.min(ITL_CEILING_MS, Math.max(PROBE_ITL_FLOOR_MS, ITL_SLOWDOWN * median(w)));
  if (o.itlFrom === 'learned' && objective >= o.itlMs) return;
  o.itlMs = objective;
  o.itlFrom = 'learned';
  o.itlLearnedAt = now;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function trackQueue(
  o: ObjectiveMemory,
  e: EngineMemory,
  signal: EngineSignal,
  now: number,
  cfg: ClassifierConfig,
): void {
  const sum = signal.queueTimeSumSeconds;
  const count = signal.queueTimeCount;
  if (sum !== undefined && count !== undefined) {
    const prev = o.lastQueue;
    o.lastQueue = { sum, count };
    if (prev !== undefined && count > prev.count && sum >= prev.sum) {
      const wait = ((sum - prev.sum) / (count - prev.count)) * 1000;
      o.lastWaitMs = wait;
      if (o.queueFrom === 'ceiling' && wait <= QUEUE_CEILING_MS && o.starved !== true) {
        const w = (o.queueLearning ??= []);
        w.push(wait);
        if (w.length >= LEARN_SAMPLES) {
          o.queueMs = Math.max(QUEUE_FLOOR_MS, QUEUE_SLOWDOWN * mean(w));
          o.queueFrom = 'learned';
          o.queueLearning = undefined;
        }
      }
    } else if (prev !== undefined && count < prev.count) {
      // A restarted engine's histogram starts over: what was held is no longer comparable.
      o.atHold = o.queueHeldSince !== undefined ? {} : undefined;
    }
  }
  if (e.queued <= 0 || e.sleeping === true) {
    o.queueHeldSince = undefined;
    o.atHold = undefined;
    o.starved = false;
    return;
  }
  if (o.queueHeldSince === undefined) {
    o.queueHeldSince = now;
    o.atHold = {};
  }
  // What the counters read when the queue began to hold, from the first sample that has them (a log line that
  // reports the queue carries no counters).
  const h = (o.atHold ??= {});
  if (h.sum === undefined && sum !== undefined && count !== undefined) {
    h.sum = sum;
    h.count = count;
  }
  if (h.finished === undefined) h.finished = e.finishedTotal;
  if (h.tokens === undefined) h.tokens = e.generatedTokensTotal;
  h.running ??= e.running;
  judgeStarved(o, e, sum, count, now, cfg);
}

/**
 * Starved: the queue held `starveAfter`, tokens moved and requests left the engine since, and the ones that left
 * the queue in that time waited, on average, under the objective — the queued ones are not among them. A
 * saturated engine (every slot held by long generations) admits from its queue as requests finish, and what it
 * admits has waited: that is load, not starvation. Only engines that export a queue-time histogram are judged.
 */
function judgeStarved(
  o: ObjectiveMemory,
  e: EngineMemory,
  sum: number | undefined,
  count: number | undefined,
  now: number,
  cfg: ClassifierConfig,
): void {
  const h = o.atHold!;
  const heldMs = now - o.queueHeldSince!;
  if (sum === undefined || count === undefined || h.sum === undefined || h.count === undefined) {
    // Nothing new to judge on (a log line): what the last scrape judged stands.
    return;
  }
  const admitted = Math.max(0, count - h.count);
  const finished =
    e.finishedTotal !== undefined && h.finished !== undefined ? Math.max(0, e.finishedTotal - h.finished) : 0;
  const tokens =
    e.generatedTokensTotal !== undefined && h.tokens !== undefined && e.generatedTokensTotal > h.tokens;
  // The requests running when the queue began to hold were admitted before it, with no wait; vLLM observes their
  // queue time as they finish, first. Judged from after them, so what is counted left the queue while it held (a
  // saturated engine's first batch finishing read as a starved queue: bench:saturation, "waited 17 ms").
  if (h.rebased !== true && Math.max(admitted, finished) >= (h.running ?? 0)) {
    h.rebased = true;
    if ((h.running ?? 0) > 0) {
      h.sum = sum;
      h.count = count;
      h.finished = e.finishedTotal;
      o.starved = false;
      return;
    }
  }
  if (h.rebased !== true) {
    o.starved = false;
    return;
  }
  const waitMs = admitted > 0 ? ((sum - h.sum) / admitted) * 1000 : 0;
  o.starved =
    heldMs >= starveAfter(o, cfg) &&
    tokens &&
    Math.max(admitted, finished) >= 1 &&
    waitMs < Math.min(o.queueMs, heldMs / 2);
  if (o.starved) o.starvedWhat = { heldMs, finished: Math.max(admitted, finished), waitMs };
}

/**
 * Time passing: the inter-token latency clock judged, and let go when its evidence stops (no sample over the
 * objective for stallAfter: the engine went idle and nothing says it is still slow); a stale engine judges nothing.
 */
export function judgeObjectives(s: TargetMemory, now: number, cfg: ClassifierConfig): void {
  const after = cfg.detect.stallAfter;
  const slowAfter = Math.max(after, SLOW_MIN_MS);
  const p = s.probeObjective;
  if (p !== undefined) {
    if (p.slowSince !== undefined && now - (p.lastSlowAt ?? p.slowSince) >= after) p.slowSince = undefined;
    p.slow = p.slowSince !== undefined && now - p.slowSince >= slowAfter;
  }
  for (const e of Object.values(s.engines)) {
    const o = e.objectives;
    if (o === undefined) continue;
    if (o.slowSince !== undefined && now - (o.lastSlowAt ?? o.slowSince) >= after) o.slowSince = undefined;
    const live = !stale(e, now, cfg) && e.sleeping !== true;
    o.slow = live && o.slowSince !== undefined && now - o.slowSince >= slowAfter;
    if (!live) o.starved = false;
  }
}

/** What a restart keeps: the learned objectives and the crawl baseline (configured objectives come from the config). */
export function baselineOf(e: EngineMemory, now: number): StoredBaseline | undefined {
  const o = e.objectives;
  const c = e.crawl;
  const out: StoredBaseline = { at: now };
  if (o?.itlFrom === 'learned') out.itlMs = o.itlMs;
  if (o?.queueFrom === 'learned') out.queueMs = o.queueMs;
  if (c?.baseline !== undefined && c.samples >= LEARN_SAMPLES) {
    out.crawlBaseline = c.baseline;
    out.crawlSamples = c.samples;
  }
  return Object.keys(out).length > 1 ? out : undefined;
}

/**
 * A stored baseline seeds an engine's memory when the engine is first heard from after a start-up (a crawl present
 * when the daemon restarts is then judged against the engine's past, not learned as its normal). Values a config
 * sets win; nonsense is ignored.
 */
export function seedBaseline(e: EngineMemory, b: StoredBaseline, cfg: ClassifierConfig): void {
  const ok = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0;
  const o = objectivesOf(e, cfg);
  if (o.itlFrom !== 'config' && ok(b.itlMs) && b.itlMs <= ITL_CEILING_MS) {
    o.itlMs = b.itlMs;
    o.itlFrom = 'learned';
    o.itlLearnedAt = b.at;
  }
  if (o.queueFrom !== 'config' && ok(b.queueMs) && b.queueMs <= QUEUE_SLOWDOWN * QUEUE_CEILING_MS) {
    o.queueMs = b.queueMs;
    o.queueFrom = 'learned';
  }
  if (ok(b.crawlBaseline) && ok(b.crawlSamples)) {
    const c = (e.crawl ??= { samples: 0, crawling: false });
    c.baseline = b.crawlBaseline;
    c.samples = Math.min(Math.floor(b.crawlSamples), 1_000_000);
  }
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
