// Deterministic SGLang-style log generator (mulberry32), shared by bench/ingest.mjs (1,000,000 lines with
// rare fault lines) and the rule tests (a clean healthy log: every documented batch-line variant, uvicorn
// access lines, vLLM stats lines and ordinary startup chatter, but no fault signature).
import { Buffer } from 'node:buffer';
import { createWriteStream } from 'node:fs';

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

function stamp(sec) {
  const d = new Date(Date.UTC(2026, 6, 10, 12, 0, 0) + sec * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const PREFIXES = ['', ' TP0', ' TP3', ' DP0 TP0', ' DP2 TP2 EP2', ' PP1 TP1'];

/** Returns a function giving line i (no newline). `faults` adds rare failure lines, as a real bad night would. */
export function makeLineSource({ seed = 42, faults = false } = {}) {
  const rnd = mulberry32(seed);
  const int = (n) => Math.floor(rnd() * n);
  const f2 = (x) => x.toFixed(2);
  let sec = 0;
  let thread = 1;
  const pending = [];
  return (i) => {
    if (pending.length > 0) return pending.shift();
    if (i % 97 === 0) sec++;
    const ts = stamp(sec);
    const pre = PREFIXES[i % PREFIXES.length];
    const head = `[${ts}${pre}]`;
    const r = rnd();
    const running = int(64);
    const queue = int(4);
    if (faults && r < 0.0007) {
      const n = thread++;
      pending.push(
        'Traceback (most recent call last):',
        '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
        '    self.run()',
        `AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?`,
      );
      return `Exception in thread Thread-${n} (${n % 3 === 0 ? 'bootstrap_thread' : 'forward_thread_func'}):`;
    }
    if (faults && r < 0.0013) {
      return `${head} Prefill bootstrap failed for request rank=0 req.rid='${int(1e9).toString(16)}' req.bootstrap_room=${int(1e9)} with exception KVTransferError(bootstrap_room=${int(1e9)}): Aborted by AbortReq.`;
    }
    if (faults && r < 0.0016) {
      return `${head} Decode transfer failed for request rank=1 decode_req.req.rid='${int(1e9).toString(16)}' decode_req.req.bootstrap_room=${int(1e9)} with exception KVTransferError(bootstrap_room=${int(1e9)}): Request ${int(1e9)} timed out after 300.0s in KVPoll.WaitingForInput`;
    }
    if (r < 0.84) {
      const usage = f2(rnd());
      const gen = f2(rnd() * 2000);
      const v = i % 5;
      if (v === 0)
        return `${head} Decode batch, #running-req: ${running}, #token: ${int(90000)}, token usage: ${usage}, accept len: 2.31, accept rate: 0.58, cuda graph: True, gen throughput (token/s): ${gen}, #queue-req: ${queue}, `;
      if (v === 1)
        return `${head} Decode batch, #running-req: ${running}, #full token: ${int(90000)}, full token usage: ${usage}, #swa token: 4000, swa token usage: 0.20, pre-allocated usage: 0.05, #prealloc-req: ${int(3)}, #transfer-req: ${int(3)}, #retracted-req: 0, cuda graph: True, gen throughput (token/s): ${gen}, #queue-req: ${queue}`;
      return `${head} Decode batch, #running-req: ${running}, #token: ${int(90000)}, token usage: ${usage}, pre-allocated usage: 0.05, #prealloc-req: ${int(3)}, #transfer-req: ${int(3)}, #retracted-req: 0, cuda graph: True, gen throughput (token/s): ${gen}, #queue-req: ${queue}, `;
    }
    if (r < 0.96) {
      const v = i % 3;
      if (v === 0)
        return `${head} Prefill batch, #new-seq: ${1 + int(4)}, #new-token: ${int(16384)}, #cached-token: ${int(4096)}, token usage: ${f2(rnd())}, #running-req: ${running}, #queue-req: ${queue}, #prealloc-req: ${int(3)}, #inflight-req: ${int(3)}, input throughput (token/s): ${f2(rnd() * 9000)}, `;
      if (v === 1)
        return `${head} Prefill batch, #new-seq: ${1 + int(4)}, #new-token: ${int(16384)}, #cached-token: 0, token usage: ${f2(rnd())}, #running-req: ${running}, #queue-req: ${queue}, #pending-token: 0, #bootstrap-req: ${int(3)}, #inflight-req: ${int(3)}, cuda graph: False, input throughput (token/s): ${f2(rnd() * 9000)}`;
      return `${head} Prefill batch. #new-seq: 1, #new-token: ${int(512)}, #cached-token: 0, cache hit rate: 0.00%, token usage: ${f2(rnd())}, #running-req: ${running}, #queue-req: ${queue}`;
    }
    if (r < 0.995) {
      const paths = [
        'POST /generate',
        'GET /health',
        'POST /v1/chat/completions',
        'GET /health_generate',
        'GET /metrics',
      ];
      return `[${ts}] INFO:     10.99.${int(255)}.${int(255)}:${40000 + int(20000)} - "${paths[i % paths.length]} HTTP/1.1" 200 OK`;
    }
    const misc = [
      `INFO ${ts.slice(5)} [loggers.py:111] Engine 000: Avg prompt throughput: ${f2(rnd() * 900)} tokens/s, Avg generation throughput: ${f2(rnd() * 900)} tokens/s, Running: ${running} reqs, Waiting: ${queue} reqs, GPU KV cache usage: ${f2(rnd() * 100)}%, Prefix cache hit rate: 12.5%`,
      `(APIServer pid=851) INFO ${ts.slice(5)} [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%`,
      `${head} Load weight end. type=DeepseekV4ForCausalLM, dtype=torch.bfloat16, avail mem=12.34 GB, mem usage=60.10 GB.`,
      `${head} KV Cache is allocated. #tokens: 123456, K size: 1.23 GB, V size: 1.23 GB`,
      `${head} Capture cuda graph end. Time elapsed: 12.34 s. mem usage=1.20 GB. avail mem=10.10 GB.`,
      `[${ts}] The server is fired up and ready to roll!`,
      `[${ts}] Start of pd disaggregation warmup ...`,
      `[${ts}] End of prefill disaggregation mode warmup with status 200, resp: [{'text': ' the', 'meta_info': {}}]`,
      `${head} Cache flushed successfully!`,
      `[${ts}] INFO:     Started server process [${1000 + int(9000)}]`,
      `[${ts}] INFO:     Waiting for application startup.`,
      `[${ts}] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)`,
    ];
    return misc[i % misc.length];
  };
}

/** Writes `n` lines to `file`; resolves with the byte size. */
export function writeLog(file, n, opts = {}) {
  return writeLines(file, n, makeLineSource(opts));
}

/** Writes lines `next(0)`…`next(n - 1)` to `file` in batches; resolves with the byte size. */
export async function writeLines(file, n, next) {
  const out = createWriteStream(file);
  let bytes = 0;
  let batch = [];
  for (let i = 0; i < n; i++) {
    batch.push(next(i));
    if (batch.length === 4096 || i === n - 1) {
      const text = batch.join('\n') + '\n';
      bytes += Buffer.byteLength(text);
      if (!out.write(text)) await new Promise((r) => out.once('drain', r));
      batch = [];
    }
  }
  await new Promise((r, j) => out.end((e) => (e ? j(e) : r())));
  return bytes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [n = '1000000', file = 'sglang.log'] = process.argv.slice(2);
  const bytes = await writeLog(file, Number(n), { faults: true });
  process.stdout.write(`${file}: ${n} lines, ${bytes} bytes\n`);
}
