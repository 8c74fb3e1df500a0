// Every file in examples/ is a config `wedgewatch check` accepts, and each engine has one that watches it the way
// that engine is run: its health path, a serverinfo-like endpoint, its /metrics (or Ollama's /api/ps), its logs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { runCli } from '../helpers/cli.js';

const DIR = 'examples';
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

function load(file: string): Config {
  const path = join(DIR, file);
  return parseConfigText(readFileSync(path, 'utf8'), path, {}).config;
}

describe('examples/', () => {
  it('holds one file per engine besides the SGLang reference', () => {
    expect(FILES).toEqual([
      'dynamo.yaml',
      'llamacpp.yaml',
      'ollama.yaml',
      'tgi.yaml',
      'vllm.yaml',
      'wedgewatch.yaml',
    ]);
  });

  it.each(FILES)('wedgewatch check accepts %s', async (file) => {
    const r = await runCli(['check', '--config', join(DIR, file)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${DIR}/${file.replace('.', '\\.')}: OK \\(1 target\\(s\\)`));
  });

  // Per engine: the health path, the serverinfo-like path, the metrics URL's path (format), and a log source.
  const ENGINES: Record<string, { health: string; info: string; metrics: string; format?: string }> = {
    'vllm.yaml': { health: '/health', info: '/load', metrics: '/metrics' },
    'llamacpp.yaml': { health: '/health', info: '/slots', metrics: '/metrics' },
    'tgi.yaml': { health: '/health', info: '/info', metrics: '/metrics' },
    'dynamo.yaml': { health: '/live', info: '/health', metrics: '/metrics' },
    'ollama.yaml': { health: '/', info: '/api/ps', metrics: '/api/ps', format: 'ollama' },
    'wedgewatch.yaml': { health: '/health', info: '/get_server_info', metrics: '/metrics' },
  };

  it.each(Object.keys(ENGINES))('%s watches the engine through its own endpoints', (file) => {
    const want = ENGINES[file]!;
    const t = load(file).targets[0]!;
    const path = (kind: string) => t.probes.flatMap((p) => (p.kind === kind && 'path' in p ? [p.path] : []));
    expect(path('health')).toContain(want.health);
    expect(path('serverinfo')).toContain(want.info);
    expect(t.engines.map((e) => new URL(e.metrics).pathname)).toContain(want.metrics);
    expect(t.engines[0]!.format).toBe(want.format ?? 'prometheus');
    expect(t.logs.length).toBeGreaterThan(0);
    // Answers are checked on every engine, not only that tokens arrive.
    expect(t.probes.map((p) => p.kind)).toEqual(expect.arrayContaining(['chat', 'toolcall']));
    if (file !== 'wedgewatch.yaml') expect(t.probes.map((p) => p.kind)).toContain('canary');
  });

  // The user rules shipped in the examples match the lines as the engines print them (quoted in the files).
  it.each([
    [
      'llamacpp.yaml',
      'llamacpp_ggml_assert',
      '/src/ggml-cpu/ops.cpp:4261: GGML_ASSERT(ne00 % 2 == 0) failed',
    ],
    ['llamacpp.yaml', 'llamacpp_gpu_error', 'CUDA error: out of memory'],
    [
      'ollama.yaml',
      'ollama_runner_terminated',
      'time=2026-03-01T10:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: signal: killed"',
    ],
  ])('%s rule %s matches %j', (file, rule, line) => {
    const r = load(file).rules.find((x) => x.name === rule)!;
    const m = new RegExp(r.match).exec(line);
    expect(m).not.toBeNull();
    expect(r.severity).toBe('critical');
  });

  it('a rule does not fire on the lines around it', () => {
    const rules = [...load('llamacpp.yaml').rules, ...load('ollama.yaml').rules];
    for (const line of [
      'srv  update_slots: all slots are idle',
      'main: server is listening on http://127.0.0.1:8080 - starting the main loop',
      'ggml_cuda_init: found 1 CUDA devices:',
      'time=2026-03-01T10:00:00.000Z level=INFO source=server.go:619 msg="llama runner started in 2.01 seconds"',
    ]) {
      expect(rules.filter((r) => new RegExp(r.match).test(line)).map((r) => r.name)).toEqual([]);
    }
  });
});
