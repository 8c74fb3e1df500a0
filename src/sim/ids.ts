// Identifiers shaped like SGLang's: request ids are uuid4 hex, bootstrap rooms random 63-bit-ish integers,
// tool call ids `call_<24 hex>` (serving_chat: f"call_{uuid.uuid4().hex[:24]}").
import { randomBytes, randomInt } from 'node:crypto';

export function newRid(): string {
  return randomBytes(16).toString('hex');
}

/** Kept below 2^53 so the room survives a JSON round trip in tests. */
export function newRoom(): number {
  return randomInt(1, 2 ** 47) * 64 + randomInt(0, 64);
}

export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export function newCompletionId(): string {
  return randomBytes(16).toString('hex');
}
