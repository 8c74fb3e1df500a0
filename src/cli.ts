#!/usr/bin/env node
// Entry point: one subcommand per file in commands/, registered here.
import { Command } from 'commander';
import { checkCommand } from './commands/check.js';
import { replayCommand } from './commands/replay.js';
import { demoCommand } from './commands/demo.js';
import { runCommand } from './commands/run.js';
import { simCommand } from './commands/sim.js';
import { verifyCommand } from './commands/verify.js';
import { VERSION } from './version.js';

const program = new Command('wedgewatch')
  .description('Catches LLM serving deployments that answer /health but no longer complete requests.')
  .version(VERSION, '-V, --version')
  .showHelpAfterError()
  .exitOverride((err) => {
    // Commander's own exits (help, version) are 0; usage errors are 2 as for every other bad input.
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

program.addCommand(runCommand());
program.addCommand(checkCommand());
program.addCommand(replayCommand());
program.addCommand(simCommand());
program.addCommand(demoCommand());
program.addCommand(verifyCommand());

// addCommand does not copy these settings to subcommands; usage errors there must also exit 2.
for (const cmd of program.commands) {
  cmd.showHelpAfterError().exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
}

await program.parseAsync(process.argv);
