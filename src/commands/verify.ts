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
import { EXIT } from './common.js';

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
        '; exit 0 all pass, 1 a step (or the baseline check) failed, 2 bad usage or target unreachable',
    )
    .requiredOption('--url <url>', 'OpenAI-compatible base URL of the deployment (proxy or router)')
    .requiredOption('--model <name>', 'model name to request')
    .option('--metrics-url <url>', 'engine /metrics URL (sglang:num_running_reqs) for the batching step')
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
          `${step.name}: ${k.help} (default ${knobDefaultText(k.kind, step.defaults[k.key])})`,
        ),
      );
    }
  }
  cmd.action(async (opts: Record<string, unknown>) => {
    process.exitCode = await runCommand(cmd, opts);
  });
  return cmd;
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
    const metricsUrl = opts.metricsUrl as string | undefined;
    if (metricsUrl !== undefined && !URL.canParse(metricsUrl))
      throw new UsageError(`--metrics-url: not a URL: ${metricsUrl}`);
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
      progress: (line) => process.stderr.write(redactor.redact(line) + '\n'),
    });
    process.stdout.write(
      redactor.redact(opts.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report)),
    );
    return report.ok ? EXIT.ok : EXIT.failed;
  } catch (err) {
    if (err instanceof UsageError || err instanceof TargetUnreachable) {
      const what = err instanceof TargetUnreachable ? 'target unreachable' : 'usage';
      process.stderr.write(redactor.redact(`wedgewatch verify: ${what}: ${err.message}`) + '\n');
      return EXIT.usage;
    }
    throw err;
  }
}
