// `check` on a bearerTokenFile or tls.caFile that is a FIFO hung for good (open() waits for a writer), and on
// /dev/zero read until 8.8 GB (issue 24 #12). Each is refused now, by path, within a bounded run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tlsOptions } from '../../src/sources/probes/http.js';
import { MAX_TOKEN_FILE_BYTES, readSmallFile } from '../../src/lib/small-file.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-credfiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIFO = join(dir, 'token.fifo');
execFileSync('mkfifo', [FIFO]);
const BIG = join(dir, 'big.token');
writeFileSync(BIG, 'x'.repeat(MAX_TOKEN_FILE_BYTES + 1));
const DIR = join(dir, 'a-dir');
mkdirSync(DIR);
const GOOD_TOKEN = join(dir, 'good.token');
writeFileSync(GOOD_TOKEN, 'tok-1234abcd\n');

const endpoint = (name: string, extra: string) =>
  `      - { name: ${name}, url: "http://127.0.0.1:30001", ${extra} }\n`;

describe('credential files that are not small regular files', () => {
  it('check refuses each, naming the path, and exits at once', async () => {
    const cfg = join(dir, 'cfg.yaml');
    writeFileSync(
      cfg,
      `stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
${endpoint('fifo', `bearerTokenFile: ${FIFO}`)}${endpoint('zero', 'bearerTokenFile: /dev/zero')}${endpoint('big', `bearerTokenFile: ${BIG}`)}${endpoint('dir', `bearerTokenFile: ${DIR}`)}${endpoint('cafifo', `tls: { caFile: ${FIFO} }`)}${endpoint('cazero', 'tls: { caFile: /dev/zero }')}${endpoint('ok', `bearerTokenFile: ${GOOD_TOKEN}`)}    probes:
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }
`,
    );
    const r = await runCli(['check', '--config', cfg], { timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr;
    expect(lines).toMatch(
      /targets\[0\]\.endpoints\[0\]\.bearerTokenFile: \S+token\.fifo is not a regular file \(a FIFO\)/,
    );
    expect(lines).toMatch(
      /targets\[0\]\.endpoints\[1\]\.bearerTokenFile: \/dev\/zero is not a regular file \(a character device\)/,
    );
    expect(lines).toMatch(
      /targets\[0\]\.endpoints\[2\]\.bearerTokenFile: \S+big\.token is 65537 bytes; at most 65536 are read/,
    );
    expect(lines).toMatch(
      /targets\[0\]\.endpoints\[3\]\.bearerTokenFile: \S+a-dir is not a regular file \(a directory\)/,
    );
    expect(lines).toMatch(
      /targets\[0\]\.endpoints\[4\]\.tls\.caFile: \S+token\.fifo is not a regular file \(a FIFO\)/,
    );
    expect(lines).toMatch(/targets\[0\]\.endpoints\[5\]\.tls\.caFile: \/dev\/zero is not a regular file/);
    expect(lines).not.toMatch(/endpoints\[6\]/);
  });

  it('check refuses a config path that is a FIFO', async () => {
    const r = await runCli(['check', '--config', FIFO], { timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('config file is not a regular file (a FIFO)');
  });

  it('a CA file swapped for a FIFO after check is refused by the probe client too, not waited on', () => {
    const ep = { tls: { caFile: FIFO, insecureSkipVerify: false } } as Parameters<typeof tlsOptions>[0];
    expect(() => tlsOptions(ep)).toThrow(/is not a regular file \(a FIFO\)/);
  });

  it('reads a small regular file whole', () => {
    expect(readSmallFile(GOOD_TOKEN, 64).toString()).toBe('tok-1234abcd\n');
    expect(() => readSmallFile(GOOD_TOKEN, 4)).toThrow(/is 13 bytes; at most 4 are read/);
  });
});
