// Generic Python signatures. Any dead worker thread is a wedge risk: the process keeps running (exit 0
// of the thread only) and /health stays 200 (engine-signals.md §1.1).
import type { RulePack } from './types.js';

export const pythonPack: RulePack = {
  name: 'python',
  engineLines: [],
  rules: [
    // `Exception in thread Thread-3 (forward_thread_func):` (3.10+) or `Exception in thread Thread-3:` (older,
    // or a thread with a name of its own), then the traceback, whose last line names the exception.
    {
      name: 'python_thread_exception',
      class: 'thread_death',
      severity: 'critical',
      match: String.raw`^Exception in thread (?<thread>.+?)(?: \((?<target>[\w.<>]+)\))?:\s*$`,
      follows: {
        match: String.raw`^(?<exception>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))(?:: ?(?<message>.*?))?\s*$`,
        within: 100,
      },
    },
  ],
};
