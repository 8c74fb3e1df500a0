// @ts-check
// Preloaded into the daemon (`node --import`) by bench:adversarial's finding 6: a wall-clock step as the kernel
// makes one. CLOCK_REALTIME jumps, CLOCK_MONOTONIC does not: Date (Date.now, new Date()) moves by the offset
// in the file named by WW_BENCH_CLOCK_FILE (ms, re-read every 100 ms), while performance.now, process.hrtime
// and libuv's timers (monotonic) are left alone. No faketime needed, and no interface of the daemon assumed.
/* global setInterval */
import { readFileSync } from 'node:fs';

const file = process.env.WW_BENCH_CLOCK_FILE;
if (file) {
  const RealDate = Date;
  let offset = 0;
  const read = () => {
    try {
      const v = Number(readFileSync(file, 'utf8').trim());
      if (Number.isFinite(v)) offset = v;
    } catch {
      // no file yet: no step
    }
  };
  read();
  setInterval(read, 100).unref();
  class ShiftedDate extends RealDate {
    /** @param {[] | [string | number | Date] | [number, number, ...number[]]} args Date's own overloads */
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else if (args.length === 1) super(args[0]);
      else {
        const [y, m, ...rest] = /** @type {[number, number, ...number[]]} */ (args);
        super(y, m, ...rest);
      }
    }
    /** @override */
    static now() {
      return RealDate.now() + offset;
    }
  }
  // The subclass is a Date constructor for every use the daemon makes (new Date(), new Date(x), Date.now()).
  globalThis.Date = /** @type {DateConstructor} */ (/** @type {unknown} */ (ShiftedDate));
}
