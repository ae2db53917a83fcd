/**
 * The read API's query parameters: one definition per parameter (what it means, what it takes),
 * from which both the parsing of a request and the OpenAPI document's parameters are made.
 *
 * Rules: a parameter an endpoint does not take, a repeated one, or a bad value is a 400 naming it.
 * Filters marked "several" take a comma-separated list (`level=ERROR,WARN`): an event matches when
 * it matches any of them; different filters must all match.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { isRfc3339 } from '../../../../shared/audit/envelope.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../../shared/store/api-types.js';
import { STORE_LOG_SOURCES } from '../../../../shared/store/ddl.js';
import type { Range } from '../../../../shared/store/queries/common.js';

/** A 400's reason: the parameter at fault and what was wrong. */
export class BadParameterError extends Error {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(`${parameter}: ${message}`);
  }
}

type Kind =
  | { kind: 'time' }
  | { kind: 'limit' }
  /** One free-text value. */
  | { kind: 'text' }
  /** Several free-text values, comma-separated. */
  | { kind: 'list' }
  | { kind: 'choice'; values: readonly string[]; default?: string }
  /** Several of a fixed set, comma-separated, any case; upper-cased. */
  | { kind: 'choices'; values: readonly string[] };

/** A query parameter of an endpoint. */
export type Parameter = Kind & { name: string; description: string; required?: boolean };

/** The log levels the platform's events carry. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;

/** The parameters several endpoints share. */
export const COMMON = {
  from: {
    name: 'from',
    kind: 'time',
    description: 'start of the range, RFC 3339 (e.g. 2026-11-22T10:15:00Z); default: `to` − 1 hour',
  },
  to: { name: 'to', kind: 'time', description: 'end of the range, RFC 3339; default: now (a future time is fine)' },
  limit: {
    name: 'limit',
    kind: 'limit',
    description: `rows of a page, 1–${MAX_LIMIT}; default ${DEFAULT_LIMIT}`,
  },
  cursor: { name: 'cursor', kind: 'text', description: 'the `nextCursor` of the previous page (same filters)' },
  server: { name: 'server', kind: 'list', description: "servers' configured names; several, comma-separated" },
  level: {
    name: 'level',
    kind: 'choices',
    values: LOG_LEVELS,
    description:
      'log levels as events carry them (ERROR, WARN, INFO, DEBUG, FATAL), any case; several, comma-separated',
  },
  source: {
    name: 'source',
    kind: 'choices',
    values: STORE_LOG_SOURCES,
    description: 'engine, proxy, repository or scheduler; several, comma-separated',
  },
  category: {
    name: 'category',
    kind: 'list',
    description: 'categories as `name=value`, or `name` for any value of it; several, comma-separated',
  },
  q: {
    name: 'q',
    kind: 'text',
    description:
      'free text: events whose message or exception has every word (a word matches the start of a word, any case; words without a letter or digit are ignored)',
  },
  user: { name: 'user', kind: 'list', description: 'users as `DIRECTORY\\id`; several, comma-separated' },
  virtualProxy: {
    name: 'virtualProxy',
    kind: 'list',
    description: 'virtual proxy prefixes as configured (`/`, `/hdr`); several, comma-separated',
  },
  app: { name: 'app', kind: 'list', description: 'app ids; several, comma-separated' },
  type: {
    name: 'type',
    kind: 'list',
    description: 'audit event types (e.g. object.view.duration); several, comma-separated',
  },
  sheet: { name: 'sheet', kind: 'list', description: 'sheet ids; several, comma-separated' },
} as const satisfies Record<string, Parameter>;

/** A required `by` (or other single choice) of an endpoint. */
export function choice(name: string, values: readonly string[], description: string, fallback?: string): Parameter {
  return {
    name,
    kind: 'choice',
    values,
    description,
    ...(fallback === undefined ? { required: true } : { default: fallback }),
  };
}

/** The parameter's OpenAPI schema. */
export function parameterSchema(parameter: Parameter): TSchema {
  switch (parameter.kind) {
    case 'time':
      return Type.String({ format: 'date-time' });
    case 'limit':
      return Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT });
    case 'text':
    case 'list':
      return Type.String({ minLength: 1 });
    case 'choice':
      return Type.String({ enum: [...parameter.values], ...(parameter.default ? { default: parameter.default } : {}) });
    case 'choices':
      return Type.String({ minLength: 1, examples: [parameter.values.slice(0, 2).join(',')] });
  }
}

/** The parsed query of a request: checked against the endpoint's parameters. */
export class QueryParameters {
  private readonly values = new Map<string, string>();

  /** Refuses a parameter the endpoint does not take and a repeated one. */
  constructor(
    search: URLSearchParams,
    private readonly parameters: readonly Parameter[],
  ) {
    for (const [name, value] of search) {
      const known = parameters.find((parameter) => parameter.name === name);
      if (!known) {
        const taken = parameters.map((parameter) => parameter.name).join(', ');
        throw new BadParameterError(name, `unknown parameter here (this endpoint takes ${taken || 'none'})`);
      }
      if (this.values.has(name))
        throw new BadParameterError(name, 'given more than once (pass several values comma-separated)');
      this.values.set(name, value);
    }
    for (const parameter of parameters) {
      if (parameter.required && !this.values.has(parameter.name))
        throw new BadParameterError(parameter.name, 'is required');
    }
  }

  private definition(name: string): Parameter {
    const found = this.parameters.find((parameter) => parameter.name === name);
    if (!found) throw new Error(`the endpoint does not declare the parameter ${name}`);
    return found;
  }

  /** A time parameter in ms, or undefined when absent. */
  time(name: string): number | undefined {
    const text = this.values.get(name);
    if (text === undefined) return undefined;
    if (!isRfc3339(text))
      throw new BadParameterError(
        name,
        `must be an RFC 3339 time such as 2026-11-22T10:15:00Z, not ${JSON.stringify(text)}`,
      );
    return Date.parse(text);
  }

  /**
   * `from` and `to` as a range (defaults: to = now, from = to − 1 h); `from` must be before `to`, and
   * the range at most `maxDays` long.
   */
  range(now: number, maxDays: number): Range {
    const to = this.time('to') ?? now;
    const from = this.time('from') ?? to - 3_600_000;
    if (from >= to) throw new BadParameterError('from', 'must be before to');
    if (to - from > maxDays * 86_400_000) {
      throw new BadParameterError('from', `the range is longer than the store keeps (at most ${maxDays} days)`);
    }
    return { from, to };
  }

  /** `limit`, default DEFAULT_LIMIT. */
  limit(): number {
    const text = this.values.get('limit');
    if (text === undefined) return DEFAULT_LIMIT;
    const limit = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT))
      throw new BadParameterError('limit', `must be a whole number from 1 to ${MAX_LIMIT}`);
    return limit;
  }

  /** A one-value text parameter, or undefined when absent; never empty. */
  text(name: string): string | undefined {
    const text = this.values.get(name);
    if (text === undefined) return undefined;
    if (text.trim() === '') throw new BadParameterError(name, 'must not be empty');
    return text;
  }

  /** A comma-separated list (free values, or a set of choices upper-cased), or undefined when absent. */
  list(name: string): string[] | undefined {
    const text = this.values.get(name);
    if (text === undefined) return undefined;
    const items = text.split(',').map((item) => item.trim());
    if (items.some((item) => item === ''))
      throw new BadParameterError(name, 'has an empty value (values are comma-separated)');
    const definition = this.definition(name);
    if (definition.kind !== 'choices') return items;
    return items.map((item) => {
      const upper = item.toUpperCase();
      const known = definition.values.find((value) => value.toUpperCase() === upper);
      if (known === undefined)
        throw new BadParameterError(name, `${JSON.stringify(item)} is not one of ${definition.values.join(', ')}`);
      return known;
    });
  }

  /** A single choice of `values` (its default when absent). */
  choice<T extends string>(name: string, values: readonly T[]): T {
    const definition = this.definition(name);
    const text = this.values.get(name) ?? (definition.kind === 'choice' ? definition.default : undefined) ?? '';
    const known = values.find((value) => value === text);
    if (known === undefined) throw new BadParameterError(name, `must be one of ${values.join(', ')}`);
    return known;
  }
}
