// GPUs and collectives from fixtures built from their upstream formats (issue 42), each also against hostile input
// (huge, malformed, slow):
// - test/fixtures/node/dcgm-exporter.txt: two H100s as NVIDIA/dcgm-exporter @ d5e5f510a1b6b393f39a43293ccd9dc985defc79
//   renders them (internal/pkg/rendermetrics/render_metrics.go gpuMetricsFormat) with the families of
//   etc/default-counters.csv; GPU 1's DCGM_FI_DEV_XID_ERRORS reads 79.
// - test/fixtures/node/nvidia-smi.csv: `nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits` rows, with
//   the `[N/A]` a GPU without the field prints.
// - test/fixtures/node/nccl-ras-status.json: NCCL's JSON STATUS as NVIDIA/nccl @ 5067397c2676d5aed50042fc39e5c8ee96eb0027
//   src/ras/client_support.cc (jsonWriteHeader … jsonWriteFooter) writes it, shaped on the sample in
//   docs/userguide/source/troubleshooting/ras.rst: rank 1 missing and considered dead, ranks 0 and 2 one AllReduce apart.
// The fake RAS server speaks the protocol of src/ras/client_support.cc (one command per line, `SERVER PROTOCOL 2`,
// `OK`, `ERROR: …`); every server binds 127.0.0.1 and is closed by the test.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttp, type Server } from 'node:http';
import { createServer as createTcp, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeSchema } from '../../src/config/node-schema.js';
import type { NodeSignal } from '../../src/core/node-signals.js';
import { runCommand } from '../../src/lib/exec.js';
import { createMetrics } from '../../src/metrics.js';
import { compareGpus, readDcgm } from '../../src/sources/node/dcgm.js';
import { queryRas, readRasJson, stuckCollectives } from '../../src/sources/node/nccl-ras.js';
import { readSmi, SMI_FIELDS } from '../../src/sources/node/nvidia-smi.js';
import { NodeWatch } from '../../src/sources/node/watch.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';

const fixture = (f: string) => readFileSync(join('test/fixtures/node', f), 'utf8');
const servers: Array<Server | TcpServer> = [];
const sockets = new Set<Socket>();
const watches: NodeWatch[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const w of watches.splice(0)) await w.stop();
  for (const s of sockets) s.destroy();
  sockets.clear();
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function listen<S extends Server | TcpServer>(s: S): Promise<number> {
  servers.push(s);
  s.on('connection', (c: Socket) => {
    sockets.add(c);
    // The client cuts a flood short: the reset is expected.
    c.on('error', () => undefined);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

function watch(node: unknown): {
  w: NodeWatch;
  signals: NodeSignal[];
  metrics: ReturnType<typeof createMetrics>;
} {
  const signals: NodeSignal[] = [];
  const metrics = createMetrics({ defaults: false });
  const w = new NodeWatch({
    target: 't',
    node: nodeSchema.parse(node),
    exec: runCommand,
    metrics,
    logger: quietLogger(),
    onSignal: (s) => signals.push(s),
  });
  watches.push(w);
  return { w, signals, metrics };
}

const errorOf = (signals: NodeSignal[]) => signals.find((s) => s.error !== undefined)?.error;

describe('dcgm-exporter', () => {
  it('reads each GPU: its last XID, SM or engine activity, memory; an XID at the first reading is history', () => {
    const r = readDcgm(fixture('dcgm-exporter.txt'));
    expect(r.problem).toBeUndefined();
    expect(r.gpus).toEqual([
      {
        gpu: '0',
        uuid: 'GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52',
        xid: 0,
        util: 0,
        memUsedBytes: 80000 * 2 ** 20,
        memTotalBytes: 81024 * 2 ** 20,
      },
      {
        gpu: '1',
        uuid: 'GPU-8c2e1f0a-3b4d-4e5f-9a6b-7c8d9e0f1a2b',
        xid: 79,
        util: 0.981234,
        memUsedBytes: 79000 * 2 ** 20,
        memTotalBytes: 81048 * 2 ** 20,
      },
    ]);
    const first = compareGpus(r.gpus, undefined, r.errorTotals, undefined);
    expect(first.some((g) => g.xidNew === true)).toBe(false);
    const before = readDcgm(
      fixture('dcgm-exporter.txt').replace(/(DCGM_FI_DEV_XID_ERRORS\{gpu="1".*\}) 79/, '$1 0'),
    );
    const next = compareGpus(
      r.gpus,
      new Map(before.gpus.map((g) => [g.gpu, g])),
      r.errorTotals,
      before.errorTotals,
    );
    expect(next.filter((g) => g.xidNew).map((g) => [g.gpu, g.xid])).toEqual([['1', 79]]);
  });

  it('NVLink error counters that rise between readings are new errors on that GPU', () => {
    const nv = (n: number) =>
      `DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu="0",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} ${n}\nDCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} 0\n`;
    const a = readDcgm(nv(3));
    const b = readDcgm(nv(10));
    expect(
      compareGpus(b.gpus, new Map(a.gpus.map((g) => [g.gpu, g])), b.errorTotals, a.errorTotals)[0]!.errorsNew,
    ).toBe(7);
  });

  it('hostile: malformed text, a huge body and a slow exporter are errors of the reading, never a fault', async () => {
    expect(readDcgm('<html><body>502 Bad Gateway</body></html>').problem).toMatch(/not Prometheus text/);
    // A label value that is not a GPU index or UUID is not taken as one.
    expect(readDcgm('DCGM_FI_DEV_XID_ERRORS{gpu="$(reboot)",UUID="x"} 79\n').gpus).toEqual([]);
    // More GPUs than a node has: the reading stops at the bound.
    const many = Array.from({ length: 5000 }, (_, i) => `DCGM_FI_DEV_XID_ERRORS{gpu="${i % 1000}"} 0`).join(
      '\n',
    );
    expect(readDcgm(many).gpus.length).toBeLessThanOrEqual(64);

    const huge = 'x'.repeat(5 * 1024 * 1024);
    let slow = false;
    const port = await listen(
      createHttp((_q, res) => {
        if (slow) {
          res.writeHead(200);
          res.write('# HELP DCGM_FI_DEV_XID_ERRORS x\n'); // and never ends
          return;
        }
        res.end(huge);
      }),
    );
    const big = watch({
      every: '1s',
      gpus: { dcgm: `http://127.0.0.1:${port}/metrics`, every: '1s', timeout: '2s' },
    });
    big.w.start();
    expect(await waitFor(() => errorOf(big.signals))).toMatch(/over 4194304 bytes/);
    await big.w.stop();
    slow = true;
    const hung = watch({
      every: '1s',
      gpus: { dcgm: `http://127.0.0.1:${port}/metrics`, every: '1s', timeout: '1s' },
    });
    hung.w.start();
    expect(await waitFor(() => errorOf(hung.signals), { timeoutMs: 15_000 })).toMatch(
      /took longer than 1000 ms|timeout|aborted/i,
    );
    expect(hung.signals.some((s) => s.gpus !== undefined)).toBe(false);
    expect(await hung.metrics.nodeReadErrors.get()).toMatchObject({
      values: expect.arrayContaining([expect.objectContaining({ labels: { target: 't', source: 'gpus' } })]),
    });
  });
});

describe('nvidia-smi', () => {
  it('reads the CSV rows of the fields it asks for; [N/A] is no value', () => {
    expect(SMI_FIELDS).toHaveLength(6);
    const r = readSmi(fixture('nvidia-smi.csv'));
    expect(r.bad).toBe(0);
    expect(r.gpus.map((g) => [g.gpu, g.util, g.memUsedBytes])).toEqual([
      ['0', 0, 80000 * 2 ** 20],
      ['1', 0.97, 79000 * 2 ** 20],
    ]);
    expect([...r.eccTotals]).toEqual([['0', 0]]);
  });

  it('hostile: malformed rows are counted and skipped, a flood stops at the bound, a hung nvidia-smi is cut', async () => {
    const r = readSmi('garbage\n0, GPU-x, 1\n\u001b[31m1, 2, 3, 4, 5, 6\n' + fixture('nvidia-smi.csv'));
    expect(r.bad).toBe(3);
    expect(r.gpus).toHaveLength(2);
    expect(
      readSmi(Array.from({ length: 100_000 }, (_, i) => `${i % 999}, GPU-a, 1, 1, 1, 0`).join('\n')).gpus,
    ).toHaveLength(64);

    dir = mkdtempSync(join(tmpdir(), 'ww-smi-'));
    const real = join(dir, 'nvidia-smi');
    writeFileSync(real, `#!/bin/sh\ncat ${join(process.cwd(), 'test/fixtures/node/nvidia-smi.csv')}\n`);
    chmodSync(real, 0o755);
    const hangs = join(dir, 'nvidia-smi-hangs');
    writeFileSync(hangs, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hangs, 0o755);
    const ok = watch({ every: '1s', gpus: { nvidiaSmi: real, every: '1s', timeout: '5s' } });
    ok.w.start();
    const got = await waitFor(() => ok.signals.find((s) => s.gpus !== undefined)?.gpus);
    expect(got.map((g) => g.gpu)).toEqual(['0', '1']);
    const slow = watch({ every: '1s', gpus: { nvidiaSmi: hangs, every: '1s', timeout: '1s' } });
    slow.w.start();
    expect(await waitFor(() => errorOf(slow.signals), { timeoutMs: 15_000 })).toMatch(/timeout|took longer/);
  });
});

/** A RAS server as src/ras/client_support.cc answers: `body` to STATUS (JSON), or what `mode` breaks. */
async function rasServer(
  answer: () => string,
  mode: 'ok' | 'old' | 'silent' | 'flood' = 'ok',
): Promise<string> {
  const port = await listen(
    createTcp((c) => {
      let buf = '';
      c.on('data', (d) => {
        if (mode === 'silent') return;
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const cmd = buf.slice(0, nl).trim().toLowerCase();
          buf = buf.slice(nl + 1);
          if (cmd.startsWith('client protocol ')) c.write('SERVER PROTOCOL 2\n');
          else if (cmd.startsWith('timeout ')) c.write('OK\n');
          else if (cmd.startsWith('set format '))
            c.write(mode === 'old' ? 'ERROR: Unknown command set format json\n' : 'OK\n');
          else if (cmd === 'status') {
            if (mode === 'flood') {
              const chunk = 'x'.repeat(64 * 1024);
              const pump = () => {
                while (c.writable && c.write(chunk));
              };
              c.on('drain', pump);
              pump();
            } else c.end(answer());
          }
        }
      });
    }),
  );
  return `127.0.0.1:${port}`;
}

describe('NCCL RAS', () => {
  it('the JSON STATUS names the missing rank (dead), and a mismatch that does not move is a stuck collective', async () => {
    const addr = await rasServer(() => fixture('nccl-ras-status.json'));
    const first = readRasJson(await queryRas(addr, 5000, 1 << 20));
    expect(first.missing).toEqual([
      { comm: '0xae94423cfbb2ef4a', rank: 1, host: '172.16.64.245', pid: 1524345, dead: true },
    ]);
    expect(stuckCollectives(first.counts, undefined)).toEqual([]);
    const second = readRasJson(await queryRas(addr, 5000, 1 << 20));
    expect(stuckCollectives(second.counts, first.counts)).toEqual([
      { comm: '0xae94423cfbb2ef4a', op: 'AllReduce', behind: [2], at: 6649, ahead: 6650 },
    ]);
    // Counts that moved between queries are traffic, not a hang.
    const moved = readRasJson(
      fixture('nccl-ras-status.json').replace('"AllReduce": 6650', '"AllReduce": 6700'),
    );
    expect(stuckCollectives(moved.counts, first.counts)).toEqual([]);
  });

  it('through the source: a reading with the missing rank and, next time, the stuck collective', async () => {
    const addr = await rasServer(() => fixture('nccl-ras-status.json'));
    const n = watch({ every: '1s', nccl: { ras: addr, every: '1s', timeout: '5s' } });
    n.w.start();
    const stuck = await waitFor(() => n.signals.find((s) => (s.stuck?.length ?? 0) > 0));
    expect(stuck.missing?.map((r) => r.rank)).toEqual([1]);
    expect((await n.metrics.nodeNcclMissing.get()).values[0]?.value).toBe(1);
  });

  it('hostile: an NCCL before 2.28.7, a flood, a silent socket, something that is not RAS, JSON of the wrong shape', async () => {
    await expect(queryRas(await rasServer(() => '', 'old'), 5000, 1 << 20)).rejects.toThrow(
      /NCCL before 2\.28\.7/,
    );
    await expect(queryRas(await rasServer(() => '', 'flood'), 5000, 1 << 20)).rejects.toThrow(
      /over 1048576 bytes/,
    );
    await expect(queryRas(await rasServer(() => '', 'silent'), 500, 1 << 20)).rejects.toThrow(
      /no complete answer within 500 ms/,
    );
    const http = await listen(createHttp((_q, res) => res.end('hello')));
    await expect(queryRas(`127.0.0.1:${http}`, 2000, 1 << 20)).rejects.toThrow(
      /not NCCL RAS: "HTTP\/1\.1 400/,
    );
    expect(() => readRasJson('Job summary\n===========\n')).toThrow(/not JSON/);
    expect(() => readRasJson('{"communicators": 5}')).toThrow(/no communicators/);
    const odd = readRasJson(
      '{"communicators":[{"hash":"0x1\\u001b[2J","missing_ranks":[{"rank":"x"},{"rank":3,"host":"h;rm -rf","pid":9,"status":{}}]}]}',
    );
    expect(odd.missing).toEqual([{ comm: '0x1?[2J', rank: 3, host: 'h?rm?-rf', pid: 9, dead: false }]);
  });
});
