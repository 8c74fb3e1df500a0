import { Option, type Command } from 'commander';
import { createLogger, LOG_LEVELS, type LogFormat, type Logger, type LogLevel } from '../lib/logger.js';

export { EXIT } from './exit-codes.js';

export function addLogFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option('--log.level <level>', 'log level').choices(LOG_LEVELS).default('info'))
    .addOption(new Option('--log.format <format>', 'log format').choices(['json', 'pretty']).default('json'));
}

export function loggerFrom(opts: Record<string, unknown>): Logger {
  return createLogger({ level: opts['log.level'] as LogLevel, format: opts['log.format'] as LogFormat });
}
