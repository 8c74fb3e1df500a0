// Failing servers for bench/soak.mjs, run in a worker thread so their work does not count against the
// daemon's event loop: refused port, HTTP 500, a stall (never answers), a stream cut mid-flight, garbage SSE.
import http from 'node:http';
import { setImmediate } from 'node:timers';
import { parentPort } from 'node:worker_threads';

const sockets = new Set();

function serve(handler) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const refusedPort = await new Promise((resolve) => {
  const s = http.createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
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
const send = (m) => (parentPort ? parentPort.postMessage(m) : process.send(m));
const onMessage = (fn) => (parentPort ? parentPort.on('message', fn) : process.on('message', fn));

send({
  urls: {
    refused: `http://127.0.0.1:${refusedPort}`,
    ...Object.fromEntries(
      Object.entries(servers).map(([k, s]) => [k, `http://127.0.0.1:${s.address().port}`]),
    ),
  },
});

onMessage((m) => {
  if (m === 'stop') {
    for (const s of sockets) s.destroy();
    Promise.all(Object.values(servers).map((s) => new Promise((r) => s.close(r)))).then(() =>
      process.exit(0),
    );
  }
});
