/** Parses an exporter-style listen address: ":9787", "127.0.0.1:9787", "[::1]:9787". */
export function parseListenAddress(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  if (!m) throw new Error(`invalid listen address ${JSON.stringify(addr)}: expected host:port or :port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listen address ${JSON.stringify(addr)}: port out of range`);
  const host = m[1] ?? (m[2] === '' ? '0.0.0.0' : m[2]!);
  return { host, port };
}
