// HAProxy's agent-check port: one TCP port for every server HAProxy checks. HAProxy connects, sends its
// `agent-send` string if the server line has one, and reads one line (configuration.txt §5.2 "agent-check" and
// "agent-send", Debian haproxy 2.6). The server is named by that string, or by the address HAProxy connects from
// (its `source`), per the `agent.servers` mapping. What is read is bounded (one short line, one deadline per
// connection) and only looked up, never echoed: the network cannot make the agent say anything the verdict
// did not.
import { createServer, type Server, type Socket } from 'node:net';
import type { AgentConfig, AgentServerConfig } from '../../config/traffic-schema.js';
import type { Logger } from '../../lib/logger.js';
import type { TrafficMetrics } from '../../metrics.js';
import { agentReply } from './agent-reply.js';
import type { TrafficView } from './view.js';

/** The longest agent-send line read; HAProxy's names are short, anything longer is not ours to parse. */
export const MAX_AGENT_LINE = 256;
/** After bytes without a line end (an agent-send without "\n"), this much quiet ends the name. */
const QUIET_MS = 100;
/** Unknown callers are logged at most this often per address, so a misconfigured HAProxy cannot flood the log. */
const LOG_EVERY_MS = 60_000;
const LOGGED_ADDRESSES = 256;

export interface AgentServerOptions {
  config: AgentConfig;
  /** config.listenAddress parsed (the daemon's parseListenAddress). */
  listen: { host: string; port: number };
  /** The current view (a reload replaces it, so it is looked up per connection). */
  view: () => TrafficView | undefined;
  metrics?: Pick<TrafficMetrics, 'agentChecks'>;
  logger: Logger;
  now?: () => number;
}

/** "::ffff:127.0.0.1" (an IPv4 peer on a dual-stack socket) is 127.0.0.1. */
const plainAddress = (a: string | undefined): string =>
  (a ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');

export class AgentServer {
  private server: Server | undefined;
  private config: AgentConfig;
  private readonly sockets = new Set<Socket>();
  private readonly logged = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly opts: AgentServerOptions) {
    this.config = opts.config;
    this.now = opts.now ?? Date.now;
  }

  /** A reload's new mapping and answers apply to the next connection (the listen address is restart-only). */
  setConfig(config: AgentConfig): void {
    this.config = config;
    if (this.server) this.server.maxConnections = config.maxConnections;
  }

  async start(): Promise<void> {
    const { host, port } = this.opts.listen;
    const server = createServer((socket) => this.handle(socket));
    server.maxConnections = this.config.maxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.opts.logger.error({ err: String(err) }, 'agent-check port error'));
    this.server = server;
  }

  /** host:port actually bound (port 0 picks one). */
  address(): { host: string; port: number } {
    const a = this.server?.address();
    if (a === null || a === undefined || typeof a === 'string')
      throw new Error('the agent port is not listening');
    return { host: a.address, port: a.port };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(socket: Socket): void {
    this.sockets.add(socket);
    const cfg = this.config;
    const remote = plainAddress(socket.remoteAddress);
    const byAddress = cfg.servers.filter((s) => s.from === remote);
    let done = false;
    let quiet: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => finish(buffered()), cfg.timeout);
    const chunks: Buffer[] = [];
    let size = 0;
    const buffered = () => Buffer.concat(chunks).toString('latin1');
    const finish = (name: string | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(quiet);
      const server = this.resolve(cfg, name, byAddress, remote);
      this.answer(socket, cfg, server, remote, name === undefined || name === '' ? 'timeout' : 'unknown');
    };
    socket.on('close', () => {
      this.sockets.delete(socket);
      done = true;
      clearTimeout(deadline);
      clearTimeout(quiet);
    });
    socket.on('error', () => socket.destroy());
    // An address that names one server alone, when it has no name to wait for: answered at once.
    if (byAddress.length === 1 && byAddress[0]!.name === undefined) {
      finish(undefined);
      return;
    }
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      const end = chunk.findIndex((b) => b === 0x0a || b === 0x0d);
      const take = end === -1 ? chunk : chunk.subarray(0, end);
      size += take.length;
      if (size > MAX_AGENT_LINE) {
        // Not an agent-send name: answer nothing rather than guess.
        done = true;
        clearTimeout(deadline);
        this.count('unknown', 'unknown');
        socket.destroy();
        return;
      }
      chunks.push(take);
      clearTimeout(quiet);
      if (end !== -1) finish(buffered());
      else quiet = setTimeout(() => finish(buffered()), QUIET_MS);
    });
  }

  private resolve(
    cfg: AgentConfig,
    name: string | undefined,
    byAddress: AgentServerConfig[],
    remote: string,
  ): AgentServerConfig | undefined {
    const said = name?.trim();
    if (said !== undefined && said !== '') {
      return cfg.servers.find((s) => s.name === said && (s.from === undefined || s.from === remote));
    }
    return byAddress.length === 1 ? byAddress[0] : undefined;
  }

  private answer(
    socket: Socket,
    cfg: AgentConfig,
    server: AgentServerConfig | undefined,
    remote: string,
    miss: 'unknown' | 'timeout',
  ): void {
    const a = server && this.opts.view()?.get(server.target, server.endpoint);
    if (server === undefined || a === undefined) {
      this.count('unknown', miss);
      this.logUnknown(remote, miss);
      // No line: HAProxy keeps the server's state ("Ignoring incomplete line from agent") instead of a guess.
      socket.end();
      return;
    }
    if (a.state === 'unknown') {
      // No verdict yet (the daemon just started or reloaded): no line, so HAProxy keeps the server as it was. A
      // restart of wedgewatch must not take every backend out of rotation until the first verdicts come in.
      this.count(server.name ?? server.from ?? 'unknown', 'no_verdict');
      socket.end();
      return;
    }
    const { line, answer } = agentReply(a, cfg);
    this.count(server.name ?? server.from ?? 'unknown', answer);
    socket.end(line);
  }

  private count(server: string, answer: string): void {
    this.opts.metrics?.agentChecks.inc({ server, answer });
  }

  private logUnknown(remote: string, miss: 'unknown' | 'timeout'): void {
    const now = this.now();
    const last = this.logged.get(remote);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    if (this.logged.size >= LOGGED_ADDRESSES) this.logged.clear();
    this.logged.set(remote, now);
    this.opts.logger.warn(
      { component: 'agent', remote },
      miss === 'timeout'
        ? 'agent check: no agent-send name arrived and the address names no single server; answered nothing'
        : 'agent check: the agent-send name (or address) matches no agent.servers entry; answered nothing',
    );
  }
}
