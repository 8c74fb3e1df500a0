// The serverinfo probe for any JSON: the path subset on its own, its config errors, and the probe against
// loopback servers shaped like llama.cpp's /slots, vLLM's /load and /is_sleeping, and SGLang's /get_server_info.
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/load.js';
import { JsonPathError, parseJsonPath, selectJsonPath } from '../../src/lib/json-path.js';
import { runOnce } from './fixtures.js';
import { startServer, type TestServer } from './hostile.js';

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** A loopback server answering `body` (JSON-encoded unless a string) on every path. */
async function serveJson(body: unknown, status = 200): Promise<TestServer> {
  const s = await startServer((_q, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  servers.push(s);
  return s;
}

// llama.cpp /slots, as server_slot::to_json writes it (two slots, one busy).
const SLOTS = [
  { id: 0, n_ctx: 4096, speculative: false, is_processing: true, id_task: 12 },
  { id: 1, n_ctx: 4096, speculative: false, is_processing: false },
];

describe('JSON path subset', () => {
  const sel = (doc: unknown, path: string) => selectJsonPath(doc, parseJsonPath(path));

  it('selects members, indexes and wildcards in arrays and objects', () => {
    const doc = { slots: SLOTS, 'max-total': 7, nested: { a: { b: 1 }, c: { b: 2 } } };
    expect(sel(doc, '$')).toEqual([doc]);
    expect(sel(SLOTS, '$[0].id')).toEqual([0]);
    expect(sel(SLOTS, '$[1].is_processing')).toEqual([false]);
    expect(sel(SLOTS, '$[*].n_ctx')).toEqual([4096, 4096]);
    expect(sel(doc, '$.slots[*].id')).toEqual([0, 1]);
    expect(sel(doc, "$['max-total']")).toEqual([7]);
    expect(sel(doc, '$["slots"][1]["id"]')).toEqual([1]);
    expect(sel(doc, '$.nested.*.b')).toEqual([1, 2]);
    expect(sel({ is_sleeping: false }, '$.is_sleeping')).toEqual([false]);
  });

  it('selects nothing for a missing member, an index past the end, or the wrong container', () => {
    expect(sel(SLOTS, '$[2].id')).toEqual([]);
    expect(sel(SLOTS, '$.id')).toEqual([]);
    expect(sel({ slots: 3 }, '$.slots[0]')).toEqual([]);
    expect(sel({ a: null }, '$.a.b')).toEqual([]);
    // A present null is a value: it is selected.
    expect(sel({ a: null }, '$.a')).toEqual([null]);
    // Only own members: the prototype is not data.
    expect(sel({}, '$.constructor')).toEqual([]);
  });

  it.each([
    ['slots', /must start with \$/],
    ['$..id', /recursive descent/],
    ['$[?(@.id == 0)]', /unsupported selector/],
    ['$[-1]', /unsupported selector/],
    ['$[0:2]', /unsupported selector/],
    ['$.slots[0', /"\[" without "\]"/],
    ['$.', /expected a member name/],
    ['$ .a', /unexpected " "/],
  ])('rejects %s', (path, why) => {
    expect(() => parseJsonPath(path)).toThrow(JsonPathError);
    expect(() => parseJsonPath(path)).toThrow(why);
  });
});

describe('serverinfo config', () => {
  const cfg = (expect: string) => `
targets:
  - name: t
    endpoints: [{ name: e, url: "http://127.0.0.1:1" }]
    probes:
      - name: slots
        kind: serverinfo
        every: 30s
        path: /slots
        expect: ${expect}
`;
  const problems = (text: string) => {
    try {
      parseConfigText(text, 'c.yaml', {});
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };

  it('accepts expectations with exists, equals, lt and gt', () => {
    const loaded = parseConfigText(
      cfg(
        `[{ path: "$[0].id", exists: true }, { path: $.is_sleeping, equals: false }, { path: $.server_load, gt: -1, lt: 64 }]`,
      ),
      'c.yaml',
      {},
    );
    const p = loaded.config.targets[0]!.probes[0]!;
    expect(p.kind === 'serverinfo' && p.expect).toEqual([
      { path: '$[0].id', exists: true },
      { path: '$.is_sleeping', equals: false },
      { path: '$.server_load', gt: -1, lt: 64 },
    ]);
  });

  it('names a bad path, a missing test and contradictory tests', () => {
    expect(problems(cfg(`[{ path: "$..id", exists: true }]`)).join('\n')).toMatch(
      /probes\[0\]\.expect\[0\]\.path: invalid JSON path "\$\.\.id": recursive descent/,
    );
    expect(problems(cfg(`[{ path: $.a }]`)).join('\n')).toMatch(
      /expect\[0\]\.path: give a test: exists, equals, lt or gt/,
    );
    expect(problems(cfg(`[{ path: $.a, exists: false, equals: 1 }]`)).join('\n')).toMatch(
      /expect\[0\]\.exists: exists: false cannot be combined with equals/,
    );
    expect(problems(cfg(`[{ path: $.a, equals: 1, lt: 2 }]`)).join('\n')).toMatch(
      /expect\[0\]\.equals: give either equals or lt\/gt/,
    );
  });

  it('expect is a serverinfo field only', () => {
    const text = cfg('[]').replace('kind: serverinfo', 'kind: health');
    expect(problems(text).join('\n')).toMatch(
      /probes\[0\]\.expect: not a field of a health probe \(only serverinfo probes have it\)/,
    );
  });
});

describe('serverinfo probe against loopback servers', () => {
  it('accepts an array (llama.cpp /slots) and checks fields of its elements', async () => {
    const s = await serveJson(SLOTS);
    const ok = await runOnce(s.url, 'serverinfo', {
      probe: {
        path: '/slots',
        expect: [
          { path: '$[0].id', exists: true },
          { path: '$[*].n_ctx', gt: 0 },
        ],
      },
    });
    expect(ok.signal).toMatchObject({ result: 'ok', status: 200 });
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /slots']);

    // Every selected value must pass: one busy slot fails "all idle", and the message counts them.
    const busy = await runOnce(s.url, 'serverinfo', {
      probe: { path: '/slots', expect: [{ path: '$[*].is_processing', equals: false }] },
    });
    expect(busy.signal).toMatchObject({ result: 'bad_response', status: 200 });
    expect(busy.signal.error).toBe('$[*].is_processing: expected false, got true (1 of 2 values)');
  });

  it('vLLM /load: a number over its bound fails; a missing field fails as not found', async () => {
    const s = await serveJson({ server_load: 250 });
    const over = await runOnce(s.url, 'serverinfo', {
      probe: { path: '/load', expect: [{ path: '$.server_load', lt: 64 }] },
    });
    expect(over.signal.result).toBe('bad_response');
    expect(over.signal.error).toBe('$.server_load: expected < 64, got 250');
    const under = await runOnce(s.url, 'serverinfo', {
      probe: { path: '/load', expect: [{ path: '$.server_load', lt: 1000, gt: -1 }] },
    });
    expect(under.signal.result).toBe('ok');
    const missing = await runOnce(s.url, 'serverinfo', {
      probe: { path: '/load', expect: [{ path: '$.num_requests', exists: true }] },
    });
    expect(missing.signal.error).toBe('$.num_requests: not found');
  });

  it('vLLM /is_sleeping: equals false passes while awake and fails while asleep; failures are all listed', async () => {
    const awake = await serveJson({ is_sleeping: false });
    const p = { path: '/is_sleeping', expect: [{ path: '$.is_sleeping', equals: false }] };
    expect((await runOnce(awake.url, 'serverinfo', { probe: p })).signal.result).toBe('ok');
    const asleep = await serveJson({ is_sleeping: true, level: '1' });
    const r = await runOnce(asleep.url, 'serverinfo', {
      probe: { ...p, expect: [...p.expect, { path: '$.level', exists: false }] },
    });
    expect(r.signal.error).toBe(
      '$.is_sleeping: expected false, got true; $.level: present ("1"), expected absent',
    );
  });

  it('a string where a number is expected fails lt/gt, and equals compares type and value', async () => {
    const s = await serveJson({ n: '5', v: '0.5.1' });
    const r = await runOnce(s.url, 'serverinfo', {
      probe: {
        expect: [
          { path: '$.n', gt: 1 },
          { path: '$.n', equals: 5 },
          { path: '$.v', equals: '0.5.1' },
        ],
      },
    });
    expect(r.signal.error).toBe('$.n: expected > 1, got "5"; $.n: expected 5, got "5"');
  });

  it('SGLang /get_server_info (an object) still passes with no expectations; scalars and null do not', async () => {
    const obj = await serveJson({ version: '0.5.4', internal_states: [{ avg_spec_accept_length: null }] });
    expect((await runOnce(obj.url, 'serverinfo')).signal.result).toBe('ok');
    expect(obj.requests[0]!.path).toBe('/get_server_info');
    for (const body of ['42', 'null', '"ok"']) {
      const s = await serveJson(body);
      const r = (await runOnce(s.url, 'serverinfo')).signal;
      expect(r.result).toBe('bad_response');
      expect(r.error).toMatch(/^server info is not a JSON object or array \(got /);
    }
  });

  it('an endpoint that hangs (/slots behind a stuck main loop) times out in the body phase', async () => {
    const s = await startServer((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"id": 0,');
    });
    servers.push(s);
    const r = await runOnce(s.url, 'serverinfo', {
      probe: { path: '/slots', timeout: '300ms', expect: [{ path: '$[0].id', exists: true }] },
    });
    expect(r.signal).toMatchObject({ result: 'timeout', phase: 'stream' });
  });

  it('a long quoted value is cut in the error', async () => {
    const s = await serveJson({ state: 'x'.repeat(500) });
    const r = await runOnce(s.url, 'serverinfo', {
      probe: { expect: [{ path: '$.state', equals: 'idle' }] },
    });
    expect(r.signal.error).toMatch(/^\$\.state: expected "idle", got "x{76}\.\.\.$/);
  });
});
