import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { checkConfig } from '../../src/commands/check.js';
import { ConfigError, parseConfigText } from '../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-check-'));

const GOOD = `
stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
      - { name: router, url: "http://127.0.0.1:30001" }
    probes:
      - { name: chat, kind: chat, every: 15s, timeout: 30s }
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }
`;

// The traffic path (issue 43): two targets in a pool, readiness, the agent port and a drain through the gateway.
const TRAFFIC = `${GOOD}    drain: { url: "http://127.0.0.1:30000", worker: "http://127.0.0.1:30001" }
  - name: pd2
    endpoints:
      - { name: router, url: "http://127.0.0.1:30002" }
web: { listenAddress: "127.0.0.1:9787", readiness: { ready: [ok, degraded] } }
pools:
  - { name: engines, members: [{ target: pd }, { target: pd2, endpoint: router }], minInRotation: 1 }
agent:
  listenAddress: "127.0.0.1:9788"
  servers: [{ name: pd, target: pd }, { from: 10.0.0.5, target: pd2, endpoint: router }]
`;
const AGENT_AT = 'listenAddress: "127.0.0.1:9788"';
const DRAIN_AT = 'worker: "http://127.0.0.1:30001" }';
const POOL_MEMBERS = '[{ target: pd }, { target: pd2, endpoint: router }]';
const AGENT_SERVERS = '[{ name: pd, target: pd }, { from: 10.0.0.5, target: pd2, endpoint: router }]';

// Each case: one new config error of the traffic path; the exact field and the gist of its message.
const TRAFFIC_CASES: { name: string; yaml: string; expect: RegExp }[] = [
  {
    name: 'a wedged state configured ready',
    yaml: TRAFFIC.replace('ready: [ok, degraded]', 'ready: [ok, wedged]'),
    expect: /web\.readiness\.ready: wedged and down can never be ready/,
  },
  {
    name: 'no ready state',
    yaml: TRAFFIC.replace('ready: [ok, degraded]', 'ready: []'),
    expect: /web\.readiness\.ready: give at least one ready state/,
  },
  {
    name: 'a ready state that is not a state',
    yaml: TRAFFIC.replace('ready: [ok, degraded]', 'ready: [ok, fine]'),
    expect:
      /web\.readiness\.ready\[1\]: Invalid option: expected one of "unknown"\|"ok"\|"degraded"\|"wedged"\|"down"/,
  },
  {
    name: 'an unknown readiness key',
    yaml: TRAFFIC.replace('ready: [ok, degraded] }', 'ready: [ok, degraded], states: [ok] }'),
    expect: /web\.readiness\.states: unknown key/,
  },
  {
    name: 'a pool name with spaces',
    yaml: TRAFFIC.replace('name: engines', 'name: "two words"'),
    expect: /pools\[0\]\.name: a pool name may use letters, digits and _\.:-/,
  },
  {
    name: 'a pool without members',
    yaml: TRAFFIC.replace(POOL_MEMBERS, '[]'),
    expect: /pools\[0\]\.members: a pool needs at least one member/,
  },
  {
    name: 'a pool that keeps none in rotation',
    yaml: TRAFFIC.replace('minInRotation: 1', 'minInRotation: 0'),
    expect: /pools\[0\]\.minInRotation: at least 1/,
  },
  {
    name: 'a pool that keeps more in rotation than it has',
    yaml: TRAFFIC.replace('minInRotation: 1', 'minInRotation: 3'),
    expect: /pools\[0\]\.minInRotation: 3 is more than the pool's 2 members/,
  },
  {
    name: 'two pools of one name',
    yaml: TRAFFIC.replace(
      'minInRotation: 1 }',
      'minInRotation: 1 }\n  - { name: engines, members: [{ target: pd2 }] }',
    ),
    expect: /pools\[1\]\.name: duplicate pool name "engines"/,
  },
  {
    name: 'a pool member that is no target',
    yaml: TRAFFIC.replace(POOL_MEMBERS, '[{ target: pd }, { target: pd3 }]'),
    expect: /pools\[0\]\.members\[1\]\.target: no target named "pd3" \(have: pd, pd2\)/,
  },
  {
    name: 'a pool member hop that does not exist',
    yaml: TRAFFIC.replace(POOL_MEMBERS, '[{ target: pd }, { target: pd2, endpoint: proxy }]'),
    expect: /pools\[0\]\.members\[1\]\.endpoint: no endpoint named "proxy" in target "pd2"/,
  },
  {
    name: 'a backend in a pool twice',
    yaml: TRAFFIC.replace(
      POOL_MEMBERS,
      '[{ target: pd }, { target: pd2, endpoint: router }, { target: pd }]',
    ),
    expect: /pools\[0\]\.members\[2\]: pd is already a member of pool "engines"/,
  },
  {
    name: 'an agent listen address that does not parse',
    yaml: TRAFFIC.replace(AGENT_AT, 'listenAddress: "nowhere"'),
    expect: /agent\.listenAddress: invalid listen address "nowhere"/,
  },
  {
    name: 'the agent on the web port',
    yaml: TRAFFIC.replace(AGENT_AT, 'listenAddress: "127.0.0.1:9787"'),
    expect: /agent\.listenAddress: the same port as web\.listenAddress \("127\.0\.0\.1:9787"\)/,
  },
  {
    name: 'the agent on every address of the web port',
    yaml: TRAFFIC.replace(AGENT_AT, 'listenAddress: ":9787"'),
    expect: /agent\.listenAddress: the same port as web\.listenAddress/,
  },
  {
    name: 'an agent without servers',
    yaml: TRAFFIC.replace(AGENT_SERVERS, '[]'),
    expect: /agent\.servers: the agent needs at least one server/,
  },
  {
    name: 'an agent server HAProxy cannot name',
    yaml: TRAFFIC.replace('{ name: pd, target: pd }', '{ target: pd }'),
    expect: /agent\.servers\[0\]: give name \(what agent-send says\) or from/,
  },
  {
    name: 'two agent servers of one name',
    yaml: TRAFFIC.replace('{ name: pd, target: pd }', '{ name: pd, target: pd }, { name: pd, target: pd2 }'),
    expect: /agent\.servers\[1\]\.name: the same name as servers\[0\]/,
  },
  {
    name: 'two unnamed agent servers on one address',
    yaml: TRAFFIC.replace('endpoint: router }]\n', 'endpoint: router }, { from: 10.0.0.5, target: pd }]\n'),
    expect: /agent\.servers\[2\]\.from: the same address as servers\[1\], and neither has a name/,
  },
  {
    name: 'an agent server address that is a host name',
    yaml: TRAFFIC.replace('from: 10.0.0.5', 'from: haproxy.local'),
    expect: /agent\.servers\[1\]\.from: expected an IP address, got "haproxy\.local"/,
  },
  {
    name: 'an agent-send name with a space',
    yaml: TRAFFIC.replace('{ name: pd, target: pd }', '{ name: "p d", target: pd }'),
    expect: /agent\.servers\[0\]\.name: an agent-send name is 1 to 64 printable characters without spaces/,
  },
  {
    name: 'an agent server that is no target',
    yaml: TRAFFIC.replace('{ name: pd, target: pd }', '{ name: pd, target: pd9 }'),
    expect: /agent\.servers\[0\]\.target: no target named "pd9"/,
  },
  {
    name: 'an agent server hop that does not exist',
    yaml: TRAFFIC.replace('target: pd2, endpoint: router }]\n', 'target: pd2, endpoint: proxy }]\n'),
    expect: /agent\.servers\[1\]\.endpoint: no endpoint named "proxy" in target "pd2"/,
  },
  {
    name: 'an agent word HAProxy does not know',
    yaml: TRAFFIC.replace(AGENT_AT, `${AGENT_AT}\n  unready: off`),
    expect: /agent\.unready: Invalid option: expected one of "down"\|"drain"\|"maint"/,
  },
  {
    name: 'a degraded weight above 100 %',
    yaml: TRAFFIC.replace(AGENT_AT, `${AGENT_AT}\n  degradedWeight: 150`),
    expect: /agent\.degradedWeight: Too big: expected number to be <=100/,
  },
  {
    name: 'an agent that takes no connection',
    yaml: TRAFFIC.replace(AGENT_AT, `${AGENT_AT}\n  maxConnections: 0`),
    expect: /agent\.maxConnections: Too small: expected number to be >=1/,
  },
  {
    name: 'an agent timeout that is no duration',
    yaml: TRAFFIC.replace(AGENT_AT, `${AGENT_AT}\n  timeout: soon`),
    expect: /agent\.timeout: expected a duration like "30s", got "soon"/,
  },
  {
    name: 'a gateway URL that is not http',
    yaml: TRAFFIC.replace('url: "http://127.0.0.1:30000"', 'url: "ftp://127.0.0.1:30000"'),
    expect: /targets\[0\]\.drain\.url: expected an http\(s\) URL of the gateway/,
  },
  {
    name: 'a drained worker that is not a URL',
    yaml: TRAFFIC.replace('worker: "http://127.0.0.1:30001"', 'worker: "127.0.0.1:30001"'),
    expect: /targets\[0\]\.drain\.worker: expected the http\(s\) URL the gateway knows the worker by/,
  },
  {
    name: 'a worker type the gateway does not have',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', workerType: encode }')),
    expect: /targets\[0\]\.drain\.workerType: Invalid option: expected one of "regular"\|"prefill"\|"decode"/,
  },
  {
    name: 'a bootstrap port out of range',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', workerType: prefill, bootstrapPort: 70000 }')),
    expect: /targets\[0\]\.drain\.bootstrapPort: Too big: expected number to be <=65535/,
  },
  {
    name: 'a gateway other than SGLang',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', gateway: litellm }')),
    expect: /targets\[0\]\.drain\.gateway: Invalid input: expected "sglang"/,
  },
  {
    name: 'no drain allowed per window',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', maxPerWindow: 0 }')),
    expect: /targets\[0\]\.drain\.maxPerWindow: Too small: expected number to be >=1/,
  },
  {
    name: 'a drain window that is no duration',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', window: forever }')),
    expect: /targets\[0\]\.drain\.window: expected a duration like "30s", got "forever"/,
  },
  {
    name: 'an unknown drain key',
    yaml: TRAFFIC.replace(DRAIN_AT, DRAIN_AT.replace(' }', ', retries: 3 }')),
    expect: /targets\[0\]\.drain\.retries: unknown key/,
  },
  {
    name: 'a drained target in no pool',
    yaml: TRAFFIC.replace(POOL_MEMBERS, '[{ target: pd2 }]'),
    expect: /targets\[0\]\.drain: a drained target must be a member of a pool/,
  },
  {
    name: 'two targets draining one worker',
    yaml: TRAFFIC.replace(
      '      - { name: router, url: "http://127.0.0.1:30002" }\n',
      '      - { name: router, url: "http://127.0.0.1:30002" }\n    drain: { url: "http://127.0.0.1:30000/", worker: "http://127.0.0.1:30001/" }\n',
    ),
    expect: /targets\[1\]\.drain\.worker: the same worker of the same gateway as targets\[0\]\.drain/,
  },
];

// A FIFO blocks a reader's open() until a writer comes (issue 16 item 9: a reload hung forever on one).
const FIFO = join(dir, 'serve.fifo');
execFileSync('mkfifo', [FIFO]);

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

// Each case: a malformed config and the exact field path (with the gist of the message) that must be named.
const CASES: { name: string; yaml: string; expect: RegExp }[] = [
  {
    name: 'bad duration',
    yaml: GOOD.replace('timeout: 5s', 'timeout: abc'),
    expect: /targets\[0\]\.probes\[1\]\.timeout: expected a duration like "30s", got "abc"/,
  },
  {
    name: 'number instead of duration',
    yaml: GOOD.replace('every: 15s', 'every: 15'),
    expect: /targets\[0\]\.probes\[0\]\.every: expected a duration like "30s", got 15/,
  },
  {
    name: 'unknown top-level key',
    yaml: GOOD + 'targetz: []\n',
    expect: /targetz: unknown key/,
  },
  {
    name: 'unknown nested key',
    yaml: GOOD.replace('timeout: 30s }', 'timeout: 30s, maxTokenz: 4 }'),
    expect: /targets\[0\]\.probes\[0\]\.maxTokenz: unknown key/,
  },
  {
    name: 'missing targets',
    yaml: `stateDir: ${dir}/s\n`,
    expect: /targets: required/,
  },
  {
    name: 'empty targets',
    yaml: `targets: []\n`,
    expect: /targets: at least one target is required/,
  },
  {
    name: 'duplicate target names',
    yaml: GOOD + `  - name: pd\n    endpoints: [{ name: r, url: "http://127.0.0.1:1" }]\n`,
    expect: /targets\[1\]\.name: duplicate target name "pd"/,
  },
  {
    name: 'bad URL',
    yaml: GOOD.replace('http://127.0.0.1:30001', 'not a url'),
    expect: /targets\[0\]\.endpoints\[0\]\.url: expected an http\(s\) URL/,
  },
  {
    name: 'non-http URL scheme',
    yaml: GOOD.replace('http://127.0.0.1:30001', 'ftp://127.0.0.1:21'),
    expect: /targets\[0\]\.endpoints\[0\]\.url: expected an http\(s\) URL/,
  },
  {
    name: 'unreadable secret file',
    yaml: GOOD.replace(
      'url: "http://127.0.0.1:30001" }',
      `url: "http://127.0.0.1:30001", bearerTokenFile: ${dir}/nope.key }`,
    ),
    expect: /targets\[0\]\.endpoints\[0\]\.bearerTokenFile: cannot read .*nope\.key: ENOENT/,
  },
  {
    name: 'unset environment variable',
    yaml: GOOD.replace(
      'url: "http://127.0.0.1:30001" }',
      'url: "http://127.0.0.1:30001", bearerToken: "${WW_TEST_UNSET_VAR}" }',
    ),
    expect: /targets\[0\]\.endpoints\[0\]\.bearerToken: environment variable WW_TEST_UNSET_VAR is not set/,
  },
  {
    name: 'wrong type: string for number',
    yaml: GOOD.replace('timeout: 30s }', 'timeout: 30s, maxTokens: "eight" }'),
    expect: /targets\[0\]\.probes\[0\]\.maxTokens: .*expected number/,
  },
  {
    name: 'wrong type: scalar for list',
    yaml: GOOD.replace('    probes:\n', '    watch: /etc/passwd\n    probes:\n'),
    expect: /targets\[0\]\.watch: .*expected array/,
  },
  {
    name: 'unknown probe kind',
    yaml: GOOD.replace('kind: chat', 'kind: chatty'),
    expect:
      /targets\[0\]\.probes\[0\]\.kind: must be one of chat, toolcall, health, serverinfo, canary, structured, longinput, conversation, got "chatty"/,
  },
  {
    // At 4 equal rounds a wait proportional to the context is ~4× round 1's by the last round: 4 could never fail.
    name: 'conversation growth factor it can never reach',
    yaml: GOOD.replace(
      '      - { name: health,',
      '      - { name: talk, kind: conversation, every: 5m, rounds: 4, ttftGrowth: 4 }\n      - { name: health,',
    ),
    expect: /targets\[0\]\.probes\[1\]\.ttftGrowth: ttftGrowth 4 must be below rounds \(4\)/,
  },
  {
    name: 'probe with neither every nor cron',
    yaml: GOOD.replace('every: 15s, ', ''),
    expect: /targets\[0\]\.probes\[0\]\.every: required: give `every`/,
  },
  {
    name: 'probe hop that does not exist',
    yaml: GOOD.replace('timeout: 30s }', 'timeout: 30s, endpoints: [proxy] }'),
    expect: /targets\[0\]\.probes\[0\]\.endpoints\[0\]: no endpoint named "proxy"/,
  },
  {
    name: 'target without endpoints',
    yaml: `targets:\n  - name: x\n    endpoints: []\n`,
    expect: /targets\[0\]\.endpoints: a target needs at least one endpoint/,
  },
  {
    name: 'bad severity in a user rule',
    yaml: GOOD + `rules:\n  - { name: r1, severity: fatal, match: "x" }\n`,
    expect: /rules\[0\]\.severity: /,
  },
  {
    name: 'invalid regex in a user rule',
    yaml: GOOD + `rules:\n  - { name: r1, severity: warning, match: "(unclosed" }\n`,
    expect: /rules\[0\]\.match: invalid regular expression/,
  },
  {
    name: 'invalid target name',
    yaml: GOOD.replace('name: pd', 'name: "has spaces"'),
    expect: /targets\[0\]\.name: a target name may use/,
  },
  {
    name: 'YAML syntax error',
    yaml: 'targets: [\n',
    expect: /YAML: /,
  },
  {
    name: 'duplicate YAML key',
    yaml: GOOD.replace('stateDir:', 'web: {}\nweb: {}\nstateDir:'),
    expect: /YAML: Map keys must be unique/,
  },
  {
    name: 'a recursive wildcard in a log path',
    yaml: GOOD + `    logs: [{ service: prefill, path: "/var/log/**/prefill.log" }]\n`,
    expect: /targets\[0\]\.logs\[0\]\.path: "\*\*" is not supported/,
  },
  {
    name: 'a log source with neither path nor journal',
    yaml: GOOD + `    logs: [{ service: prefill }]\n`,
    expect: /targets\[0\]\.logs\[0\]\.path: give either `path` or `journal`/,
  },
  {
    name: 'a journal source with no unit or match',
    yaml: GOOD + `    logs: [{ service: prefill, journal: {} }]\n`,
    expect: /targets\[0\]\.logs\[0\]\.journal\.unit: give `unit` and\/or `match`/,
  },
  {
    name: 'a journal match that is not FIELD=VALUE',
    yaml: GOOD + `    logs: [{ service: prefill, journal: { match: ["--since=x"] } }]\n`,
    expect: /targets\[0\]\.logs\[0\]\.journal\.match\[0\]: a journal match is FIELD=VALUE/,
  },
  {
    name: 'an unknown log format',
    yaml: GOOD + `    logs: [{ service: prefill, path: /x/p.log, format: xml }]\n`,
    expect: /targets\[0\]\.logs\[0\]\.format: /,
  },
  {
    name: 'the same log path twice',
    yaml: GOOD + `    logs: [{ service: a, path: /x/p.log }, { service: b, path: /x/p.log }]\n`,
    expect: /targets\[0\]\.logs\[1\]\.path: the same path as targets\[0\]\.logs\[0\]/,
  },
  {
    name: 'YAML alias bomb',
    yaml:
      'a: &a [x, x, x, x, x, x, x, x, x, x]\n' +
      Array.from({ length: 9 }, (_, i) => {
        const prev = i === 0 ? 'a' : `b${i - 1}`;
        return `b${i}: &b${i} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
      }).join('\n') +
      '\n',
    expect: /YAML: /,
  },
  {
    name: 'health fields on a chat probe',
    yaml: GOOD.replace('timeout: 30s }', 'timeout: 30s, path: /health, expectStatus: 204 }'),
    expect:
      /targets\[0\]\.probes\[0\]\.path: not a field of a chat probe \(only health and serverinfo probes have it\)[^]*probes\[0\]\.expectStatus: not a field of a chat probe/,
  },
  {
    name: 'chat fields on a health probe',
    yaml: GOOD.replace('path: /health }', 'path: /health, prompt: hi, ttftObjective: 2s }'),
    expect:
      /targets\[0\]\.probes\[1\]\.prompt: not a field of a health probe \(only chat probes have it\)[^]*probes\[1\]\.ttftObjective: not a field of a health probe/,
  },
  {
    name: 'a prompt on a toolcall probe (it sends its own)',
    yaml: GOOD.replace('kind: chat, every: 15s', 'kind: toolcall, every: 15s, prompt: hi'),
    expect: /targets\[0\]\.probes\[0\]\.prompt: not a field of a toolcall probe/,
  },
  {
    name: 'probe without a kind',
    yaml: GOOD.replace('kind: chat, ', ''),
    expect:
      /targets\[0\]\.probes\[0\]\.kind: required: the probe's kind \(chat, toolcall, health, serverinfo, canary, structured, longinput, conversation\)/,
  },
  {
    name: 'a listen address that does not parse',
    yaml: GOOD.replace('stateDir:', 'web: { listenAddress: not-an-address }\nstateDir:'),
    expect: /web\.listenAddress: invalid listen address "not-an-address": expected host:port or :port/,
  },
  {
    name: 'a watched path that never ends',
    yaml: GOOD + `    watch: [/dev/zero]\n`,
    expect: /targets\[0\]\.watch\[0\]: \/dev\/zero is not a regular file/,
  },
  {
    name: 'a watched FIFO',
    yaml: GOOD + `    watch: [${FIFO}]\n`,
    expect: /targets\[0\]\.watch\[0\]: .*serve\.fifo is not a regular file/,
  },
  {
    name: 'a watched directory',
    yaml: GOOD + `    watch: [${dir}]\n`,
    expect: /targets\[0\]\.watch\[0\]: .* is not a regular file/,
  },
  {
    name: 'negative number',
    yaml: GOOD + `    detect: { wedgeAfter: 0 }\n`,
    expect: /targets\[0\]\.detect\.wedgeAfter: /,
  },
];

describe('wedgewatch check', () => {
  it('accepts the good config and the shipped example', async () => {
    const good = await runCli(['check', '--config', write('good.yaml', GOOD)]);
    expect(good.stderr).toBe('');
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(/OK \(1 target\(s\), 2 probe\(s\)/);
    // The traffic cases below each break one field of this: the config itself is good.
    const traffic = await runCli(['check', '--config', write('traffic.yaml', TRAFFIC)]);
    expect(traffic.stderr).toBe('');
    expect(traffic.code).toBe(0);
    const example = await runCli(['check', '--config', 'examples/wedgewatch.yaml']);
    expect(example.stderr).toBe('');
    expect(example.code).toBe(0);
  });

  it('exits 2 and prints what checkConfig says: every case below is judged in-process', async () => {
    const file = write('cli_bad.yaml', CASES[0]!.yaml);
    const res = await runCli(['check', '--config', file]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(CASES[0]!.expect);
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual(checkConfig(file));
  });

  // The CLI's own path is the two tests above; these judge the config itself, in-process (a spawn each was 175 s
  // of the file at load 17).
  const env = { ...process.env, WW_TEST_UNSET_VAR: undefined };

  it.each(CASES)('$name → exit 2 naming the field', ({ name, yaml, expect: re }) => {
    const file = write(`${name.replace(/\W+/g, '_')}.yaml`, yaml);
    const res = checkConfig(file, env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(re);
  });

  it.each(TRAFFIC_CASES)('traffic path: $name → exit 2 naming the field', ({ name, yaml, expect: re }) => {
    const file = write(`traffic_${name.replace(/\W+/g, '_')}.yaml`, yaml);
    expect(yaml, 'the case changes the good traffic config').not.toBe(TRAFFIC);
    const res = checkConfig(file, env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(re);
  });

  it('reports every problem of a file at once, not just the first', () => {
    const bad =
      GOOD.replace('timeout: 5s', 'timeout: abc').replace('kind: chat', 'kind: nope') + 'extra: 1\n';
    try {
      parseConfigText(bad, 'x.yaml', {});
      expect.unreachable('a bad config must throw');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/probes\[1\]\.timeout/);
      expect(problems).toMatch(/probes\[0\]\.kind/);
      expect(problems).toMatch(/extra: unknown key/);
    }
  });

  it('fills defaults and parses durations to milliseconds', () => {
    const { config } = parseConfigText(GOOD, 'x.yaml', {});
    expect(config.web.listenAddress).toBe(':9787');
    expect(config.web.enableLifecycle).toBe(false);
    const [chat, health] = config.targets[0]!.probes;
    expect(chat!.every).toBe(15_000);
    expect(chat).toMatchObject({ kind: 'chat', maxTokens: 8 });
    expect(health!.timeout).toBe(5_000);
    expect(config.targets[0]!.detect.stallAfter).toBe(60_000);
  });

  it('expands ${VAR} and bearerTokenFile into headers and records them as secrets', () => {
    const tokenFile = write('token.key', 'file-token-1234\n');
    // A function replacement: in a replacement string `$$` would itself mean `$`.
    const yaml = GOOD.replace('      - { name: router, url: "http://127.0.0.1:30001" }', () =>
      [
        '      - { name: proxy, url: "https://p.example:8443", bearerToken: "${WW_KEY}", headers: { X-Team: "$${literal}" } }',
        `      - { name: router, url: "http://127.0.0.1:30001", bearerTokenFile: ${tokenFile} }`,
      ].join('\n'),
    );
    const loaded = parseConfigText(yaml, join(dir, 'x.yaml'), { WW_KEY: 'env-secret-9876' });
    const h = loaded.headers.get('pd')!;
    expect(h.get('proxy')).toEqual({ 'X-Team': '${literal}', Authorization: 'Bearer env-secret-9876' });
    expect(h.get('router')).toEqual({ Authorization: 'Bearer file-token-1234' });
    expect(loaded.secrets).toEqual(expect.arrayContaining(['env-secret-9876', 'file-token-1234']));
  });
});
