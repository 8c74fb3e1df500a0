// Declarations for the undici files src/lib/http/undici.ts loads directly (undici ships types for its index only).
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}
declare module 'undici/lib/dispatcher/client.js' {
  const Client: typeof import('undici').Client;
  export default Client;
}
declare module 'undici/lib/dispatcher/pool.js' {
  const Pool: typeof import('undici').Pool;
  export default Pool;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: typeof import('undici').Dispatcher;
  export default Dispatcher;
}
declare module 'undici/lib/api/index.js' {
  const api: Record<string, unknown>;
  export default api;
}
