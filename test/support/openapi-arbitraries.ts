import fc from 'fast-check';

/**
 * fast-check arbitraries from the OpenAPI document's JSON Schemas: values that match a schema
 * (patterns through fc.stringMatching, bounds, enums, required and optional properties, `oneOf`s)
 * and values that break it in one place (a required property left out, a property of the wrong
 * type or a hostile string, an unknown property). The document's own subset of JSON Schema is
 * covered; anything else falls back to any JSON value.
 */

type Schema = { readonly [keyword: string]: unknown };
type Json = unknown;

/** A lookahead group without nested groups, as the documents' patterns write them. */
const LOOKAHEAD = /\(\?[=!][^()]*\)/g;

export interface SchemaArbitraries {
  /** Values that match the schema. */
  valid(schema: Schema): fc.Arbitrary<Json>;
  /** Values of the schema's shape, each wrong in one place (or wholly of another type). */
  invalid(schema: Schema): fc.Arbitrary<Json>;
}

const MAX_DEPTH = 6;

export function schemaArbitraries(document: { components?: { schemas?: Record<string, Schema> } }, hostile: fc.Arbitrary<string>, anyJson: fc.Arbitrary<Json>): SchemaArbitraries {
  const resolve = (schema: Schema): Schema => {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const name = ref.split('/').pop() as string;
    const target = document.components?.schemas?.[name];
    if (target === undefined) throw new Error(`unknown schema ${ref}`);
    return resolve(target);
  };

  const stringOf = (schema: Schema): fc.Arbitrary<string> => {
    if (typeof schema.pattern === 'string') {
      const anchored = schema.pattern.startsWith('^') ? schema.pattern : `^.*${schema.pattern}.*$`;
      const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
      const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.MAX_SAFE_INTEGER;
      // fast-check generates from no lookahead (`(?!topup:)` of a funding reference): generate without them, keep what the whole pattern matches.
      const whole = new RegExp(anchored);
      return fc.stringMatching(new RegExp(anchored.replace(LOOKAHEAD, ''))).filter((value) => whole.test(value) && [...value].length >= min && [...value].length <= max);
    }
    if (schema.format === 'email') return fc.emailAddress().filter((value) => value.length <= (typeof schema.maxLength === 'number' ? schema.maxLength : 254));
    if (schema.format === 'date-time')
      return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
    const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const maxLength = typeof schema.maxLength === 'number' ? Math.min(schema.maxLength, 64) : 40;
    return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
  };

  const ofType = (type: string, schema: Schema, depth: number): fc.Arbitrary<Json> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({
          min: typeof schema.minimum === 'number' ? schema.minimum : -1_000_000,
          max: typeof schema.maximum === 'number' ? Math.min(schema.maximum, Number.MAX_SAFE_INTEGER) : 1_000_000,
        });
      case 'number':
        return fc.double({
          min: typeof schema.minimum === 'number' ? schema.minimum : -1e6,
          max: typeof schema.maximum === 'number' ? schema.maximum : 1e6,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'string':
        // The document's examples pass (the conformance suite sends them): one value that matches where no pattern can say how.
        return typeof schema.example === 'string' ? fc.oneof(fc.constant(schema.example), stringOf(schema)) : stringOf(schema);
      case 'array': {
        const items = schema.items === undefined ? anyJson : valid(schema.items as Schema, depth + 1);
        const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
        const maxLength = Math.max(minLength, Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 4, 4));
        return fc.array(items, { minLength, maxLength });
      }
      case 'object':
        return objectOf(schema, depth);
      default:
        return anyJson;
    }
  };

  const objectOf = (schema: Schema, depth: number): fc.Arbitrary<Json> => {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = (schema.required ?? []) as string[];
    // A `oneOf` of `required` lists (exactly one of nin or bvn): each branch requires its own and leaves out the others'.
    const branches =
      Array.isArray(schema.oneOf) && (schema.oneOf as Schema[]).every((branch) => Array.isArray(branch.required) && branch.properties === undefined)
        ? (schema.oneOf as { required: string[] }[])
        : [{ required: [] }];
    const variants = branches.map((branch) => {
      const excluded = branches.flatMap((other) => (other === branch ? [] : other.required));
      const wanted = new Set([...required, ...branch.required]);
      const model: Record<string, fc.Arbitrary<Json>> = {};
      for (const [name, property] of Object.entries(properties)) if (!excluded.includes(name)) model[name] = valid(property, depth + 1);
      return fc.record(model, { requiredKeys: [...wanted].filter((name) => name in model) });
    });
    const fixed = fc.oneof(...variants);
    if (schema.additionalProperties === undefined || typeof schema.additionalProperties === 'boolean' || Object.keys(properties).length > 0) return fixed;
    // A map (prices by scope): keys from propertyNames, values from additionalProperties.
    const keys = schema.propertyNames === undefined ? fc.string({ maxLength: 20 }) : (valid(schema.propertyNames as Schema, depth + 1) as fc.Arbitrary<string>);
    const maxKeys = typeof schema.maxProperties === 'number' ? schema.maxProperties : 4;
    return fc.dictionary(keys, valid(schema.additionalProperties as Schema, depth + 1), { maxKeys, minKeys: typeof schema.minProperties === 'number' ? schema.minProperties : 0 });
  };

  function valid(given: Schema, depth = 0): fc.Arbitrary<Json> {
    const schema = resolve(given);
    if (depth > MAX_DEPTH) return fc.constant(null);
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
    if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map((branch) => valid(branch, depth + 1)));
    if (Array.isArray(schema.oneOf) && schema.type === undefined) return fc.oneof(...(schema.oneOf as Schema[]).map((branch) => valid(branch, depth + 1)));
    // DataSubject: exactly one of its properties.
    if (schema.maxProperties === 1 && schema.properties !== undefined) {
      return fc.oneof(...Object.entries(schema.properties as Record<string, Schema>).map(([name, property]) => valid(property, depth + 1).map((value) => ({ [name]: value }))));
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
    if (types.length === 0) return anyJson;
    return fc.oneof(...types.map((type) => ofType(type, schema, depth)));
  }

  function invalid(given: Schema): fc.Arbitrary<Json> {
    const schema = resolve(given);
    const wrongValue = fc.oneof(hostile, anyJson, fc.integer(), fc.constant(null), fc.constantFrom('', ' ', '\u0000', '\uD800', 'a'.repeat(70)));
    const properties = Object.keys((schema.properties ?? {}) as Record<string, Schema>);
    const required = (schema.required ?? []) as string[];
    const mutations: fc.Arbitrary<Json>[] = [fc.oneof(anyJson, hostile)];
    const base = valid(schema) as fc.Arbitrary<Json>;
    if (required.length > 0) {
      mutations.push(fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) => omit(value, name)));
    }
    if (properties.length > 0) {
      mutations.push(fc.tuple(base, fc.constantFrom(...properties), wrongValue).map(([value, name, wrong]) => withProperty(value, name, wrong)));
    }
    mutations.push(
      fc.tuple(base, fc.oneof(hostile, fc.constantFrom('__proto__', 'constructor', 'extra')), wrongValue).map(([value, name, wrong]) => withProperty(value, name, wrong)),
    );
    return fc.oneof(...mutations);
  }

  return { valid: (schema) => valid(schema), invalid };
}

function omit(value: Json, name: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const { [name]: _left, ...rest } = value as Record<string, Json>;
  return rest;
}

function withProperty(value: Json, name: string, wrong: Json): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { [name]: wrong };
  // defineProperty, so that `__proto__` is an own property as it would be in parsed JSON.
  const copy = { ...(value as Record<string, Json>) };
  Object.defineProperty(copy, name, { value: wrong, enumerable: true, writable: true, configurable: true });
  return copy;
}
