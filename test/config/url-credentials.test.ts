// `http://user:pass@host` passed `check`, was never sent, and the password showed in /probe?debug=true
// (issue 24 #11). Refused now, naming the field, without quoting the password; the redactor masks one that
// reaches text some other way (an engine's error quoting its own URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/load.js';
import { REDACTED, Redactor } from '../../src/lib/redact.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-urlcreds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'hunter2-Qx81';

function problems(yaml: string): string[] {
  try {
    parseConfigText(yaml, join(dir, 'x.yaml'), {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('credentials in a URL', () => {
  it('are refused in an endpoint and an engine scrape URL, and the password is not echoed', () => {
    const p = problems(`stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
      - { name: router, url: "http://admin:${PASSWORD}@127.0.0.1:30001" }
      - { name: user-only, url: "https://admin@127.0.0.1:30002" }
      - { name: broken, url: "http://admin:${PASSWORD}@" }
    engines:
      - { service: prefill, metrics: "http://admin:${PASSWORD}@127.0.0.1:30000/metrics" }
    probes:
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }
`);
    expect(p).toContain(
      'targets[0].endpoints[0].url: must not carry credentials (user:password@ is never sent, and would show wherever the URL does); give them as bearerToken, bearerTokenFile or headers: { Authorization: "Basic <base64>" }',
    );
    expect(p.some((x) => x.startsWith('targets[0].endpoints[1].url: must not carry credentials'))).toBe(true);
    // Not a URL at all: the "got" quote masks the password.
    expect(p).toContain(
      `targets[0].endpoints[2].url: expected an http(s) URL like "http://127.0.0.1:30001", got "http://admin:<secret>@"`,
    );
    expect(p.some((x) => x.startsWith('targets[0].engines[0].metrics: must not carry credentials'))).toBe(
      true,
    );
    expect(p.join('\n')).not.toContain(PASSWORD);
  });

  it('a URL password in text is redacted; URLs without one are left alone', () => {
    const r = new Redactor();
    expect(r.redact(`GET http://admin:${PASSWORD}@10.0.0.1/health failed`)).toBe(
      `GET http://admin:${REDACTED}@10.0.0.1/health failed`,
    );
    for (const plain of [
      'http://127.0.0.1:30001/v1/chat/completions',
      'see https://user@example.invalid/x',
      'ratio 3:1 http://host:8080/a@b',
    ]) {
      expect(r.redact(plain)).toBe(plain);
    }
  });
});
