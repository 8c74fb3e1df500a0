// Loggers for tests: one that keeps every line it writes (a test asserts on what was logged), one that drops
// them (a test that only needs a logger to exist, without noise in the runner's output).
import { Writable } from 'node:stream';
import { createLogger, type Logger, type LogLevel } from '../../src/lib/logger.js';

/** A logger at `level` whose output lines (JSON, one per entry) are kept in `lines`. */
export function capturingLogger(level: LogLevel = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

/** A logger at `level` that writes nowhere. */
export function quietLogger(level: LogLevel = 'info'): Logger {
  return createLogger({ level, destination: new Writable({ write: (_c, _e, cb) => cb() }) });
}
