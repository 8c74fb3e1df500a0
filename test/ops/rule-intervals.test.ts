// Alert idioms that survive load (issue 26): every window, staleness bound and `for:` of the shipped rules checked
// against the scrape and evaluation intervals they are documented to run at. The old WedgewatchSchedulerStalled
// compared `time()` with a heartbeat gauge against 3 × a 1 s probe interval: below one 5 s scrape, so it paged on a
// healthy daemon whenever the scrape and evaluation phases lined up (issue 26, "A page after recovery").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadRules, ROOT, RULE_TESTS, type RuleDef } from './tools.js';

const seconds = (d: string): number => {
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
  let m: RegExpExecArray | null;
  let used = '';
  while ((m = re.exec(d)) !== null) {
    total += Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as 'ms'];
    used += m[0];
  }
  if (used !== d || d === '') throw new Error(`cannot read duration ${JSON.stringify(d)}`);
  return total;
};

interface Intervals {
  where: string;
  /** Absent where nothing is scraped (promtool's series are test data at whatever spacing a case needs). */
  scrape?: number;
  evaluation: number;
}

/** Prometheus's defaults when a config leaves them out. */
const PROMETHEUS_DEFAULT = { scrape: 60, evaluation: 60 };

/** The intervals the rules are documented and tested to run at, read from the files that set them. */
function configuredIntervals(): Intervals[] {
  const out: Intervals[] = [];
  // docs/deploy.md's prometheus.yml: scrape_interval 15s, no evaluation_interval (Prometheus default, 1m).
  const deploy = readFileSync(`${ROOT}docs/deploy.md`, 'utf8');
  const block = /```yaml\n# prometheus.yml\n([\s\S]*?)```/.exec(deploy);
  if (!block) throw new Error('docs/deploy.md has no prometheus.yml block');
  const prom = parseYaml(block[1]!) as {
    global?: { scrape_interval?: string; evaluation_interval?: string };
    scrape_configs: { job_name: string; scrape_interval?: string }[];
  };
  const job = prom.scrape_configs.find((j) => j.job_name === 'wedgewatch')!;
  out.push({
    where: 'docs/deploy.md prometheus.yml',
    scrape: seconds(job.scrape_interval ?? prom.global?.scrape_interval ?? '1m'),
    evaluation: seconds(prom.global?.evaluation_interval ?? '1m'),
  });
  // The ServiceMonitor's interval; the operator's rule evaluation interval defaults to 30s, 1m bounds it.
  const sm = parseYaml(readFileSync(`${ROOT}deploy/kubernetes/servicemonitor.yaml`, 'utf8')) as {
    spec: { endpoints: { interval?: string }[] };
  };
  for (const e of sm.spec.endpoints) {
    out.push({
      where: 'deploy/kubernetes/servicemonitor.yaml',
      scrape: seconds(e.interval ?? '1m'),
      evaluation: PROMETHEUS_DEFAULT.evaluation,
    });
  }
  // The promtool tests' evaluation interval: their `for:` waits must be whole evaluations there too.
  const tests = parseYaml(readFileSync(RULE_TESTS, 'utf8')) as { evaluation_interval?: string };
  out.push({
    where: 'alerts/wedgewatch.rules.test.yml',
    evaluation: seconds(tests.evaluation_interval ?? '1m'),
  });
  // test/ops/pipeline.ts: the e2e test (1 s scrape and evaluation) and bench:alerts (5 s).
  const pipeline = readFileSync(`${ROOT}test/ops/pipeline.ts`, 'utf8');
  const dflt = /intervalSeconds \?\? (\d+)/.exec(pipeline);
  const bench = /intervalSeconds: (\d+)/.exec(readFileSync(`${ROOT}bench/alerts-e2e.ts`, 'utf8'));
  if (!dflt || !bench) throw new Error('cannot read the pipeline intervals');
  for (const [where, s] of [
    ['test/ops/pipeline.ts default', Number(dflt[1])],
    ['bench/alerts-e2e.ts', Number(bench[1])],
  ] as const) {
    out.push({ where, scrape: s, evaluation: s });
  }
  return out;
}

/**
 * The longest time between two beats of each heartbeat the rules compare with `time()`, in seconds, with where
 * it comes from. A rule on a heartbeat not listed here fails the test: say how often it beats first.
 */
const HEARTBEATS: Record<string, { period: number; why: string }> = {
  // src/sources/logs/tail/follow.ts: every follower polls every 250 ms on the shared clock.
  wedgewatch_log_follower_last_tick_timestamp_seconds: { period: 0.25, why: 'follower poll, 250 ms' },
  // A probe's last finished run: its `every` plus its timeout; the examples' longest is 5m with a 2m timeout.
  wedgewatch_probe_last_run_timestamp_seconds: {
    period: 420,
    why: "examples' slowest probe: every 5m, timeout 2m",
  },
  // Not a heartbeat of ours: the engine's last log line, older on an idle engine. The rule pairs it with passing
  // completions (which make the engine log), so only the scrape bound applies.
  wedgewatch_log_last_line_timestamp_seconds: { period: 0, why: 'paired with passing completions' },
};

interface Violation {
  rule: string;
  problem: string;
}

/** Every interval problem of one rule under one set of intervals. */
export function violations(r: RuleDef, iv: Intervals): Violation[] {
  const name = r.alert ?? r.record ?? '?';
  const out: Violation[] = [];
  const at = `${name} at ${iv.where} (scrape ${iv.scrape ?? '-'} s, evaluation ${iv.evaluation} s)`;
  const expr = r.expr.replace(/\s+/g, ' ');
  // `for:` shorter than an evaluation interval is one evaluation anyway: it says a wait that does not happen.
  const f = seconds(r.for ?? '0s');
  if (f > 0 && f < iv.evaluation)
    out.push({ rule: name, problem: `${at}: for: ${r.for} is under one evaluation` });
  if (iv.scrape === undefined) return out;
  const scrape = iv.scrape;
  // Range windows: rate/increase/changes need 4 samples to read a change (Prometheus' own advice for rate).
  for (const m of expr.matchAll(/\[(\d+[smhdw])\]/g)) {
    const w = seconds(m[1]!);
    if (w < 4 * scrape) out.push({ rule: name, problem: `${at}: window [${m[1]}] is under 4 scrapes` });
  }
  // `time() - heartbeat > N`: a healthy daemon reads as late as one beat plus one scrape (the sample's age at the
  // evaluation); N must clear that twice over the scrape.
  for (const m of expr.matchAll(/time\(\) - (\w+) > (\d+(?:\.\d+)?)\b(?! on)/g)) {
    const beat = HEARTBEATS[m[1]!];
    if (!beat) {
      out.push({ rule: name, problem: `${at}: ${m[1]} is not in HEARTBEATS` });
      continue;
    }
    const n = Number(m[2]);
    if (n < beat.period + 2 * scrape)
      out.push({
        rule: name,
        problem: `${at}: time() - ${m[1]} > ${n} is under a beat (${beat.period} s) plus two scrapes`,
      });
  }
  // `time() - last_tick > on (…) K * (interval > G)`: the bound is K intervals of at least G s, each interval one beat.
  for (const m of expr.matchAll(/time\(\) - (\w+) > on \([^)]*\) \(?(\d+) \* \(?(\w+)(?: > (\d+))?\)?\)?/g)) {
    const k = Number(m[2]);
    const floor = m[4] === undefined ? 0 : Number(m[4]);
    // With no floor the interval can be as short as the shortest probe `every` the config accepts: 1 s.
    const interval = Math.max(floor, 1);
    if ((k - 1) * interval < 2 * scrape)
      out.push({
        rule: name,
        problem: `${at}: ${k} × ${m[3]}${floor ? ` (> ${floor} s)` : ''} leaves ${(k - 1) * interval} s over one interval, under two scrapes`,
      });
  }
  // `increase(counter[W]) == 0` judged only where the counter beats at least every G s (`unless … > G`): the
  // window must hold 4 beats.
  for (const m of expr.matchAll(/increase\((\w+)\[(\d+[smhdw])\]\) == 0/g)) {
    const guard = /unless on \([^)]*\) \(\w+ > (\d+)\)/.exec(expr);
    const w = seconds(m[2]!);
    if (!guard)
      out.push({ rule: name, problem: `${at}: increase(${m[1]}) == 0 with no bound on how often it beats` });
    else if (w < 4 * Number(guard[1]))
      out.push({ rule: name, problem: `${at}: [${m[2]}] holds under 4 beats of ${guard[1]} s` });
  }
  return out;
}

describe('rule windows, bounds and for: against the configured intervals', () => {
  const intervals = configuredIntervals();
  const rules = loadRules();

  it('reads every place that sets the intervals', () => {
    expect(intervals.map((i) => i.where)).toEqual([
      'docs/deploy.md prometheus.yml',
      'deploy/kubernetes/servicemonitor.yaml',
      'alerts/wedgewatch.rules.test.yml',
      'test/ops/pipeline.ts default',
      'bench/alerts-e2e.ts',
    ]);
    expect(intervals[0]).toMatchObject({ scrape: 15, evaluation: 60 });
    expect(intervals[4]).toMatchObject({ scrape: 5, evaluation: 5 });
  });

  it('every shipped rule fits every configured interval', () => {
    const found = intervals.flatMap((iv) => rules.flatMap((r) => violations(r, iv)));
    expect(found.map((v) => v.problem)).toEqual([]);
  });

  it('the heartbeat rules are read by the checks (a pattern that stopped matching would check nothing)', () => {
    const exprs = rules.map((r) => r.expr.replace(/\s+/g, ' '));
    expect(exprs.filter((e) => /time\(\) - (\w+) > (\d+)/.test(e)).length).toBeGreaterThanOrEqual(3);
    expect(exprs.some((e) => /increase\(wedgewatch_scheduler_rounds_total\[\w+\]\) == 0/.test(e))).toBe(true);
  });

  it('flags the rules issue 26 replaced, and windows or for: under the intervals', () => {
    const bench = intervals.find((i) => i.where === 'bench/alerts-e2e.ts')!;
    const deploy = intervals[0]!;
    const old: RuleDef = {
      alert: 'OldSchedulerStalled',
      expr: 'time() - wedgewatch_scheduler_last_tick_timestamp_seconds\n> on (instance, target)\n3 * wedgewatch_scheduler_tick_interval_seconds',
      for: '1m',
    };
    expect(violations(old, bench).map((v) => v.problem)).toEqual([
      expect.stringContaining('3 × wedgewatch_scheduler_tick_interval_seconds leaves 2 s over one interval'),
    ]);
    expect(violations({ alert: 'W', expr: 'rate(x_total[30s]) > 0' }, deploy)).toHaveLength(1);
    expect(violations({ alert: 'F', expr: 'x == 1', for: '30s' }, deploy)).toHaveLength(1);
    expect(
      violations(
        { alert: 'T', expr: 'time() - wedgewatch_log_follower_last_tick_timestamp_seconds > 20' },
        deploy,
      ),
    ).toHaveLength(1);
    expect(
      violations({ alert: 'U', expr: 'time() - some_new_heartbeat_seconds > 600' }, deploy),
    ).toHaveLength(1);
    expect(violations({ alert: 'C', expr: 'increase(x_total[2m]) == 0' }, deploy)).toHaveLength(1);
    expect(
      violations(
        {
          alert: 'G',
          expr: 'increase(x_total[2m]) == 0 unless on (instance, target) (x_interval_seconds > 60)',
        },
        deploy,
      ),
    ).toHaveLength(1);
  });
});
