// @ts-check
// Failing servers for bench/soak.mjs, run in a worker thread so their work does not count against the
// daemon's event loop: refused port, HTTP 500, a stall (never answers), a stream cut mid-flight, garbage SSE.
import http from 'node:http';
import { setImmediate } from 'node:timers';
import { parentPort } from 'node:worker_threads';

/** @type {Set<import('node:net').Socket>} */
const sockets = new Set();

/**
 * @param {http.RequestListener} handler
 * @returns {Promise<http.Server>}
 */
function serve(handler) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The port number of a listening server. @param {http.Server} s */
const portOf = (s) => {
  const addr = s.address();
  if (addr === null || typeof addr === 'string') throw new Error('no TCP address for a listening server');
  return addr.port;
};

/** @type {number} */
const refusedPort = await new Promise((resolve) => {
  const s = http.createServer();
  s.listen(0, '127.0.0.1', () => {
    const port = portOf(s);
    s.close(() => resolve(port));
  });
});

const servers = {
  http500: await serve((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"internal error","type":"server_error"}}');
  }),
  stall: await serve((req) => {
    req.resume(); // never answers: the probe times out and disconnects
  }),
  midstream: await serve((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"O"}}]}\n\n');
    setImmediate(() => res.socket?.destroy());
  }),
  garbage: await serve((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {not json\n\ndata: [DONE]\n\n');
  }),
};

// Run as a child process (the soak's RSS figures are then the watchdog's alone), or as a worker.
/** @param {unknown} m */
const send = (m) => (parentPort ? parentPort.postMessage(m) : process.send?.(m));
/** @param {(m: unknown) => void} fn */
const onMessage = (fn) => (parentPort ? parentPort.on('message', fn) : process.on('message', fn));

send({
  urls: {
    refused: `http://127.0.0.1:${refusedPort}`,
    ...Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, `http://127.0.0.1:${portOf(s)}`])),
  },
});

onMessage((m) => {
  if (m === 'stop') {
    for (const s of sockets) s.destroy();
    Promise.all(Object.values(servers).map((s) => new Promise((r) => s.close(() => r(undefined))))).then(() =>
      process.exit(0),
    );
  }
});
