import { Command, Option } from 'commander';
import { parseDurationArg, parseFaultArg, parsePortBase } from '../sim/cli-args.js';
import { faultHelp } from '../sim/faults/help.js';
import { startSim, type FaultName, type FaultParams, type Sim, type SimEvent } from '../sim/index.js';
import { startVllmSim, type VllmSim } from '../sim/vllm/index.js';
import { EXIT } from './common.js';

/** One line per simulator event, relative to `t0`. */
export function formatSimEvent(ev: SimEvent, t0: number): string {
  return `[+${((ev.at - t0) / 1000).toFixed(1).padStart(6)}s] ${ev.service.padEnd(7)} ${ev.message}`;
}

export function describeSim(sim: Sim | VllmSim): string {
  const rows = Object.entries(sim.urls).map(([k, v]) => `  ${k.padEnd(8)} ${v}`);
  const workers =
    'workersProblem' in sim && sim.workersProblem !== undefined
      ? [`  ${'workers'.padEnd(8)} ${sim.workersProblem}`]
      : [];
  return [...rows, `  ${'logs'.padEnd(8)} ${sim.logDir}`, ...workers].join('\n');
}

export function parseJitter(sd: string, seed: string | undefined): { sd: number; seed?: number } {
  const n = Number(sd);
  if (sd.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new Error(`--jitter: expected a number from 0 to 1 (e.g. 0.05), got ${JSON.stringify(sd)}`);
  if (seed !== undefined && !/^\d+$/.test(seed))
    throw new Error(`--jitter-seed: expected a non-negative integer, got ${JSON.stringify(seed)}`);
  return { sd: n, ...(seed !== undefined ? { seed: Number(seed) } : {}) };
}

export function simCommand(): Command {
  return new Command('sim')
    .description(
      'run a simulated SGLang prefill/decode deployment (or, with --engine vllm, a vLLM V1 API server) with fault injection (and its control API)',
    )
    .addOption(
      new Option(
        '--engine <engine>',
        'sglang: a PD deployment (router, prefill, decode); vllm: one vLLM V1 OpenAI-compatible API server',
      )
        .choices(['sglang', 'vllm'])
        .default('sglang'),
    )
    .option('--proxy', 'add a keep-alive reverse proxy hop in front of the router', false)
    .option(
      '--close-after-stream',
      'close the connection after each streamed response, as llama-server does (--engine vllm)',
      false,
    )
    .option(
      '--tokens-at-request-end',
      "count generated tokens only when a request ends, as llama.cpp's tokens_predicted_total (--engine vllm)",
      false,
    )
    .addOption(
      new Option('--fault <name[:k=v,...]>', 'enable a fault at start (repeatable)')
        .argParser((v: string, prev: string[] = []) => [...prev, v])
        .default([]),
    )
    .option('--log-dir <dir>', 'where prefill.log, decode.log and router.log go (default: a fresh temp dir)')
    .option(
      '--port-base <n>',
      'router (vLLM: server) N, prefill N+1, decode N+2, proxy N+3, control N+4 (default: ephemeral)',
    )
    .addOption(
      new Option(
        '--sglang-format <dialect>',
        'SGLang build whose log lines and metric names the engines print: current (main 2026-08) or legacy (mid-2025)',
      )
        .choices(['current', 'legacy'])
        .default('current'),
    )
    .option(
      '--jitter <sd>',
      'per-step timing noise: sd of the log step time, per step and drifting over ~1 s (0.05 ≈ 5 % run-to-run spread; SGLang simulator)',
      '0',
    )
    .option('--jitter-seed <n>', 'seed for --jitter, to replay a run (default: from the clock)')
    .option('--waiting-timeout <duration>', 'SGLANG_DISAGGREGATION_WAITING_TIMEOUT analogue', '300s')
    .option('--bootstrap-timeout <duration>', 'SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT analogue', '300s')
    .addHelpText(
      'after',
      () =>
        `\n${faultHelp()}\n\nExamples:\n  wedgewatch sim --proxy --fault slow:factor=4 --log-dir /tmp/sim\n  wedgewatch sim --engine vllm --fault shm_broadcast_hang:interval=5\n`,
    )
    .action(async (opts: Record<string, unknown>) => {
      let faults: { name: FaultName; params: FaultParams }[];
      let ports: Record<string, number> | undefined;
      let waitingTimeoutMs: number;
      let bootstrapTimeoutMs: number;
      let jitter: { sd: number; seed?: number };
      try {
        jitter = parseJitter(opts.jitter as string, opts.jitterSeed as string | undefined);
        faults = (opts.fault as string[]).map(parseFaultArg);
        if (opts.portBase !== undefined) {
          const b = parsePortBase(opts.portBase as string);
          ports = { router: b, prefill: b + 1, decode: b + 2, proxy: b + 3, control: b + 4 };
        }
        waitingTimeoutMs = parseDurationArg(opts.waitingTimeout as string, '--waiting-timeout');
        bootstrapTimeoutMs = parseDurationArg(opts.bootstrapTimeout as string, '--bootstrap-timeout');
      } catch (err) {
        process.stderr.write(`wedgewatch sim: ${(err as Error).message}\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const vllm = opts.engine === 'vllm';
      if (!vllm && (opts.closeAfterStream === true || opts.tokensAtRequestEnd === true)) {
        process.stderr.write(
          'wedgewatch sim: --close-after-stream and --tokens-at-request-end are for --engine vllm\n',
        );
        process.exitCode = EXIT.usage;
        return;
      }
      if (vllm && opts.proxy === true) {
        process.stderr.write('wedgewatch sim: --proxy is for the SGLang deployment (not --engine vllm)\n');
        process.exitCode = EXIT.usage;
        return;
      }
      let sim: Sim | VllmSim;
      try {
        sim = vllm
          ? await startVllmSim({
              faults,
              logDir: opts.logDir as string | undefined,
              ports: ports && { server: ports.router!, control: ports.control! },
              closeAfterStream: opts.closeAfterStream === true,
              ...(opts.tokensAtRequestEnd === true ? { engine: { tokensAtRequestEnd: true } } : {}),
            })
          : await startSim({
              proxy: opts.proxy === true,
              faults,
              logDir: opts.logDir as string | undefined,
              ports,
              waitingTimeoutMs,
              bootstrapTimeoutMs,
              sglangFormat: opts.sglangFormat as 'current' | 'legacy',
              jitter,
            });
      } catch (err) {
        // Bad fault params, a port in use: one line, no stack trace.
        process.stderr.write(`wedgewatch sim: cannot start: ${(err as Error).message}\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const t0 = Date.now();
      process.stdout.write(
        `wedgewatch sim: simulated ${vllm ? 'vLLM V1 API server' : 'SGLang PD deployment'} (Ctrl-C to stop)\n${describeSim(sim)}\n`,
      );
      process.stdout.write(
        `  control: GET /faults, POST|DELETE /faults/NAME, POST /services/NAME/restart, GET /state\n`,
      );
      sim.onEvent((ev) => process.stdout.write(formatSimEvent(ev, t0) + '\n'));
      await new Promise<void>((resolve) => {
        const onStop = () => {
          process.off('SIGINT', onStop);
          process.off('SIGTERM', onStop);
          resolve();
        };
        process.on('SIGINT', onStop);
        process.on('SIGTERM', onStop);
      });
      await sim.stop();
      process.exitCode = EXIT.ok;
    });
}
