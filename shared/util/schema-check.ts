/**
 * A JSON Schema checker for the schemas Svc validates on its hot paths: the audit envelope and its
 * content rules (shared/audit/envelope.ts) and the queue codec (shared/queue/codec.ts). It is here,
 * and not ajv, because those run in the Lambda functions, whose bundles must stay small and start
 * fast (issue 13: ajv is ≈ 120 KB of a bundle and compiles each schema on first use); the config
 * loader and the platform response checks, which run on the edge only, keep ajv.
 *
 * It understands exactly the keywords those schemas use (below) and refuses any other at compile
 * time, as ajv's strict mode does, so a schema cannot silently stop being checked. Its answers are
 * ajv's (draft-07, `allErrors`, no coercion, `unicode` string lengths, `strictNumbers`): the same
 * error objects — `instancePath`, `keyword`, `params`, `message`, `parentSchema` — in the same order,
 * so the messages clients and logs see did not change when it replaced ajv
 * (test/shared/util/schema-check.test.ts compares the two on the same inputs).
 *
 * `check` is the fast path: true/false, stopping at the first failure, no allocation. `errors` walks
 * everything and reports every problem; call it only after `check` said no.
 */
import { isRecord } from './records.js';

/** One problem, shaped like ajv's ErrorObject (verbose). */
export interface SchemaError {
  /** JSON pointer of the value: for `required` and `additionalProperties` the object holding it. */
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
  /** The schema holding the keyword (its annotations, such as `x-message`, say more). */
  parentSchema: Readonly<Record<string, unknown>>;
}

export interface SchemaChecker<T> {
  check(value: unknown): value is T;
  /** Every problem of `value` (empty when it is valid). */
  errors(value: unknown): SchemaError[];
}

export interface SchemaCheckOptions {
  /** Named string formats (`format: name`); a format not listed here is refused at compile time. */
  formats?: Readonly<Record<string, (text: string) => boolean>>;
  /** Keywords that only annotate (read by the caller from `parentSchema`), e.g. `x-message`. */
  annotations?: readonly string[];
}

/**
 * `compileSchema` at the first `check` or `errors`, not now: a module that only exports a schema, or
 * a function that never meets the case (a bad message, an event type), pays nothing at cold start.
 */
export function lazyChecker<T>(schema: object, options: SchemaCheckOptions = {}): SchemaChecker<T> {
  let compiled: SchemaChecker<T> | undefined;
  const checker = (): SchemaChecker<T> => (compiled ??= compileSchema<T>(schema, options));
  return {
    check: (value: unknown): value is T => checker().check(value),
    errors: (value: unknown) => checker().errors(value),
  };
}

/** Keywords every schema may carry without effect. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$id', '$comment']);

type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
const JSON_TYPES = new Set<string>(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/**
 * A compiled node: returns whether `value` is valid. With `out` null it stops at the first failure
 * and `path` is not maintained; with `out` it appends every error and `path` is the value's pointer.
 */
type Node = (value: unknown, path: string, out: SchemaError[] | null) => boolean;

function isType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
  }
}

/** Length in Unicode code points, as ajv counts by default (an emoji is one). */
function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    n += 1;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i += 1;
    }
  }
  return n;
}

/** A JSON pointer segment (RFC 6901). */
const pointer = (key: string): string => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const num = (schema: Record<string, unknown>, keyword: string, where: string): number => {
  const v = schema[keyword];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${where}: ${keyword} must be a number`);
  return v;
};

/** The keyword checks of one group (numbers, strings, arrays, objects), in ajv's order. */
interface Rule {
  keyword: string;
  /** Valid? On failure `fail` gives the error's params and message. */
  test: (value: never, path: string, out: SchemaError[] | null) => boolean;
  fail?: (value: never) => { params: Record<string, unknown>; message: string };
}

/** Compiles `schema`; throws on a keyword, type or format it does not understand, naming where. */
export function compileSchema<T>(schema: object, options: SchemaCheckOptions = {}): SchemaChecker<T> {
  const formats = options.formats ?? {};
  const annotations = new Set([...ANNOTATIONS, ...(options.annotations ?? [])]);
  const root = compileNode(schema, '#', formats, annotations);
  return {
    check: (value: unknown): value is T => root(value, '', null),
    errors(value: unknown): SchemaError[] {
      const out: SchemaError[] = [];
      root(value, '', out);
      return out;
    },
  };
}

const KNOWN = new Set([
  'type',
  'const',
  'anyOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'patternProperties',
  'additionalProperties',
]);

/** The node of a schema without keywords (`{}`, TypeBox's Unknown): every value is valid. */
const ACCEPT_ALL: Node = () => true;

function compileNode(
  input: unknown,
  where: string,
  formats: Readonly<Record<string, (text: string) => boolean>>,
  annotations: ReadonlySet<string>,
): Node {
  if (!isRecord(input)) throw new Error(`${where}: a schema must be an object`);
  const schema = input;
  for (const key of Object.keys(schema)) {
    if (!KNOWN.has(key) && !annotations.has(key))
      throw new Error(
        `${where}: unknown keyword "${key}" (shared/util/schema-check.ts understands ${[...KNOWN].join(', ')})`,
      );
  }
  if (!Object.keys(schema).some((key) => KNOWN.has(key))) return ACCEPT_ALL;
  const err = (
    out: SchemaError[],
    instancePath: string,
    keyword: string,
    params: Record<string, unknown>,
    message: string,
  ): void => {
    out.push({ instancePath, keyword, params, message, parentSchema: schema });
  };

  // The type keyword.
  const rawType = schema['type'];
  const types: JsonType[] =
    rawType === undefined
      ? []
      : (Array.isArray(rawType) ? rawType : [rawType]).map((t) => {
          if (typeof t !== 'string' || !JSON_TYPES.has(t))
            throw new Error(`${where}: unknown type ${JSON.stringify(t)}`);
          return t as JsonType; // checked against JSON_TYPES just above
        });
  const typeText = Array.isArray(rawType) ? types.join(',') : (types[0] ?? '');

  // Keywords of no type: const, anyOf.
  const untyped: Node[] = [];
  if ('const' in schema) {
    const expected = schema['const'];
    const primitive = typeof expected !== 'object' || expected === null;
    untyped.push((value, path, out) => {
      if (primitive ? value === expected : deepEqual(value, expected)) return true;
      if (out) err(out, path, 'const', { allowedValue: expected }, 'must be equal to constant');
      return false;
    });
  }
  if ('anyOf' in schema) {
    const branches = schema['anyOf'];
    if (!Array.isArray(branches) || branches.length === 0) throw new Error(`${where}: anyOf must be a non-empty list`);
    const nodes = branches.map((b, i) => compileNode(b, `${where}/anyOf/${i}`, formats, annotations));
    const dispatch = discriminator(branches, nodes);
    untyped.push((value, path, out) => {
      if (out === null) {
        if (dispatch !== null) {
          const branch = dispatch.byValue.get(isRecord(value) ? value[dispatch.key] : undefined);
          return branch !== undefined && branch(value, path, null);
        }
        return nodes.some((n) => n(value, path, null));
      }
      if (nodes.some((n) => n(value, path, null))) return true;
      for (const n of nodes) n(value, path, out);
      err(out, path, 'anyOf', {}, 'must match a schema in anyOf');
      return false;
    });
  }

  // Numbers.
  const numberRules: Rule[] = [];
  const limit = (keyword: string, comparison: string, ok: (v: number, l: number) => boolean): void => {
    if (!(keyword in schema)) return;
    const l = num(schema, keyword, where);
    numberRules.push({
      keyword,
      test: (v: number) => ok(v, l),
      fail: () => ({ params: { comparison, limit: l }, message: `must be ${comparison} ${l}` }),
    });
  };
  limit('maximum', '<=', (v, l) => v <= l);
  limit('minimum', '>=', (v, l) => v >= l);
  limit('exclusiveMaximum', '<', (v, l) => v < l);
  limit('exclusiveMinimum', '>', (v, l) => v > l);

  // Strings.
  const stringRules: Rule[] = [];
  if ('maxLength' in schema) {
    const l = num(schema, 'maxLength', where);
    stringRules.push({
      keyword: 'maxLength',
      test: (v: string) => v.length <= l || codePoints(v) <= l,
      fail: () => ({ params: { limit: l }, message: `must NOT have more than ${l} characters` }),
    });
  }
  if ('minLength' in schema) {
    const l = num(schema, 'minLength', where);
    stringRules.push({
      keyword: 'minLength',
      test: (v: string) => codePoints(v) >= l,
      fail: () => ({ params: { limit: l }, message: `must NOT have fewer than ${l} characters` }),
    });
  }
  if ('pattern' in schema) {
    const pattern = schema['pattern'];
    if (typeof pattern !== 'string') throw new Error(`${where}: pattern must be a string`);
    const re = new RegExp(pattern, 'u');
    stringRules.push({
      keyword: 'pattern',
      test: (v: string) => re.test(v),
      fail: () => ({ params: { pattern }, message: `must match pattern "${pattern}"` }),
    });
  }
  if ('format' in schema) {
    const format = schema['format'];
    const test = typeof format === 'string' && Object.hasOwn(formats, format) ? formats[format] : undefined;
    if (test === undefined)
      throw new Error(
        `${where}: unknown format ${JSON.stringify(format)} (known: ${Object.keys(formats).join(', ') || 'none'})`,
      );
    stringRules.push({
      keyword: 'format',
      test: (v: string) => test(v),
      fail: () => ({ params: { format }, message: `must match format "${String(format)}"` }),
    });
  }

  // Arrays.
  const arrayRules: Rule[] = [];
  if ('maxItems' in schema) {
    const l = num(schema, 'maxItems', where);
    arrayRules.push({
      keyword: 'maxItems',
      test: (v: unknown[]) => v.length <= l,
      fail: () => ({ params: { limit: l }, message: `must NOT have more than ${l} items` }),
    });
  }
  if ('minItems' in schema) {
    const l = num(schema, 'minItems', where);
    arrayRules.push({
      keyword: 'minItems',
      test: (v: unknown[]) => v.length >= l,
      fail: () => ({ params: { limit: l }, message: `must NOT have fewer than ${l} items` }),
    });
  }
  if ('items' in schema) {
    const item = compileNode(schema['items'], `${where}/items`, formats, annotations);
    if (item !== ACCEPT_ALL)
      arrayRules.push({
        keyword: 'items',
        test: (v: unknown[], path, out) => {
          let ok = true;
          for (let i = 0; i < v.length; i++) {
            if (item(v[i], out ? `${path}/${i}` : path, out)) continue;
            ok = false;
            if (!out) return false;
          }
          return ok;
        },
      });
  }

  // Objects.
  const objectRules: Rule[] = [];
  const properties = new Map<string, Node>();
  if ('properties' in schema) {
    const props = schema['properties'];
    if (!isRecord(props)) throw new Error(`${where}: properties must be an object`);
    for (const [key, sub] of Object.entries(props))
      properties.set(key, compileNode(sub, `${where}/properties/${key}`, formats, annotations));
  }
  const patterns: [RegExp, Node][] = [];
  if ('patternProperties' in schema) {
    const pats = schema['patternProperties'];
    if (!isRecord(pats)) throw new Error(`${where}: patternProperties must be an object`);
    for (const [pattern, sub] of Object.entries(pats))
      patterns.push([
        new RegExp(pattern, 'u'),
        compileNode(sub, `${where}/patternProperties/${pattern}`, formats, annotations),
      ]);
  }
  if ('required' in schema) {
    const required = schema['required'];
    if (!Array.isArray(required) || !required.every((r): r is string => typeof r === 'string'))
      throw new Error(`${where}: required must be a list of names`);
    objectRules.push({
      keyword: 'required',
      test: (v: Record<string, unknown>, path, out) => {
        let ok = true;
        for (const name of required) {
          if (v[name] !== undefined || Object.hasOwn(v, name)) continue;
          ok = false;
          if (!out) return false;
          err(out, path, 'required', { missingProperty: name }, `must have required property '${name}'`);
        }
        return ok;
      },
    });
  }
  if ('additionalProperties' in schema) {
    const additional = schema['additionalProperties'];
    if (additional !== true && additional !== false)
      throw new Error(`${where}: additionalProperties must be true or false`);
    if (additional === false) {
      objectRules.push({
        keyword: 'additionalProperties',
        test: (v: Record<string, unknown>, path, out) => {
          let ok = true;
          for (const key of Object.keys(v)) {
            if (properties.has(key) || patterns.some(([re]) => re.test(key))) continue;
            ok = false;
            if (!out) return false;
            err(out, path, 'additionalProperties', { additionalProperty: key }, 'must NOT have additional properties');
          }
          return ok;
        },
      });
    }
  }
  if (properties.size > 0) {
    const entries = [...properties];
    objectRules.push({
      keyword: 'properties',
      test: (v: Record<string, unknown>, path, out) => {
        let ok = true;
        for (const [key, node] of entries) {
          if (!Object.hasOwn(v, key) || v[key] === undefined) continue;
          if (node(v[key], out ? path + pointer(key) : path, out)) continue;
          ok = false;
          if (!out) return false;
        }
        return ok;
      },
    });
  }
  // A pattern whose schema accepts everything checks nothing (TypeBox's Record of Unknown): not walked.
  const checkedPatterns = patterns.filter(([, node]) => node !== ACCEPT_ALL);
  if (checkedPatterns.length > 0) {
    objectRules.push({
      keyword: 'patternProperties',
      test: (v: Record<string, unknown>, path, out) => {
        let ok = true;
        for (const [re, node] of checkedPatterns) {
          for (const key of Object.keys(v)) {
            if (!re.test(key) || node(v[key], out ? path + pointer(key) : path, out)) continue;
            ok = false;
            if (!out) return false;
          }
        }
        return ok;
      },
    });
  }

  const groups: [JsonType, Rule[]][] = [
    ['number', numberRules],
    ['string', stringRules],
    ['array', arrayRules],
    ['object', objectRules],
  ];
  const applicable = groups.filter(([, rules]) => rules.length > 0);
  const run = (rules: Rule[], value: unknown, path: string, out: SchemaError[] | null): boolean => {
    let ok = true;
    for (const rule of rules) {
      // The group's type was checked by the caller; `never` keeps each rule's own parameter type.
      if (rule.test(value as never, path, out)) continue;
      ok = false;
      if (!out) return false;
      if (rule.fail) {
        const { params, message } = rule.fail(value as never);
        err(out, path, rule.keyword, params, message);
      }
    }
    return ok;
  };

  // A loop, not `types.some((t) => …)`: that made a closure per schema node per value checked.
  const ofAType = (value: unknown): boolean => {
    for (const t of types) if (isType(value, t)) return true;
    return false;
  };

  return (value, path, out) => {
    let ok = true;
    if (types.length > 0 && !ofAType(value)) {
      if (!out) return false;
      err(out, path, 'type', { type: rawType }, `must be ${typeText}`);
      ok = false;
    }
    for (const node of untyped) {
      if (node(value, path, out)) continue;
      ok = false;
      if (!out) return false;
    }
    for (const [type, rules] of applicable) {
      // Keywords apply only to values of their type (a number's minimum says nothing about a string).
      if (!isType(value, type)) continue;
      if (run(rules, value, path, out)) continue;
      ok = false;
      if (!out) return false;
    }
    return ok;
  };
}

/**
 * For an anyOf of objects told apart by one required constant member (`kind`, `v`), a map from that
 * constant to its branch: the fast path tries one branch instead of all. Null when the branches are
 * not shaped so.
 */
function discriminator(branches: unknown[], nodes: Node[]): { key: string; byValue: Map<unknown, Node> } | null {
  const first = branches[0];
  if (!isRecord(first) || !isRecord(first['properties'])) return null;
  for (const key of Object.keys(first['properties'])) {
    const byValue = new Map<unknown, Node>();
    const every = branches.every((b, i) => {
      if (!isRecord(b) || !isRecord(b['properties']) || !Array.isArray(b['required']) || !b['required'].includes(key))
        return false;
      const member = b['properties'][key];
      if (!isRecord(member) || !('const' in member)) return false;
      const value = member['const'];
      if ((typeof value === 'object' && value !== null) || byValue.has(value)) return false;
      const node = nodes[i];
      if (node === undefined) return false;
      byValue.set(value, node);
      return true;
    });
    if (every) return { key, byValue };
  }
  return null;
}
