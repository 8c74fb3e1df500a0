// Log lines are redacted after pino has serialised them: a secret holding characters JSON escapes must still go.
import { afterEach, describe, expect, it } from 'vitest';
import { redactor, REDACTED } from '../../src/lib/redact.js';
import { capturingLogger } from '../helpers/logger.js';

afterEach(() => redactor.set([]));

describe('redacting log lines', () => {
  it('removes a secret that holds a quote and a backslash, as it appears JSON-escaped in the line', () => {
    const secret = 'pa"ss\\w0rd-77';
    redactor.set([secret]);
    const { logger, lines } = capturingLogger();
    logger.error({ err: `upstream said: bad key ${secret}` }, `login failed for ${secret}`);
    const out = lines.join('');
    expect(out).toContain(REDACTED);
    expect(out).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(out).not.toContain(secret);
    // And the parsed line holds no trace of it either.
    const parsed = JSON.parse(out) as { msg: string; err: string };
    expect(parsed.msg).toBe(`login failed for ${REDACTED}`);
    expect(parsed.err).toBe(`upstream said: bad key ${REDACTED}`);
  });
});
