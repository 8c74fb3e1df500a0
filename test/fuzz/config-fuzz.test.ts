// 1,000 seeded random mutations of a valid config through `check` (parseConfigText) and through a running
// daemon's reload: each must give a valid load or a ConfigError whose problems name a field path, and the
// daemon must keep serving with its last good configuration.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText, type LoadedConfig } from '../../src/config/load.js';
import { restartOnlyChanges } from '../../src/config/reload-limits.js';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from '../web/helpers.js';
import { mulberry32, mutateText, mutateTree } from './mutate.js';

const CASES = 1000;
const SEED = 0x5eed_0009;
const dir = tempDir('ww-fuzz-');
const env = { WW_FUZZ_SET: 'fuzz-secret-value' };

function baseConfig() {
  return {
    web: { listenAddress: '127.0.0.1:0', enableLifecycle: true },
    stateDir: join(dir, 'state'),
    targets: [
      {
        name: 'pd',
        model: 'm',
        endpoints: [
          {
            name: 'proxy',
            url: 'http://127.0.0.1:9',
            bearerToken: '${WW_FUZZ_SET}',
            headers: { 'X-Team': 'serving' },
          },
          { name: 'router', url: 'http://127.0.0.1:9/v1' },
        ],
        probes: [
          {
            name: 'chat',
            kind: 'chat',
            every: '1h',
            jitter: 0.1,
            timeout: '5s',
            maxTokens: 8,
            conn: ['fresh', 'keepalive'],
          },
          {
            name: 'health',
            kind: 'health',
            every: '1h',
            timeout: '2s',
            path: '/health',
            endpoints: ['router'],
          },
          {
            name: 'info',
            kind: 'serverinfo',
            cron: '0 0 * * *',
            path: '/get_server_info',
            endpoints: ['router'],
          },
        ],
        logs: [
          {
            service: 'prefill',
            path: join(dir, 'logs', 'prefill.log'),
            packs: ['sglang', 'nixl'],
            from: 'end',
          },
        ],
        engines: [{ service: 'decode', metrics: 'http://127.0.0.1:9/metrics', every: '1h' }],
        detect: { wedgeAfter: 2, recoverAfter: 2, stallAfter: '60s' },
        remediate: { command: ['true'], dryRun: true, after: '2m', cooldown: '15m', maxPerHour: 2 },
        watch: [join(dir, 'serve.sh')],
      },
    ],
    rules: [
      { name: 'user_alert', severity: 'warning', match: 'alert\\((?<n>\\d+)\\)', services: ['prefill'] },
    ],
  };
}

/** A problem names where it is: a field path, `(top level)`, or the YAML parser. */
const PATH_PREFIXED =
  /^(YAML: |\(top level\): |(web|stateDir|targets|rules)(\[\d+\]|\.[^\s.[\]:]+)*: |.+: unknown key$)/s;

interface Case {
  text: string;
  ops: string[];
}

function makeCases(): Case[] {
  const rng = mulberry32(SEED);
  const cases: Case[] = [];
  for (let i = 0; i < CASES; i++) {
    const tree = baseConfig();
    const ops: string[] = [];
    const n = 1 + Math.floor(rng() * 3);
    for (let k = 0; k < n; k++)
      ops.push(mutateTree(rng, tree as unknown as Parameters<typeof mutateTree>[1]));
    let text = YAML.stringify(tree);
    if (rng() < 0.2) {
      text = mutateText(rng, text);
      ops.push('text');
    }
    cases.push({ text, ops });
  }
  return cases;
}

type Verdict = { ok: true; loaded: LoadedConfig } | { ok: false; problems: string[] };

function check(text: string, file: string): Verdict {
  try {
    return { ok: true, loaded: parseConfigText(text, file, env) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw new Error(`not a ConfigError: ${String(err)}`, { cause: err });
    return { ok: false, problems: err.problems };
  }
}

function loopbackOnly(loaded: LoadedConfig): boolean {
  return loaded.config.targets.every(
    (t) =>
      t.endpoints.every((e) => new URL(e.url).hostname === '127.0.0.1') &&
      t.engines.every((e) => new URL(e.metrics).hostname === '127.0.0.1'),
  );
}

const cases = makeCases();
const cwd = process.cwd();

beforeAll(() => {
  // A mutated relative stateDir or log path must land in the temp dir, never in the repository.
  process.chdir(dir);
});
afterAll(() => {
  process.chdir(cwd);
});

describe('config fuzz', () => {
  it('the base config is valid and the mutations are deterministic', () => {
    expect(check(YAML.stringify(baseConfig()), 'base.yaml').ok).toBe(true);
    expect(makeCases().map((c) => c.text)).toEqual(cases.map((c) => c.text));
  });

  it(`check: ${CASES} mutations give a valid load or a ConfigError with path-prefixed problems`, () => {
    let valid = 0;
    for (const [i, c] of cases.entries()) {
      const v = check(c.text, `case-${i}.yaml`);
      if (v.ok) {
        valid++;
        expect(v.loaded.config.targets.length, `case ${i}`).toBeGreaterThan(0);
        continue;
      }
      expect(v.problems.length, `case ${i} (${c.ops.join(', ')})`).toBeGreaterThan(0);
      for (const p of v.problems)
        expect(p, `case ${i} (${c.ops.join(', ')}):\n${c.text}`).toMatch(PATH_PREFIXED);
      // The secret from the environment never shows in a problem.
      expect(v.problems.join('\n')).not.toContain(env.WW_FUZZ_SET);
    }
    console.log(`config fuzz (check): ${valid} valid, ${CASES - valid} rejected with path-prefixed problems`);
    // Both outcomes are exercised, or the fuzzing is not testing anything.
    expect(valid).toBeGreaterThan(CASES * 0.05);
    expect(CASES - valid).toBeGreaterThan(CASES * 0.3);
  });

  // A fixed amount of work (1000 reloads of a real daemon): its time is the machine's, so the deadline is generous
  // (60 s was crossed at a load of 20), never a bound on speed.
  it(
    `reload: ${CASES} mutations never crash the daemon; a bad one keeps the running config`,
    { timeout: 300_000 },
    async () => {
      const file = join(dir, 'live.yaml');
      writeFileSync(file, YAML.stringify(baseConfig()));
      const { logger, lines } = capturingLogger();
      const d = new Daemon({ configPath: file, logger, env, plugins: routePlugins });
      await d.start();
      const base = `http://${d.address()}`;
      let applied = 0;
      let rejected = 0;
      let skipped = 0;
      let refused = 0;
      try {
        for (const [i, c] of cases.entries()) {
          const expected = check(c.text, file);
          if (expected.ok && !loopbackOnly(expected.loaded)) {
            skipped++; // never send a probe anywhere but 127.0.0.1
            continue;
          }
          writeFileSync(file, c.text);
          const before = d.loaded;
          const out = await d.reload();
          // A valid file that moves the listener or the state directory is refused whole (restart-only changes).
          const restartOnly = expected.ok ? restartOnlyChanges(before.config, expected.loaded.config) : [];
          if (expected.ok && restartOnly.length > 0) {
            expect(out, `case ${i}`).toEqual({ ok: false, errors: restartOnly });
            expect(d.loaded, `case ${i}: a restart-only change must keep the running config`).toBe(before);
            refused++;
          } else if (expected.ok) {
            expect(out, `case ${i} (${c.ops.join(', ')}) passed check but failed reload:\n${c.text}`).toEqual(
              {
                ok: true,
                errors: [],
              },
            );
            expect(d.loaded).not.toBe(before);
            applied++;
          } else {
            expect(out.ok, `case ${i}`).toBe(false);
            expect(out.errors).toEqual(expected.problems);
            expect(d.loaded, `case ${i}: a bad config must keep the running one`).toBe(before);
            rejected++;
          }
        }
        const healthy = await request(`${base}/-/healthy`);
        expect(healthy.statusCode).toBe(200);
        await healthy.body.dump();
        writeFileSync(file, YAML.stringify(baseConfig()));
        expect((await d.reload()).ok).toBe(true);
      } finally {
        await d.stop();
      }
      console.log(
        `config fuzz (reload): ${applied} applied, ${rejected} rejected (running config kept), ${refused} refused as restart-only (listenAddress/stateDir), ${skipped} skipped (non-loopback)`,
      );
      expect(skipped).toBeLessThan(CASES * 0.02);
      expect(lines.filter((l) => l.includes(env.WW_FUZZ_SET))).toEqual([]);
    },
  );
});
