// An engine (or one data-parallel rank) that makes tokens, but at a crawl (EVIDENCE `engine`): its tokens per second
// per running request below crawlFraction of its own trailing baseline for stallAfter (engine-evidence.ts
// judgeCrawl). A stall (no tokens at all) is its own, more specific, diagnosis: a stalled engine is left to it.
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

export const engineCrawling: Family = (s, now, _cfg, sym) => {
  const engines = Object.values(s.engines);
  if (engines.some((e) => e.stalled)) return [];
  for (const e of engines) {
    const rank = Object.entries(e.ranks ?? {}).find(([, r]) => r.crawl?.crawling === true);
    const c = e.crawl?.crawling === true ? e.crawl : rank?.[1].crawl;
    if (c === undefined) continue;
    const who = e.crawl?.crawling === true ? e.service : `${e.service} rank ${rank![0]}`;
    const running = e.crawl?.crawling === true ? e.running : rank![1].running;
    const pct = Math.round((c.ratio ?? 0) * 1000) / 10;
    return [
      candidate(
        'engine_crawling',
        `${who} makes ${pct} % of its own tokens per running request (${running} running) for ${Math.round((now - c.belowSince!) / 1000)} s${sym.stuck ? '; completions fail or hang' : ''}`,
      ),
    ];
  }
  return [];
};
