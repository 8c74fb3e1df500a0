// `wedgewatch incidents list|show|export`: the bundles under the state directory, read from disk (the daemon need
// not run). The state directory comes from --state-dir, or from the config file's stateDir.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/load.js';
import type { IncidentManifest } from '../outputs/incidents/manifest.js';
import { bundleFiles, incidentsDir, listIncidents, readManifest } from '../outputs/incidents/store.js';
import { tarGzBundle } from '../outputs/incidents/tar.js';
import { EXIT } from './common.js';
import { visibleControls } from '../lib/terminal-text.js';

interface DirOpts {
  config?: string;
  stateDir?: string;
}

class UsageError extends Error {}

function root(o: DirOpts): string {
  if (o.stateDir !== undefined) return incidentsDir(o.stateDir);
  if (o.config === undefined) throw new UsageError('give --config <file> or --state-dir <dir>');
  // Secrets in the config may be unset here: only stateDir is needed, so ${VAR}s are left as written.
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_t, k) => process.env[String(k)] ?? `\${${String(k)}}`,
  });
  return incidentsDir(loadConfigFile(o.config, env).config.stateDir);
}

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
const size = (n: number) =>
  n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`;

function withDir(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'config file (its stateDir holds the incidents)')
    .option('--state-dir <dir>', 'state directory (instead of --config)');
}

async function run(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
    process.exitCode ??= EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`wedgewatch incidents: ${err.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    throw err;
  }
}

async function manifestOf(dir: string, id: string): Promise<IncidentManifest> {
  const m = await readManifest(dir, id);
  if (m === undefined) throw new UsageError(`no incident ${JSON.stringify(id)} in ${dir}`);
  return m;
}

export function incidentsCommand(): Command {
  const cmd = new Command('incidents')
    .description('list, show and export the incident bundles captured when a target went bad')
    .addHelpText(
      'after',
      '\nExamples:\n  wedgewatch incidents list --config /etc/wedgewatch/wedgewatch.yaml\n' +
        '  wedgewatch incidents export 20261201T052512.345Z-dsv4-pd --state-dir /var/lib/wedgewatch\n',
    );
  cmd.addCommand(
    withDir(new Command('list').description('the bundles, newest first'))
      .option('-t, --target <name>', 'only this target')
      .option('--json', 'print JSON')
      .action((o: DirOpts & { target?: string; json?: boolean }) =>
        run(async () => {
          const dir = root(o);
          const list = await listIncidents(dir, { target: o.target });
          if (o.json) {
            process.stdout.write(JSON.stringify(list, null, 2) + '\n');
            return;
          }
          if (list.length === 0) {
            process.stdout.write(`no incidents in ${dir}\n`);
            return;
          }
          for (const i of list) {
            process.stdout.write(
              visibleControls(
                `${i.id}  ${i.state}${i.diagnosis ? `/${i.diagnosis}` : ''}  ${i.result}  ${i.files} files  ${size(i.bytes)}\n`,
              ),
            );
          }
        }),
      ),
  );
  cmd.addCommand(
    withDir(new Command('show').description('one bundle: times, evidence, files').argument('<id>'))
      .option('--json', 'print the manifest as JSON')
      .action((id: string, o: DirOpts & { json?: boolean }) =>
        run(async () => {
          const dir = root(o);
          const m = await manifestOf(dir, id);
          if (o.json) {
            process.stdout.write(JSON.stringify(m, null, 2) + '\n');
            return;
          }
          const out = [
            `incident ${m.id}: ${m.target} ${m.state}${m.diagnosis ? ` (${m.diagnosis})` : ''}, ${m.result}`,
            `  cause          ${m.cause}`,
            `  first signal   ${iso(m.times.firstSignal)}`,
            `  confirmation   ${iso(m.times.confirmation)}`,
            `  captured       ${iso(m.times.captureStart)} → ${iso(m.times.captureEnd)}`,
            'evidence:',
            ...(m.evidence.events as Array<{ time: number; summary: string }>).map(
              (e) => `  ${iso(e.time)}  ${e.summary}`,
            ),
            'marked log lines:',
            ...m.logs.flatMap((l) =>
              l.marks.map(
                (k) =>
                  `  ${l.path}:${k.line}  ${k.trigger ? 'TRIGGER ' : ''}${k.rule}  ${k.text.slice(0, 120)}`,
              ),
            ),
            'pieces:',
            ...m.pieces.map(
              (p) => `  ${p.status.padEnd(8)} ${p.kind} ${p.name}${p.detail ? `: ${p.detail}` : ''}`,
            ),
            'files:',
            ...(await bundleFiles(dir, id)).map((f) => `  ${f.path}  ${f.bytes} B`),
          ];
          // A cause can quote a log line: its escapes are shown, not run (src/lib/terminal-text.ts).
          process.stdout.write(visibleControls(out.join('\n')) + '\n');
        }),
      ),
  );
  cmd.addCommand(
    withDir(new Command('export').description('write the bundle as a .tar.gz').argument('<id>'))
      .option('-o, --output <file>', 'where to write it ("-" for stdout; default <id>.tar.gz)')
      .action((id: string, o: DirOpts & { output?: string }) =>
        run(async () => {
          const dir = root(o);
          await manifestOf(dir, id);
          const file = o.output ?? `${id}.tar.gz`;
          const dest = file === '-' ? process.stdout : createWriteStream(file);
          await pipeline(tarGzBundle(dir, id), dest);
          if (file !== '-') process.stderr.write(`wrote ${file}\n`);
        }),
      ),
  );
  return cmd;
}
