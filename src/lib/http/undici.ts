// The parts of undici the daemon uses (Agent, Client, Pool and their .request), loaded from undici's own files
// instead of its index. The index (`import … from 'undici'`) also loads fetch, WebSocket, EventSource, the cache
// stores, the mock agents and every interceptor — ~80 more modules and ~8 MB resident that no code path here runs
// (measured on Node 20: require('undici') 59 MB RSS, these files 51 MB, bare node 39 MB). undici 7's package.json
// has no "exports" map, so these paths are public in practice; test/http/undici.test.ts pins that they still
// resolve and behave like the index's classes. Types come from the index's declarations (type-only, erased).
import type * as Undici from 'undici';
import AgentImpl from 'undici/lib/dispatcher/agent.js';
import ClientImpl from 'undici/lib/dispatcher/client.js';
import DispatcherImpl from 'undici/lib/dispatcher/dispatcher.js';
import PoolImpl from 'undici/lib/dispatcher/pool.js';
import api from 'undici/lib/api/index.js';

// undici's index does exactly this (index.js: `Object.assign(Dispatcher.prototype, api)`): request, stream,
// pipeline, upgrade and connect are mixed into every dispatcher there, not defined on the classes.
Object.assign(DispatcherImpl.prototype, api);

export const Agent = AgentImpl;
export const Client = ClientImpl;
export const Pool = PoolImpl;
export type Agent = Undici.Agent;
export type Client = Undici.Client;
export type Pool = Undici.Pool;
export type Dispatcher = Undici.Dispatcher;

export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  dispatcher: Undici.Dispatcher;
  method?: Undici.Dispatcher.HttpMethod;
};

/**
 * undici's top-level `request(url, opts)` for a given dispatcher (index.js makeDispatcher): the URL splits into
 * origin and path (query kept), GET unless a method is given.
 */
export function request(url: string | URL, opts: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher, ...rest } = opts;
  return dispatcher.request({
    ...rest,
    origin: u.origin,
    path: u.search ? `${u.pathname}${u.search}` : u.pathname,
    method: opts.method ?? 'GET',
  });
}
