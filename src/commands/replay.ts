import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { LogFormat, LogPack, RuleConfig } from '../config/schema.js';
import type { IncidentManifest } from '../outputs/incidents/manifest.js';
import { PACKS } from '../sources/logs/packs/index.js';
import {
  formatMetrics,
  replayFiles,
  type ReplayEvent,
  type ReplayFileSettings,
  type ReplayResult,
} from './replay-files.js';
import { defaultPacks, LOG_ENGINES, type LogEngine } from '../config/log-engines.js';
import { guessFileEngine, type EngineGuess } from './replay-engine.js';
import { rootCauseText } from '../core/signals.js';
import { withImpliedPacks } from '../config/log-packs.js';
import { formatAt } from './replay-timeline.js';
import { RuleError } from '../sources/logs/rules/compile.js';
import { EXIT } from './exit-codes.js';
import { visibleControls } from '../lib/terminal-text.js';

// The pack names from the pack registry: yaml, the config loader and the logger cost start-up time and are
// needed only for --rules and --config.
const PACK_NAMES = Object.keys(PACKS) as LogPack[];
/** LOG_FORMATS of the config schema (a test keeps the two equal). */
export const FORMAT_NAMES = [
  'plain',
  'cri',
  'docker',
  'json',
  'logfmt',
  'auto',
] as const satisfies readonly LogFormat[];

/** Rules from a YAML file: a list of rules, or a mapping with `rules:` (a whole config file works too). */
export async function loadRulesFile(file: string): Promise<RuleConfig[]> {
  const [{ default: YAML }, { z }, { formatPath }, { ruleSchema }] = await Promise.all([
    import('yaml'),
    import('zod'),
    import('../config/load.js'),
    import('../config/schema.js'),
  ]);
  let raw: unknown;
  try {
    raw = YAML.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if (err instanceof YAML.YAMLError) throw new RuleError([`${file}: YAML: ${err.message.split('\n')[0]}`]);
    throw err;
  }
  const list = Array.isArray(raw) ? raw : (raw as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(list)) {
    throw new RuleError([`${file}: expected a list of rules, or a mapping with \`rules:\` (a config file)`]);
  }
  const parsed = z.array(ruleSchema).safeParse(list);
  if (!parsed.success) {
    throw new RuleError(parsed.error.issues.map((i) => `${file}: rules${formatPath(i.path)}: ${i.message}`));
  }
  return parsed.data;
}

function formatEvent(e: ReplayEvent): string {
  const fields = Object.entries(e.fields)
    .map(([k, v]) => `${k}=${v.length > 80 ? `${v.slice(0, 80)}…` : v}`)
    .join(' ');
  const body = e.line
    .split('\n')
    .map((l) => `    ${l.length > 300 ? `${l.slice(0, 300)}…` : l}`)
    .join('\n');
  const inc = e.incident;
  const cause = rootCauseText(inc);
  const chain =
    inc !== undefined && inc.absorbed > 0
      ? `\n    + ${inc.absorbed} more line(s) of this incident: ${inc.members
          .slice(1)
          .map((m) => `${m.rule}@${m.lineNo}`)
          .join(', ')}${inc.members.length <= inc.absorbed ? ', …' : ''}`
      : '';
  const loop = e.loop ? `  (loop: more than ${e.loop.count - 1} times in ${e.loop.seconds} s)` : '';
  return `${e.stamp || '-'}  ${e.severity.padEnd(8)} ${e.rule}  ${e.file}:${e.lineNo}${fields ? `  ${fields}` : ''}${loop}\n${body}${cause !== undefined ? `\n    root cause: ${cause}` : ''}${chain}`;
}

/** One JSON object per event (JSON Lines): where, what, and the rule's extracted fields. */
function jsonEvent(e: ReplayEvent): string {
  return JSON.stringify({
    type: 'event',
    time: Number.isFinite(e.time) ? new Date(e.time).toISOString() : null,
    stamp: e.stamp || null,
    file: e.file,
    line: e.lineNo,
    service: e.service,
    rule: e.rule,
    class: e.class,
    severity: e.severity,
    fields: e.fields,
    text: e.line,
    ...(e.incident !== undefined
      ? {
          incident: {
            absorbed: e.incident.absorbed,
            rootCause: e.incident.rootCause ?? null,
            members: e.incident.members.map((m) => ({
              rule: m.rule,
              line: m.lineNo,
              time: Number.isFinite(m.time) ? new Date(m.time).toISOString() : null,
              process: m.process,
              text: m.line,
            })),
          },
        }
      : {}),
    ...(e.loop !== undefined ? { loop: e.loop } : {}),
  });
}

function jsonSummary(r: ReplayResult, seconds: number): string {
  const bySeverity: Record<string, number> = {};
  for (const e of r.events) bySeverity[e.severity] = (bySeverity[e.severity] ?? 0) + 1;
  return JSON.stringify({
    type: 'summary',
    lines: r.lines,
    bytes: r.bytes,
    seconds: Number(seconds.toFixed(3)),
    events: r.events.length + r.droppedEvents,
    droppedEvents: r.droppedEvents,
    bySeverity,
    caught: r.timeline?.caught ?? false,
    timeline: (r.timeline?.entries ?? []).map((t) => ({
      time: new Date(t.at).toISOString(),
      service: t.service,
      kind: t.kind,
      diagnosis: t.diagnosis ?? null,
      text: t.text,
    })),
  });
}

/** An incident bundle directory stands for its log windows, each with the service its manifest names. */
export function expandBundles(args: string[]): { files: string[]; services: (string | undefined)[] } {
  const files: string[] = [];
  const services: (string | undefined)[] = [];
  for (const a of args) {
    const manifest = join(a, 'manifest.json');
    if (statSync(a, { throwIfNoEntry: false })?.isDirectory() && existsSync(manifest)) {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as Pick<IncidentManifest, 'logs'>;
      for (const l of m.logs ?? []) {
        files.push(join(a, l.path));
        services.push(l.service);
      }
    } else {
      files.push(a);
      services.push(undefined);
    }
  }
  return { files, services };
}

/** The pack an engine's own lines need (its deaths are in no other): what a run without it cannot catch. */
const OWN_PACK: Record<LogEngine, LogPack> = {
  sglang: 'sglang',
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  ollama: 'ollama',
  trtllm: 'trtllm',
  dynamo: 'dynamo',
  tgi: 'tgi',
  gateway: 'gateway',
};

const ENGINE_PACKS: readonly LogPack[] = Object.values(OWN_PACK);

/** How replay reads one file: the packs it runs and where they came from. */
export interface FilePlan {
  packs: readonly LogPack[];
  /** `--pack`, `--engine`, `--config`, or the engine told from the file's lines (or the default when none was). */
  from: string;
  guess: EngineGuess | undefined;
}

/**
 * The packs each file is read with: the flags' when given, else the engine told from the file's own lines (issue
 * 40: a vLLM log replayed with SGLang's packs printed "0 events"), else SGLang's, the default engine.
 */
export function planFiles(
  files: readonly string[],
  opts: { pack?: LogPack[]; engine?: LogEngine; config?: boolean },
): FilePlan[] {
  return files.map((file) => {
    if (opts.pack) {
      // The file's engine is only read for the warning (planNotes), which needs an engine whose pack is not run:
      // with every engine's own pack named there is none to name, and reading and searching the file's first MiB
      // was a fixed cost of every such replay (~30M instructions, bench:ingest-compare names every pack).
      const packs = withImpliedPacks(opts.pack);
      const guess = ENGINE_PACKS.every((p) => packs.includes(p)) ? undefined : guessFileEngine(file);
      return { packs, from: '--pack', guess };
    }
    const guess = guessFileEngine(file);
    if (opts.engine) return { packs: defaultPacks(opts.engine), from: `--engine ${opts.engine}`, guess };
    if (opts.config) return { packs: [], from: '--config', guess };
    if (guess)
      return { packs: defaultPacks(guess.engine), from: `${guess.engine}, told from its lines`, guess };
    return { packs: defaultPacks('sglang'), from: 'sglang, the default (its lines name no engine)', guess };
  });
}

/** What replay says on stderr about a file's packs, and a warning when its lines read like an engine not run. */
export function planNotes(file: string, plan: FilePlan): string[] {
  const notes = [`replay: ${file}: ${plan.from}; packs ${plan.packs.join(', ') || '(none)'}`];
  const g = plan.guess;
  if (g !== undefined && plan.from !== '--config' && !plan.packs.includes(OWN_PACK[g.engine])) {
    notes.push(
      `replay: warning: ${file} reads like ${g.engine} (${g.hits} line(s) of its shape), whose pack ` +
        `${OWN_PACK[g.engine]} was not run: its deaths are not caught. Replay it with --engine ${g.engine}.`,
    );
  }
  return notes;
}

/** A config's log sources (every target's) and rules, for `replay --config`. */
async function configSources(
  file: string,
): Promise<{ rules: RuleConfig[]; settingsFor: (service: string) => ReplayFileSettings | undefined }> {
  const { loadConfigFile, ConfigError } = await import('../config/load.js');
  let config;
  try {
    config = loadConfigFile(file).config;
  } catch (err) {
    if (err instanceof ConfigError) throw new RuleError(err.problems);
    throw err;
  }
  const sources = config.targets.flatMap((t) => t.logs);
  const settings = (src: (typeof sources)[number]): ReplayFileSettings => ({
    packs: src.packs,
    format: src.format,
    ...(src.structured !== undefined ? { structured: src.structured } : {}),
    ...(src.keys !== undefined ? { keys: src.keys } : {}),
  });
  return {
    rules: config.rules,
    settingsFor: (service) => {
      const src = sources.find((s) => s.service === service) ?? sources[0];
      return src && settings(src);
    },
  };
}

export function replayCommand(): Command {
  return new Command('replay')
    .addHelpText(
      'after',
      `\nEngines (--engine; without it each file's engine is told from its lines): ${LOG_ENGINES.join(', ')}\n` +
        '\nExample:\n  wedgewatch replay vllm.log                     # the engine from its lines\n' +
        '  wedgewatch replay --pack sglang --pack nixl prefill.log decode.log\n' +
        '  wedgewatch replay --format cri /var/log/pods/llm_prefill-0_*/sglang/0.log\n',
    )
    .description(
      'run the rules over captured logs once: prints the event timeline and the final metric values',
    )
    .argument('<log...>', 'log files to read, or incident bundle directories (their log windows)')
    .addOption(
      new Option(
        '-p, --pack <pack>',
        "built-in rule pack (repeatable; default: the engine's, as a log source's)",
      )
        .choices(PACK_NAMES)
        .argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]),
    )
    .addOption(
      new Option(
        '-e, --engine <engine>',
        "the engine that wrote the logs: picks the default packs (default: told from each file's own lines)",
      ).choices(LOG_ENGINES),
    )
    .option(
      '-c, --config <file>',
      "replay as the config's log sources read: each file takes the packs, format and rules of the source of its service (or the first source)",
    )
    .option('-r, --rules <file>', 'user rules (YAML: a list, or a mapping with rules:)')
    .option('-s, --service <name>', 'service label (default: each file name without extension)')
    .addOption(
      new Option(
        '-f, --format <format>',
        'how lines are wrapped: cri (a pod log under /var/log/pods), docker (json-file), json or logfmt records, plain, or auto (the wrapper per file, each line as the record it is)',
      )
        .choices(FORMAT_NAMES)
        .default('auto'),
    )
    .option(
      '--max-events <n>',
      'events to print',
      (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1)
          throw new InvalidArgumentError('expected a whole number of at least 1');
        return n;
      },
      1000,
    )
    .option(
      '--json',
      'print one JSON object per event (JSON Lines), then a summary object with the verdict timeline',
    )
    .option('--no-timeline', 'skip the detector run over the logs (faster on huge batch-line logs)')
    .action(
      async (
        files: string[],
        opts: {
          pack?: LogPack[];
          engine?: LogEngine;
          config?: string;
          rules?: string;
          service?: string;
          format: LogFormat;
          maxEvents: number;
          json?: boolean;
          timeline: boolean;
        },
      ) => {
        try {
          const fromConfig = opts.config ? await configSources(opts.config) : undefined;
          const userRules = [
            ...(fromConfig?.rules ?? []),
            ...(opts.rules ? await loadRulesFile(opts.rules) : []),
          ];
          const started = Date.now();
          const inputs = expandBundles(files);
          const fileService = (f: string, i: number) =>
            opts.service ?? inputs.services[i] ?? basename(f).replace(/\.[^.]*$/, '');
          // `--pack nixl` reads what a config naming nixl reads (the shared code's packs too); with no flag each
          // file is read with the packs of the engine its lines name.
          const plans = planFiles(inputs.files, {
            ...(opts.pack ? { pack: opts.pack } : {}),
            ...(opts.engine ? { engine: opts.engine } : {}),
            config: fromConfig !== undefined,
          });
          const settings = inputs.files.map((f, i) =>
            fromConfig && !opts.pack
              ? fromConfig.settingsFor(fileService(f, i))
              : { packs: plans[i]!.packs, format: opts.format },
          );
          inputs.files.forEach((f, i) => {
            const plan = settings[i] ? { ...plans[i]!, packs: settings[i].packs } : plans[i]!;
            for (const note of planNotes(f, plan)) process.stderr.write(`${note}\n`);
          });
          const result = replayFiles({
            files: inputs.files,
            services: inputs.services,
            packs: plans[0]?.packs ?? defaultPacks('sglang'),
            settings,
            userRules,
            service: opts.service,
            format: opts.format,
            maxEvents: opts.maxEvents,
            timeline: opts.timeline,
            onProgress: (p) => {
              const s = (Date.now() - started) / 1000;
              process.stderr.write(
                `replay: ${p.file} ${((100 * p.bytes) / Math.max(1, p.size)).toFixed(0)}% ` +
                  `${p.lines} lines ${(p.lines / Math.max(s, 0.001) / 1e6).toFixed(2)}M lines/s\n`,
              );
            },
          });
          const s = (Date.now() - started) / 1000;
          if (opts.json) {
            const lines = result.events.map(jsonEvent);
            lines.push(jsonSummary(result, s));
            process.stdout.write(`${lines.join('\n')}\n`);
            process.stderr.write(
              `replay: ${result.lines} lines, ${result.bytes} bytes in ${s.toFixed(2)} s\n`,
            );
            process.exitCode = EXIT.ok;
            return;
          }
          const out: string[] = [];
          out.push(`# events (${result.events.length + result.droppedEvents})`);
          for (const e of result.events) out.push(formatEvent(e));
          if (result.droppedEvents > 0) out.push(`… ${result.droppedEvents} more events (see metrics)`);
          if (result.timeline) {
            out.push('', "# verdict timeline (the detector over the logs' own timestamps; no probes ran)");
            for (const t of result.timeline.entries) out.push(`${formatAt(t.at)}  ${t.text}`);
            const first = result.timeline.entries.find(
              (t) => t.kind === 'critical' || t.kind === 'engine_stalled' || t.kind === 'rank_stalled',
            );
            out.push(
              first
                ? `would a watching daemon have caught it: yes, first at ${formatAt(first.at)} (${first.diagnosis})`
                : 'would a watching daemon have caught it: no (no critical line, no engine or rank stall)',
            );
          }
          out.push('', '# metrics', await formatMetrics(result.registry), '');
          // Log lines go to a terminal: their escapes are shown, not run (src/lib/terminal-text.ts).
          process.stdout.write(visibleControls(out.join('\n')));
          process.stderr.write(`replay: ${result.lines} lines, ${result.bytes} bytes in ${s.toFixed(2)} s\n`);
          process.exitCode = EXIT.ok;
        } catch (err) {
          if (err instanceof RuleError) {
            for (const p of err.problems) process.stderr.write(`${p}\n`);
            process.exitCode = EXIT.usage;
            return;
          }
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') {
            process.stderr.write(`replay: ${(err as Error).message}\n`);
            process.exitCode = EXIT.usage;
            return;
          }
          throw err;
        }
      },
    );
}
