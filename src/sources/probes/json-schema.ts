// The JSON Schema subset the probes' own schemas use (tool parameters, structured-output schemas): type,
// properties, required, additionalProperties: false, enum, items, minimum/maximum, minLength/maxLength,
// pattern. The probes write these schemas themselves, so a full validator would be weight without use.

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: unknown[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  description?: string;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The first way `value` breaks `schema`, as a path and a reason; undefined when it validates. */
export function validate(value: unknown, schema: JsonSchema, path = '$'): string | undefined {
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const ok = schema.type === 'number' ? t === 'number' || t === 'integer' : t === schema.type;
    if (!ok) return `${path}: expected ${schema.type}, got ${t}`;
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => e === value)) {
    return `${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${path}: below ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${path}: above ${schema.maximum}`;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      return `${path}: shorter than ${schema.minLength}`;
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      return `${path}: longer than ${schema.maxLength}`;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      return `${path}: does not match ${schema.pattern}`;
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const p = validate(value[i], schema.items, `${path}[${i}]`);
      if (p) return p;
    }
  }
  if (t === 'object') {
    const obj = value as Record<string, unknown>;
    for (const k of schema.required ?? []) if (!(k in obj)) return `${path}: missing required "${k}"`;
    for (const [k, v] of Object.entries(obj)) {
      const sub = schema.properties?.[k];
      if (sub) {
        const p = validate(v, sub, `${path}.${k}`);
        if (p) return p;
      } else if (schema.additionalProperties === false) return `${path}: unexpected property "${k}"`;
    }
  }
  return undefined;
}
