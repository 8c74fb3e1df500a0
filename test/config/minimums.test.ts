// `check` accepted a completion probe `timeout: 1ms` (every run an abort on the engine) and a 1 ms engine
// scrape interval (issue 24 #15). Each such value is refused, by path, with the minimum in the message.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-minimums-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (probes: string, extra = '') => `stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
      - { name: router, url: "http://127.0.0.1:30001" }
    probes:
${probes}
${extra}`;

function problems(yaml: string): string[] {
  try {
    parseConfigText(yaml, join(dir, 'x.yaml'), {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('minimum durations', () => {
  it('refuses the issue case: a 1ms completion timeout and a 1ms scrape interval', () => {
    const p = problems(
      config(
        '      - { name: chat, kind: chat, every: 15s, timeout: 1ms }',
        `    engines:
      - { service: prefill, metrics: "http://127.0.0.1:30000/metrics", every: 1ms, timeout: 1ms }`,
      ),
    );
    expect(p).toContain(
      'targets[0].probes[0].timeout: must be at least 1s for a chat probe (a shorter one aborts a completion on the engine every run)',
    );
    expect(p).toContain('targets[0].engines[0].every: must be at least 1s');
    expect(p).toContain('targets[0].engines[0].timeout: must be at least 100ms');
  });

  it('holds every completion kind to 1s and a GET probe to 100ms', () => {
    const p = problems(
      config(
        [
          '      - { name: a, kind: toolcall, every: 15s, timeout: 999ms }',
          '      - { name: b, kind: canary, every: 15s, timeout: 500ms }',
          '      - { name: c, kind: structured, every: 15s, timeout: 10ms, schema: { type: object } }',
          '      - { name: d, kind: health, every: 15s, timeout: 99ms, path: /health }',
          '      - { name: e, kind: serverinfo, every: 15s, timeout: 100ms, path: /get_server_info }',
          '      - { name: f, kind: chat, every: 15s, timeout: 1s, onDemandInterval: 10ms }',
        ].join('\n'),
        '    detect: { confirmInterval: 1ms }\n',
      ),
    );
    expect(
      p.filter((x) => /\.timeout: must be at least 1s for a/.test(x)).map((x) => x.slice(0, 20)),
    ).toEqual(['targets[0].probes[0]', 'targets[0].probes[1]', 'targets[0].probes[2]']);
    expect(p).toContain('targets[0].probes[3].timeout: must be at least 100ms for a health probe');
    expect(p.some((x) => x.startsWith('targets[0].probes[4]'))).toBe(false);
    expect(p).toContain(
      'targets[0].probes[5].onDemandInterval: must be at least 1s (each on-demand run is a completion on the engine)',
    );
    expect(p).toContain('targets[0].detect.confirmInterval: must be at least 1s');
  });

  it('accepts the minimums themselves', () => {
    expect(
      problems(
        config(
          [
            '      - { name: chat, kind: chat, every: 1s, timeout: 1s, onDemandInterval: 1s }',
            '      - { name: h, kind: health, every: 1s, timeout: 100ms, path: /health }',
          ].join('\n'),
          `    engines:
      - { service: prefill, metrics: "http://127.0.0.1:30000/metrics", every: 1s, timeout: 100ms }
    detect: { confirmInterval: 1s }
`,
        ),
      ),
    ).toEqual([]);
  });
});
