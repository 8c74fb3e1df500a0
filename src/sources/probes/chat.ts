// chat: a tiny streamed completion through the hop, finished to [DONE]. The ground truth of a wedge.
import type { ProbeOf } from '../../config/schema.js';
import { runChatStream } from './chat-stream.js';
import type { ProbeFn } from './types.js';

export const chatProbe: ProbeFn<ProbeOf<'chat'>> = async (ctx) => {
  const s = await runChatStream(ctx, {});
  return { result: 'ok', status: s.status, tokens: s.tokens, tokensPerSecond: s.tokensPerSecond };
};
