import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { parseDuration } from '../config/duration.js';
import { redactor } from '../lib/redact.js';
import { knobDefaultText, knobFlag, parseKnob } from '../verify/knobs.js';
import { STEPS, STEP_NAMES } from '../verify/registry.js';
import { formatReport } from '../verify/report.js';
import { runVerify } from '../verify/runner.js';
import { makeTarget, parseHeader, TargetUnreachable } from '../verify/target.js';
import { UsageError } from '../verify/types.js';
import { compareBaseline, baselineSummary, loadBaseline, toSaved } from '../verify/baseline.js';
import { formatComparison } from '../verify/compare.js';
import { writeHtmlReport } from '../verify/html-report.js';
import type { Slo } from '../verify/types.js';
import { EXIT } from './common.js';

/** verify's exit codes: the shared ones plus INCONCLUSIVE (3): the steps passed, the noise hid the answer. */
export const EXIT_VERIFY = { ...EXIT, inconclusive: 3 } as const;

/** `ttft=2s,tpot=50ms,e2el=20s`: the bounds a request must meet to count in goodput. */
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  const keys = { ttft: 'ttftS', tpot: 'tpotS', e2el: 'e2elS' } as const;
  for (const part of text.split(',')) {
    const m = /^\s*(ttft|tpot|e2el)\s*=\s*(\S+)\s*$/.exec(part);
    const ms = m ? parseDuration(m[2]!) : undefined;
    if (!m || ms === undefined || ms <= 0)
      throw new UsageError(
        `--slo: expected e.g. "ttft=2s,tpot=50ms" (keys ttft, tpot, e2el), got ${JSON.stringify(part)}`,
      );
    slo[keys[m[1] as keyof typeof keys]] = ms / 1000;
  }
  return slo;
}

function parseRepeat(text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1)
    throw new UsageError(`--repeat: expected an integer ≥ 1, got ${JSON.stringify(text)}`);
  return Number(text);
}

const collect = (v: string, prev: string[]) => [...prev, v];

function parseThreshold(text: string): number {
  const pct = text.trim().endsWith('%');
  const n = Number(pct ? text.trim().slice(0, -1) : text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--regression-threshold: expected e.g. "10%" or "0.1", got ${JSON.stringify(text)}`);
  }
  return pct ? n / 100 : n;
}

export function verifyCommand(): Command {
  const cmd = new Command('verify')
    .addHelpText(
      'after',
      '\nExample:\n  wedgewatch verify --url http://127.0.0.1:8000 --model deepseek-ai/DeepSeek-V3.2 --log /var/log/sglang/decode.log\n',
    )
    .description(
      'post-fix validation gate: ' +
        STEP_NAMES.join(', ') +
        "; exit 0 all pass, 1 a step failed or a figure regressed, 2 bad usage or target unreachable, 3 inconclusive (a figure's interval straddles the threshold: rerun with more --repeat)",
    )
    .option(
      '--url <url>',
      'OpenAI-compatible base URL of the deployment, the outermost hop (proxy or router); required',
    )
    .option('--model <name>', 'model name to request; required')
    .option(
      '--metrics-url <url>',
      'engine /metrics URL for the batching step (its running count; llama.cpp: its decode steps)',
    )
    .option(
      '--log <file>',
      'engine log file to scan (Decode batch lines, critical signatures); repeatable',
      collect,
      [],
    )
    .option('--steps <list>', `comma-separated steps to run, in order (default: ${STEP_NAMES.join(',')})`)
    .option('--baseline <file>', 'compare throughput and latency with results saved by --save')
    .option('--save <file>', "write this run's results (JSON) for a later --baseline")
    .option('--regression-threshold <pct>', 'baseline regression that fails the gate ("10%" or 0.1)', '10%')
    .option('--repeat <n>', 'counted trials per load level, after one warm-up trial', '5')
    .option(
      '--slo <bounds>',
      'goodput SLO: requests meeting every bound, e.g. "ttft=2s,tpot=50ms" (also e2el)',
    )
    .option('--report <file.html>', 'write a self-contained HTML report (charts, verdict table)')
    .option('--gate-tails', 'p99 figures decide the comparison too (default: shown, not gating)')
    .option('--latency-floor <duration>', 'latency changes below this never count as a regression', '50ms')
    .option('--header <header>', "extra request header 'Name: value'; repeatable", collect, [])
    .option('--api-key-file <file>', 'file holding an API key, sent as Authorization: Bearer <key>')
    .option('--json', 'print the report as JSON on stdout')
    .option('--preflight-timeout <duration>', 'limit for the start check (GET /v1/models)', '10s');
  for (const step of STEPS) {
    for (const k of step.knobs) {
      cmd.addOption(
        new Option(
          `${knobFlag(step, k.flag)} <value>`,
          // A knob whose default is "from the server" (0) says so in its help; the others show the value.
          /\(default[ :]/.test(k.help)
            ? `${step.name}: ${k.help}`
            : `${step.name}: ${k.help} (default ${knobDefaultText(k.kind, step.defaults[k.key])})`,
        ),
      );
    }
  }
  cmd.action(async (opts: Record<string, unknown>) => {
    process.exitCode = await runCommand(cmd, opts);
  });
  cmd.addCommand(compareCommand());
  return cmd;
}

function compareCommand(): Command {
  return (
    new Command('compare')
      .description(
        'compare two results files saved by `verify --save` offline (same intervals and verdicts as --baseline); exit 0 PASS, 1 REGRESSION, 2 bad usage, 3 INCONCLUSIVE',
      )
      .argument('<before.json>', 'results saved before the change')
      .argument('<after.json>', 'results saved after it')
      // The options it shares with verify are verify's own (commander gives a parent's options to it wherever
      // they appear): --regression-threshold, --latency-floor, --gate-tails, --json, --report.
      .addHelpText(
        'after',
        '\nOptions as for verify: --regression-threshold, --latency-floor, --gate-tails, --json, --report FILE.html\n',
      )
      .action((beforePath: string, afterPath: string, _local: unknown, self: Command) => {
        const opts = self.optsWithGlobals<Record<string, unknown>>();
        try {
          const before = loadBaseline(beforePath, 'before');
          const after = loadBaseline(afterPath, 'after');
          const floor = parseDuration(String(opts.latencyFloor));
          if (floor === undefined) throw new UsageError(`--latency-floor: expected a duration like "50ms"`);
          const threshold = parseThreshold(String(opts.regressionThreshold));
          const c = compareBaseline(before, after.steps, threshold, floor / 1000, opts.gateTails === true);
          const summary = baselineSummary(c);
          if (typeof opts.report === 'string')
            writeHtmlReport(opts.report, { before, after, comparison: { ...c, summary } });
          process.stdout.write(
            opts.json
              ? JSON.stringify({ before: beforePath, after: afterPath, ...c, summary }, null, 2) + '\n'
              : [
                  `wedgewatch verify compare ${beforePath} -> ${afterPath} (threshold ${(threshold * 100).toFixed(0)}%)`,
                  ...c.figures.map((f) => `  ${formatComparison(f)}`),
                  ...(c.missing.length ? [`  not in both: ${c.missing.join(', ')}`] : []),
                  '',
                  summary,
                  '',
                ].join('\n'),
          );
          process.exitCode =
            c.verdict === 'PASS'
              ? EXIT_VERIFY.ok
              : c.verdict === 'REGRESSION'
                ? EXIT_VERIFY.failed
                : EXIT_VERIFY.inconclusive;
        } catch (err) {
          if (!(err instanceof UsageError)) throw err;
          process.stderr.write(`wedgewatch verify compare: usage: ${err.message}\n`);
          process.exitCode = EXIT_VERIFY.usage;
        }
      })
  );
}

async function runCommand(cmd: Command, opts: Record<string, unknown>): Promise<number> {
  try {
    const headers: Record<string, string> = {};
    for (const h of opts.header as string[]) {
      const [k, v] = parseHeader(h);
      headers[k] = v;
    }
    if (typeof opts.apiKeyFile === 'string') {
      let key: string;
      try {
        key = readFileSync(opts.apiKeyFile, 'utf8').trim();
      } catch (err) {
        throw new UsageError(`--api-key-file: ${(err as Error).message}`);
      }
      if (key === '') throw new UsageError(`--api-key-file: ${opts.apiKeyFile} is empty`);
      headers.authorization = `Bearer ${key}`;
    }
    redactor.set(Object.values(headers).flatMap((v) => [v, v.replace(/^Bearer\s+/i, '')]));

    const knobs: Record<string, Record<string, unknown>> = {};
    for (const step of STEPS) {
      for (const k of step.knobs) {
        const attr = cmd.options.find((o) => o.long === knobFlag(step, k.flag))!.attributeName();
        const text = opts[attr];
        if (typeof text !== 'string') continue;
        (knobs[step.name] ??= {})[k.key] = parseKnob(k.kind, text, knobFlag(step, k.flag));
      }
    }
    const dur = (flag: string, v: unknown) => {
      const ms = parseDuration(String(v));
      if (ms === undefined)
        throw new UsageError(`${flag}: expected a duration like "10s", got ${JSON.stringify(v)}`);
      return ms;
    };
    if (typeof opts.url !== 'string') throw new UsageError("required option '--url <url>' not specified");
    if (typeof opts.model !== 'string')
      throw new UsageError("required option '--model <name>' not specified");
    const metricsUrl = opts.metricsUrl as string | undefined;
    if (metricsUrl !== undefined && !URL.canParse(metricsUrl))
      throw new UsageError(`--metrics-url: not a URL: ${metricsUrl}`);
    const baseline = typeof opts.baseline === 'string' ? loadBaseline(opts.baseline) : undefined;
    const report = await runVerify({
      target: makeTarget(String(opts.url), String(opts.model), headers),
      metricsUrl,
      logs: opts.log as string[],
      steps:
        typeof opts.steps === 'string'
          ? opts.steps
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined,
      knobs,
      baselinePath: opts.baseline as string | undefined,
      savePath: opts.save as string | undefined,
      regressionThreshold: parseThreshold(String(opts.regressionThreshold)),
      latencyFloorS: dur('--latency-floor', opts.latencyFloor) / 1000,
      preflightTimeoutMs: dur('--preflight-timeout', opts.preflightTimeout),
      repeat: parseRepeat(String(opts.repeat)),
      gateTails: opts.gateTails === true,
      slo: typeof opts.slo === 'string' ? parseSlo(opts.slo) : undefined,
      progress: (line) => process.stderr.write(redactor.redact(line) + '\n'),
    });
    process.stdout.write(
      redactor.redact(opts.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report)),
    );
    if (typeof opts.report === 'string') {
      writeHtmlReport(opts.report, {
        after: toSaved(report.url, report.model, report.steps),
        before: baseline,
        comparison: report.baseline,
      });
      process.stderr.write(`wedgewatch verify: report written to ${opts.report}\n`);
    }
    return report.verdict === 'PASS'
      ? EXIT_VERIFY.ok
      : report.verdict === 'FAIL'
        ? EXIT_VERIFY.failed
        : EXIT_VERIFY.inconclusive;
  } catch (err) {
    if (err instanceof UsageError || err instanceof TargetUnreachable) {
      const what = err instanceof TargetUnreachable ? 'target unreachable' : 'usage';
      process.stderr.write(redactor.redact(`wedgewatch verify: ${what}: ${err.message}`) + '\n');
      return EXIT.usage;
    }
    throw err;
  }
}
