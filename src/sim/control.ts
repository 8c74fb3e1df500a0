// The simulator's control API (JSON, own port): GET /faults, POST /faults/:name (body = params),
// DELETE /faults/:name, POST /services/:name/restart, GET /services/:name/dump (a py-spy-style thread dump
// of prefill or decode, text), GET /state.
import { FaultError } from './faults/set.js';
import { FAULTS } from './faults/registry.js';
import {
  faultDefaults,
  faultEngines,
  type FaultName,
  type FaultParams,
  type SimEngine,
} from './faults/types.js';
import { pathOf, readBody, sendJson, type Handler } from './http.js';

export interface ControlTarget {
  /** Which simulator this is (default sglang): GET /faults lists the faults that apply to it. */
  engine?: SimEngine;
  faultsEnabled(): Record<string, unknown>;
  enableFault(name: FaultName, params?: FaultParams): Promise<void>;
  disableFault(name: FaultName): Promise<void>;
  /** Called only for a service hasService accepted. */
  restart(service: string): Promise<void>;
  state(): Record<string, unknown>;
  hasService(service: string): boolean;
  dump(service: 'prefill' | 'decode'): string;
}

export function controlHandler(sim: ControlTarget): Handler {
  return (req, res) => {
    void (async () => {
      const path = pathOf(req);
      const fault = /^\/faults\/([a-z_]+)$/.exec(path)?.[1];
      const service = /^\/services\/([a-z]+)\/restart$/.exec(path)?.[1];
      const dumped = /^\/services\/([a-z]+)\/dump$/.exec(path)?.[1];
      try {
        if (req.method === 'GET' && path === '/faults') {
          const available = Object.values(FAULTS)
            .filter((f) => faultEngines(f).includes(sim.engine ?? 'sglang'))
            .map((f) => ({
              name: f.name,
              summary: f.summary,
              engines: faultEngines(f),
              params: f.params,
              defaults: faultDefaults(f),
            }));
          return sendJson(res, 200, { available, enabled: sim.faultsEnabled() });
        }
        if (req.method === 'GET' && path === '/state') return sendJson(res, 200, sim.state());
        if (dumped && req.method === 'GET') {
          if (dumped !== 'prefill' && dumped !== 'decode')
            return sendJson(res, 404, { error: `no thread dump for ${JSON.stringify(dumped)}` });
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
          res.end(sim.dump(dumped));
          return;
        }
        if (fault && req.method === 'POST') {
          const params = parseParams(await readBody(req, 64 * 1024));
          await sim.enableFault(fault as FaultName, params);
          return sendJson(res, 200, { enabled: sim.faultsEnabled() });
        }
        if (fault && req.method === 'DELETE') {
          await sim.disableFault(fault as FaultName);
          return sendJson(res, 200, { enabled: sim.faultsEnabled() });
        }
        if (service && req.method === 'POST') {
          if (!sim.hasService(service))
            return sendJson(res, 404, { error: `no service ${JSON.stringify(service)}` });
          await sim.restart(service);
          return sendJson(res, 200, { restarted: service });
        }
        sendJson(res, 404, { error: `no route for ${req.method} ${path}` });
      } catch (err) {
        const status =
          err instanceof FaultError || err instanceof SyntaxError || err instanceof TypeError ? 400 : 500;
        sendJson(res, status, { error: (err as Error).message });
      }
    })();
  };
}

function parseParams(text: string): FaultParams {
  if (text.trim() === '') return {};
  const body: unknown = JSON.parse(text);
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new TypeError('params must be a JSON object');
  const out: FaultParams = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'number' && typeof v !== 'string')
      throw new TypeError(`param ${k}: expected a number or a string`);
    out[k] = v;
  }
  return out;
}
