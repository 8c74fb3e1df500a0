// Every file in examples/ is a config `wedgewatch check` accepts, and each engine has one that watches it the way
// that engine is run: its health path, a serverinfo-like endpoint, its /metrics (or Ollama's /api/ps), its logs.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replayFiles } from '../../src/commands/replay-files.js';
import { parseConfigText } from '../../src/config/load.js';
import type { Config, LogPack } from '../../src/config/schema.js';
import { defaultPacks } from '../../src/config/log-engines.js';
import { runCli } from '../helpers/cli.js';

const DIR = 'examples';
const tmp = mkdtempSync(join(tmpdir(), 'ww-examples-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
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

  // Issue 40 item 5: a log source reads every pack its engine's deployment writes (the engine's default), but for
  // the KV backends a deployment may not run (Mooncake, NIXL, LMCache, SGLang's PD code): a Rust tokenizer's panic
  // in a vLLM log, a CUDA error in any engine's, are caught by the example as written.
  const OPTIONAL: readonly LogPack[] = ['mooncake', 'nixl', 'lmcache', 'sglang_disagg'];
  it.each(FILES)('%s: every log source reads every pack its engine writes', (file) => {
    const text = readFileSync(join(DIR, file), 'utf8');
    for (const src of load(file).targets.flatMap((t) => t.logs)) {
      const missing = defaultPacks(src.engine).filter((p) => !OPTIONAL.includes(p) && !src.packs.includes(p));
      expect(missing, `${file} ${src.service} (${src.engine})`).toEqual([]);
    }
    // The engine is said, not left to the default.
    expect(text.match(/^\s+engine: \w+/gm)?.length, file).toBe(
      load(file).targets.flatMap((t) => t.logs).length,
    );
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

  // The lines the llama.cpp and Ollama examples once needed user rules for are the built-in packs' now (issue 40):
  // read as the example's source reads them (its engine's packs, each line as the record it is), each is a critical
  // event, and the healthy lines around them raise nothing.
  it.each([
    ['llamacpp.yaml', 'native_ggml_abort', '/src/ggml-cpu/ops.cpp:4261: GGML_ASSERT(ne00 % 2 == 0) failed'],
    ['llamacpp.yaml', 'gpu_cuda_sticky_error', 'CUDA error: an illegal memory access was encountered'],
    [
      'ollama.yaml',
      'ollama_load_failed',
      'time=2026-03-01T10:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: signal: killed"',
    ],
  ])('%s catches %s on %j', (file, rule, line) => {
    const src = load(file).targets[0]!.logs[0]!;
    const healthy = [
      'srv  update_slots: all slots are idle',
      'main: server is listening on http://127.0.0.1:8080 - starting the main loop',
      'ggml_cuda_init: found 1 CUDA devices:',
      'time=2026-03-01T10:00:00.000Z level=INFO source=server.go:619 msg="llama runner started in 2.01 seconds"',
    ];
    const f = join(tmp, `${rule}.log`);
    writeFileSync(f, `${[...healthy, line, ...healthy].join('\n')}\n`);
    const r = replayFiles({ files: [f], packs: src.packs, format: 'auto', timeline: false });
    expect(r.events.map((e) => `${e.rule}/${e.severity}`)).toEqual([`${rule}/critical`]);
  });
});
