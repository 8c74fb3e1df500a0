// NCCL's RAS client protocol on localhost (issue 42), NCCL ≥ 2.28.7 for its JSON status. Read from
// NVIDIA/nccl @ 5067397c2676d5aed50042fc39e5c8ee96eb0027: src/ras/client.cc (the ncclras client: it sends
// `CLIENT PROTOCOL <n>\n` and expects `SERVER PROTOCOL <n>\n`, then `TIMEOUT <s>\n` → `OK\n`, `SET FORMAT json\n` →
// `OK\n`, `STATUS\n`, and reads the answer to EOF), src/ras/client_support.cc (the server side: every command is one
// line, `ERROR: …` on a bad one; jsonWriteHeader / jsonStartCommunicator / jsonWriteRankData / jsonWriteMissingRank
// write the fields read below), src/ras/ras_internal.h (NCCL_RAS_CLIENT_PORT 28028, NCCL_RAS_CLIENT_PROTOCOL 2), and
// docs/userguide/source/troubleshooting/ras.rst ("JSON Output"). Bounded: a deadline for the whole exchange, and the
// answer is cut (and not parsed) past maxBytes.
import { connect } from 'node:net';
import type { MissingRank, StuckCollective } from '../../core/node-signals.js';

export const RAS_PROTOCOL = 2;

export interface RasStatus {
  missing: MissingRank[];
  /** Collective counts per communicator and rank: compared across queries to find a stuck collective. */
  counts: Map<string, Map<number, Record<string, number>>>;
}

/** One STATUS query; rejects with a reason an operator can read. */
export function queryRas(addr: string, timeoutMs: number, maxBytes: number): Promise<string> {
  const m = /^(.*):(\d{1,5})$/.exec(addr);
  const host = m?.[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1';
  const port = Number(m?.[2] ?? 28028);
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    let buf = Buffer.alloc(0);
    let step: 'hello' | 'timeout' | 'format' | 'status' = 'hello';
    let done = false;
    const finish = (err?: Error, body?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err !== undefined) reject(err);
      else resolve(body!);
    };
    const timer = setTimeout(() => finish(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (e) =>
      finish(new Error(`RAS ${addr}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
    );
    sock.on('connect', () => sock.write(`CLIENT PROTOCOL ${RAS_PROTOCOL}\n`));
    sock.on('data', (chunk: Buffer) => {
      if (buf.length + chunk.length > maxBytes) return finish(new Error(`RAS status over ${maxBytes} bytes`));
      buf = Buffer.concat([buf, chunk]);
      if (step === 'status') return;
      const nl = buf.indexOf(0x0a);
      if (nl < 0) return buf.length > 4096 ? finish(new Error('RAS sent a line over 4096 bytes')) : undefined;
      const line = buf.subarray(0, nl).toString('utf8').trim();
      buf = buf.subarray(nl + 1);
      if (step === 'hello') {
        if (!/^SERVER PROTOCOL \d+$/i.test(line))
          return finish(new Error(`not NCCL RAS: ${JSON.stringify(line.slice(0, 80))}`));
        step = 'timeout';
        // NCCL's own collection waits this long for unresponsive peers; ours must outlast it.
        sock.write(`TIMEOUT ${Math.max(1, Math.floor(timeoutMs / 2000))}\n`);
      } else if (step === 'timeout' || step === 'format') {
        if (line.toUpperCase() !== 'OK')
          return finish(
            new Error(
              `RAS refused ${step === 'format' ? 'SET FORMAT json (NCCL before 2.28.7)' : 'TIMEOUT'}: ${line.slice(0, 80)}`,
            ),
          );
        if (step === 'timeout') {
          step = 'format';
          sock.write('SET FORMAT json\n');
        } else {
          step = 'status';
          sock.write('STATUS\n');
        }
      }
    });
    sock.on('end', () =>
      step === 'status'
        ? finish(undefined, buf.toString('utf8'))
        : finish(new Error('RAS closed the connection early')),
    );
  });
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_COMMS = 256;
const MAX_RANKS = 4096;
const text = (v: unknown, n: number) =>
  typeof v === 'string' ? v.replace(/[^\w.:\-[\]]/g, '?').slice(0, n) : '?';
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** The JSON status as client_support.cc writes it; what does not have its shape is skipped. */
export function readRasJson(body: string): RasStatus {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new Error('RAS status is not JSON (NCCL before 2.28.7 answers text only)');
  }
  const out: RasStatus = { missing: [], counts: new Map() };
  if (!isObj(doc) || !Array.isArray(doc.communicators)) throw new Error('RAS status has no communicators');
  for (const c of doc.communicators.slice(0, MAX_COMMS)) {
    if (!isObj(c)) continue;
    const comm = text(c.hash, 40);
    const counts = new Map<number, Record<string, number>>();
    for (const r of (Array.isArray(c.ranks) ? c.ranks : []).slice(0, MAX_RANKS)) {
      const rank = isObj(r) ? int(r.rank) : undefined;
      if (rank === undefined || !isObj(r) || !isObj(r.collective_counts)) continue;
      const cc: Record<string, number> = {};
      for (const [op, n] of Object.entries(r.collective_counts).slice(0, 16))
        if (typeof n === 'number' && Number.isFinite(n)) cc[text(op, 32)] = n;
      counts.set(rank, cc);
    }
    out.counts.set(comm, counts);
    for (const r of (Array.isArray(c.missing_ranks) ? c.missing_ranks : []).slice(0, MAX_RANKS)) {
      if (!isObj(r) || int(r.rank) === undefined) continue;
      const st = isObj(r.status) ? r.status : {};
      out.missing.push({
        comm,
        rank: int(r.rank)!,
        host: text(r.host, 64),
        pid: int(r.pid) ?? 0,
        dead: st.considered_dead === true,
      });
    }
  }
  return out;
}

/**
 * Collectives stuck between two queries: ranks of a communicator at different counts of one operation, and no
 * rank's count moved since the previous query (NCCL's own guidance: a mismatch that does not change across
 * queries may mean the communicator is stuck, ras.rst "Sample Output").
 */
export function stuckCollectives(
  now: RasStatus['counts'],
  prev: RasStatus['counts'] | undefined,
): StuckCollective[] {
  const out: StuckCollective[] = [];
  if (prev === undefined) return out;
  for (const [comm, ranks] of now) {
    const before = prev.get(comm);
    if (before === undefined || ranks.size < 2) continue;
    const ops = new Set([...ranks.values()].flatMap((cc) => Object.keys(cc)));
    for (const op of ops) {
      const vals = [...ranks].map(([rank, cc]) => ({ rank, n: cc[op] ?? 0, was: before.get(rank)?.[op] }));
      if (vals.some((v) => v.was === undefined || v.was !== v.n)) continue;
      const max = Math.max(...vals.map((v) => v.n));
      const min = Math.min(...vals.map((v) => v.n));
      if (max === min) continue;
      out.push({
        comm,
        op,
        behind: vals
          .filter((v) => v.n === min)
          .map((v) => v.rank)
          .slice(0, 16),
        at: min,
        ahead: max,
      });
    }
  }
  return out.slice(0, 16);
}
