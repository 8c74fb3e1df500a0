// Every config field that names a word of the vocabulary (src/core/vocabulary.ts) rejects one it does not
// have, naming the path: `incidents.on: [wegded, kv_bootstrap_dead]` passed `check` with exit 0 and that capture
// never fired (the diagnosis is kv_bootstrap_thread_dead; kv_bootstrap_dead is a log class).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { ConfigError, parseConfigText } from '../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-vocab-'));

const GOOD = `
stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
      - { name: router, url: "http://127.0.0.1:30001" }
    probes:
      - { name: chat, kind: chat, every: 15s, timeout: 30s }
rules:
  - { name: mine, severity: warning, class: oom, match: oops }
incidents:
  on: [wedged, keepalive_only, "hop:router", "log:mine"]
`;

function problems(yaml: string): string[] {
  try {
    parseConfigText(yaml, join(dir, 'c.yaml'), {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const CASES: { name: string; yaml: string; expect: RegExp }[] = [
  {
    name: 'incidents.on: a misspelt state',
    yaml: GOOD.replace('on: [wedged,', 'on: [wegded,'),
    expect: /^incidents\.on\[0\]: not a state or diagnosis: "wegded"/,
  },
  {
    name: 'incidents.on: a log class where a diagnosis belongs',
    yaml: GOOD.replace('keepalive_only', 'kv_bootstrap_dead'),
    expect: /^incidents\.on\[1\]: not a state or diagnosis: "kv_bootstrap_dead"/,
  },
  {
    name: 'incidents.on: a template prefix with no name',
    yaml: GOOD.replace('"hop:router"', '"hop:"'),
    expect: /^incidents\.on\[2\]: not a state or diagnosis: "hop:"/,
  },
  {
    name: 'rules[].class: a class the vocabulary lacks',
    yaml: GOOD.replace('class: oom', 'class: out_of_memory'),
    expect: /^rules\[0\]\.class: not a log event class: "out_of_memory"/,
  },
  {
    name: 'probes[].kind: an unknown probe kind',
    yaml: GOOD.replace('kind: chat', 'kind: chatt'),
    expect:
      /^targets\[0\]\.probes\[0\](\.kind)?: must be one of chat, toolcall, health, serverinfo, canary, structured, longinput, conversation, got "chatt"/,
  },
  {
    name: 'probes[].conn: an unknown connection kind',
    yaml: GOOD.replace('timeout: 30s }', 'timeout: 30s, conn: [fresh, keep-alive] }'),
    expect: /^targets\[0\]\.probes\[0\]\.conn\[1\]: /,
  },
];

describe('config fields that name the vocabulary', () => {
  it('accepts states, named and template diagnoses, and declared classes', () => {
    expect(problems(GOOD)).toEqual([]);
  });

  it.each(CASES)('$name: rejected at its path', ({ yaml, expect: re }) => {
    const got = problems(yaml);
    expect(
      got.some((p) => re.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('wedgewatch check exits 2 on the issue example, naming both entries', async () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, GOOD.replace('on: [wedged, keepalive_only,', 'on: [wegded, kv_bootstrap_dead,'));
    const res = await runCli(['check', '--config', file]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/incidents\.on\[0\]: not a state or diagnosis: "wegded"/);
    expect(res.stderr).toMatch(/incidents\.on\[1\]: not a state or diagnosis: "kv_bootstrap_dead"/);
  });
});
