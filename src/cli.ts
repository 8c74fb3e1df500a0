#!/usr/bin/env node
// Entry point. Each subcommand lives in commands/ and is imported only when it is the one being run: `run` and
// `check` must not pay (in start-up time and resident memory) for the simulator, verify or replay code.
import { Command } from 'commander';
import { applyNodeFlags } from './node-flags.js';
import { versionText } from './version.js';

interface CommandEntry {
  /** One line for `wedgewatch --help`; the command's own --help has the full description. */
  summary: string;
  load(): Promise<Command>;
}

// Adding a command: its file in commands/ plus one entry here.
const COMMANDS: Record<string, CommandEntry> = {
  run: {
    summary: 'run the watchdog daemon',
    load: async () => (await import('./commands/run.js')).runCommand(),
  },
  check: {
    summary: 'validate a config file',
    load: async () => (await import('./commands/check.js')).checkCommand(),
  },
  replay: {
    summary: 'run the log rules over captured logs once',
    load: async () => (await import('./commands/replay.js')).replayCommand(),
  },
  sim: {
    summary: 'run a simulated SGLang prefill/decode deployment with fault injection',
    load: async () => (await import('./commands/sim.js')).simCommand(),
  },
  demo: {
    summary: 'the simulator and the watchdog watching it, with a replayed wedge incident',
    load: async () => (await import('./commands/demo.js')).demoCommand(),
  },
  incidents: {
    summary: 'list, show and export incident bundles',
    load: async () => (await import('./commands/incidents.js')).incidentsCommand(),
  },
  verify: {
    summary: 'post-fix validation gate against a running deployment',
    load: async () => (await import('./commands/verify.js')).verifyCommand(),
  },
};

/** The subcommand named on the command line (`help NAME` included); the top level takes no option with a value. */
function requested(argv: string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

const program = new Command('wedgewatch')
  .description('Catches LLM serving deployments that answer /health but no longer complete requests.')
  .version(versionText(), '-V, --version')
  .showHelpAfterError()
  .exitOverride((err) => {
    // Commander's own exits (help, version) are 0; usage errors are 2 as for every other bad input.
    process.exit(err.exitCode === 0 ? 0 : 2);
  })
  .addHelpText('after', '\nExample:\n  wedgewatch run --config /etc/wedgewatch/wedgewatch.yaml\n');

const wanted = requested(process.argv.slice(2));
// The long-running commands take the shipped V8 flags however node was started, before their modules load.
if (wanted === 'run' || wanted === 'demo') applyNodeFlags();
for (const [name, entry] of Object.entries(COMMANDS)) {
  // Only the command being run is loaded; the others are listed by name and summary.
  const cmd = name === wanted ? await entry.load() : new Command(name);
  program.addCommand(cmd.summary(entry.summary));
}

// addCommand does not copy these settings to subcommands; usage errors there must also exit 2.
for (const cmd of program.commands) {
  cmd.showHelpAfterError().exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
}

await program.parseAsync(process.argv);
