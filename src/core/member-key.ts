// How readiness, pools, the agent and drains name a backend. Here, not beside the traffic schema: the daemon's
// traffic path needs it at run time, and the schema module would bring zod into the daemon's chunks
// (test/cli/bundle.test.ts: the daemon validates its config in a child process and never loads zod itself).

/** "target" or "target/endpoint". */
export function memberKey(target: string, endpoint?: string): string {
  return endpoint === undefined ? target : `${target}/${endpoint}`;
}
