// replay's timeline reads the detect defaults from a plain module (no zod at start-up): they must be the schema's.
import { describe, expect, it } from 'vitest';
import { DETECT_DEFAULTS } from '../../src/core/detect-settings.js';
import { detectSchema } from '../../src/config/schema.js';

describe('DETECT_DEFAULTS', () => {
  it('equals what the config schema gives a target without detect:', () => {
    expect({ ...DETECT_DEFAULTS }).toEqual(detectSchema.parse({}));
  });
});
