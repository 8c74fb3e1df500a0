import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { PrettyStream } from 'pino-pretty';
import { redactor } from './redact.js';

export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; default stderr, so stdout stays free for command output (check, replay, verify). */
  destination?: NodeJS.WritableStream;
}

/** Every log line passes the redactor before it is written: a secret can never reach a log file. */
function redacting(dest: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      dest.write(redactor.redact(chunk.toString()));
      cb();
    },
  });
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.destination ?? process.stderr;
  const level = opts.level ?? 'info';
  if (opts.format === 'pretty') {
    // Loaded only when asked for: most daemons log JSON, and pino-pretty with its dependencies is ~10 MB resident.
    const pretty = createRequire(import.meta.url)('pino-pretty') as (opts: object) => PrettyStream;
    const stream = pretty({ destination: redacting(dest), sync: true, colorize: false });
    return pino({ level, base: { name: 'wedgewatch' } }, stream);
  }
  return pino({ level, base: { name: 'wedgewatch' } }, redacting(dest));
}

export type { Logger };
