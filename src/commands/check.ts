import { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/load.js';
import { EXIT } from './exit-codes.js';

export function checkCommand(): Command {
  return new Command('check')
    .addHelpText('after', '\nExample:\n  wedgewatch check --config examples/wedgewatch.yaml\n')
    .description('validate a config file: exit 0 when good, 2 with every problem listed when not')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .action((opts: { config: string }) => {
      try {
        const { config } = loadConfigFile(opts.config);
        const probes = config.targets.reduce((n, t) => n + t.probes.length, 0);
        const logs = config.targets.reduce((n, t) => n + t.logs.length, 0);
        process.stdout.write(
          `${opts.config}: OK (${config.targets.length} target(s), ${probes} probe(s), ${logs} log source(s), ${config.rules.length} user rule(s))\n`,
        );
        process.exitCode = EXIT.ok;
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        process.stderr.write(`${opts.config}: ${err.problems.length} problem(s):\n`);
        for (const p of err.problems) process.stderr.write(`  ${p}\n`);
        process.exitCode = EXIT.usage;
      }
    });
}
