// Issue 37 item 3: the message of a structured record is the logger's own field. A record naming two message keys,
// or one twice, opens no rule and is counted (wedgewatch_log_decode_errors_total of its format); a JSON message inside
// a logger's record (a request body it logged) is data, not a record of its own. Issue 40 item 3: the formats as the
// engines write them — vLLM's process prefix in front of a JSON record (in Docker's and CRI's wrappers too), Go slog
// text and JSON, Rust tracing JSON — are read by `auto` and by `json`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatMetrics, replayFiles } from '../../src/commands/replay-files.js';
import { LOG_PACKS } from '../../src/config/schema.js';
import type { LogFormat } from '../../src/config/schema.js';
import { decodeStructured, duplicateKey } from '../../src/sources/logs/formats/structured.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-msgkey-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function replay(lines: string[], format: LogFormat = 'auto') {
  const file = join(dir, `engine-${n++}.log`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return replayFiles({ files: [file], packs: [...LOG_PACKS], format, timeline: false });
}
const decodeErrors = async (r: ReturnType<typeof replay>) =>
  Number(/wedgewatch_log_decode_errors_total\{[^}]*\} (\d+)/.exec(await formatMetrics(r.registry))?.[1] ?? 0);

// A death line each pack reads as a critical event when it is a record's message.
const FATAL = 'EngineCore encountered a fatal error.';
const healthy = (i: number) =>
  `time=2026-08-10T14:00:0${i}.000Z level=INFO source=routes.go:1 msg="[GIN] 200 | POST /api/chat" latency=${i}ms`;

describe('the five shapes of issue 37 item 3: no event, and the ambiguous ones counted', () => {
  const shapes: [label: string, line: string, counted: boolean][] = [
    [
      "slog text: a user attribute `message` beside slog's `msg`",
      `time=2026-08-10T14:00:05.000Z level=INFO source=routes.go:88 msg="chat request" message="${FATAL}"`,
      true,
    ],
    [
      'slog JSON: a user attribute `message` beside `msg`',
      JSON.stringify({ time: '2026-08-10T14:00:05Z', level: 'INFO', msg: 'chat request', message: FATAL }),
      true,
    ],
    [
      "structlog: a user attribute `message` beside structlog's `event`",
      JSON.stringify({
        event: 'request received',
        level: 'info',
        message: FATAL,
        timestamp: '2026-08-10T14:00:05Z',
      }),
      true,
    ],
    [
      'a duplicated `msg` (logfmt, then JSON): the later one is the attribute',
      `time=2026-08-10T14:00:05.000Z level=INFO msg="chat request" msg="${FATAL}"`,
      true,
    ],
    [
      'a logged request body that is JSON with a `message` key',
      JSON.stringify({
        time: '2026-08-10T14:00:05Z',
        level: 'INFO',
        msg: JSON.stringify({ message: FATAL, model: 'x' }),
      }),
      false,
    ],
  ];

  for (const [label, line, counted] of shapes) {
    it(`${label}: no event${counted ? ', one decode error' : ''}`, async () => {
      const r = replay([healthy(1), line, healthy(2)]);
      expect(r.events.map((e) => e.rule)).toEqual([]);
      expect(await decodeErrors(r)).toBe(counted ? 1 : 0);
    });
  }

  it('a JSON record with `msg` twice is ambiguous too (JSON.parse would keep the attribute)', async () => {
    const line = `{"time":"2026-08-10T14:00:05Z","level":"INFO","msg":"chat request","msg":"${FATAL}"}`;
    expect(duplicateKey(line, ['msg'])).toBe(true);
    const r = replay([line], 'json');
    expect(r.events).toEqual([]);
    expect(await decodeErrors(r)).toBe(1);
  });

  it("the logger's own field alone still raises the event (the shapes' death is live)", () => {
    const lines = [
      `time=2026-08-10T14:00:05.000Z level=ERROR source=core.go:1 msg="${FATAL}" error="boom"`,
      JSON.stringify({ time: '2026-08-10T14:00:05Z', level: 'ERROR', msg: FATAL, user: 'message' }),
      JSON.stringify({ event: FATAL, level: 'error', timestamp: '2026-08-10T14:00:05Z' }),
    ];
    for (const line of lines)
      expect(
        replay([line]).events.map((e) => e.rule),
        line,
      ).toEqual(['vllm_engine_core_fatal']);
  });

  it('a wrapper without a level around a JSON logger record is still unfolded (a shipper, not a logger)', () => {
    const inner = JSON.stringify({ time: '2026-08-10T14:00:05Z', levelname: 'ERROR', message: FATAL });
    expect(replay([JSON.stringify({ msg: inner, stream: 'stderr' })]).events.map((e) => e.rule)).toEqual([
      'vllm_engine_core_fatal',
    ]);
  });
});

describe('formats as the engines write them', () => {
  const record = {
    asctime: '2026-08-10 14:00:05,120',
    levelname: 'ERROR',
    name: 'vllm.v1.engine.core',
    message: FATAL,
    exc_info:
      'Traceback (most recent call last):\n  File "/vllm/v1/engine/core.py", line 701, in run_engine_core\n    engine_core.run_busy_loop()\ntorch.AcceleratorError: CUDA error: an illegal memory access was encountered',
  };
  // vllm/utils decorate_logs prefixes every line of the process's output, the JSON logging config's record included.
  const prefixed = `(EngineCore_DP0 pid=413) ${JSON.stringify(record)}`;

  it("vLLM's process prefix in front of a JSON record: the death, its cause, the process key (auto and json)", () => {
    for (const format of ['auto', 'json'] as const) {
      const r = replay([prefixed], format);
      const death = r.events.find((e) => e.rule === 'vllm_engine_core_fatal');
      expect(death, format).toBeDefined();
      expect(death!.fields).toMatchObject({ exception: 'torch.AcceleratorError' });
      expect(death!.incident?.members[0]?.process).toBe('EngineCore_DP0 pid=413');
    }
    const rec = decodeStructured(prefixed, 'auto');
    expect(rec?.lines[0]).toBe(`(EngineCore_DP0 pid=413) ${FATAL}`);
  });

  it('the same inside Docker json-file and CRI wrappers, and behind a compose prefix', () => {
    const docker = JSON.stringify({
      log: `${prefixed}\n`,
      stream: 'stderr',
      time: '2026-08-10T14:00:05.120Z',
    });
    const cri = `2026-08-10T14:00:05.120000000Z stderr F ${prefixed}`;
    for (const line of [docker, cri, `vllm-1  | ${prefixed}`]) {
      expect(
        replay([line]).events.map((e) => e.rule),
        line.slice(0, 40),
      ).toContain('vllm_engine_core_fatal');
    }
  });

  it('Go slog text (Ollama) and JSON (Envoy AI Gateway), Rust tracing JSON (TGI --json-output, smg flattened)', () => {
    expect(
      replay([
        'time=2026-08-21T18:48:22.123-07:00 level=ERROR source=llama_server.go:1023 msg="llama-server terminated" error="exit status 2"',
      ]).events.map((e) => e.rule),
    ).toEqual(['ollama_runner_terminated']);
    expect(
      replay([
        JSON.stringify({
          timestamp: '2026-01-08T15:02:49.223Z',
          level: 'ERROR',
          fields: { message: 'Shard 0 crashed' },
          target: 'text_generation_launcher',
        }),
      ]).events.map((e) => e.rule),
    ).toEqual(['tgi_shard_crashed']);
    expect(
      replay([
        JSON.stringify({
          timestamp: '2026-08-10 14:00:01',
          level: 'ERROR',
          message:
            'Failed to select PD pair error=No available decode workers (all circuits open or unhealthy)',
          target: 'smg::routers::http::pd_router',
          filename: 'model_gateway/src/routers/http/pd_router.rs',
          line_number: 176,
        }),
      ]).events.map((e) => e.rule),
    ).toEqual(['gateway_smg_no_workers']);
    // The runtime's own panic goes to stderr raw, between the records: read as a line, its message the cause.
    const panic = replay([
      healthy(1),
      'panic: runtime error: invalid memory address or nil pointer dereference',
      '[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]',
      '',
      'goroutine 88 [running]:',
      healthy(2),
    ]).events;
    expect(panic.map((e) => e.rule)).toEqual(['go_panic']);
    expect(panic[0]!.incident?.rootCause).toMatchObject({
      exception: 'panic',
      message: 'runtime error: invalid memory address or nil pointer dereference',
    });
  });
});
