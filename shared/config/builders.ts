/**
 * Small builders for the config schema. Every leaf carries its default and its description, so
 * that the one schema yields the TypeScript types, the defaults, the validation and the docs.
 *
 * Custom annotations (all prefixed `x-`, registered with ajv in `validate.ts`):
 * - `x-gate`: on an object, the relative paths of the switches that turn the feature on. When none
 *   of them is `true`, every other setting of the section is neither validated nor used
 *   (configuration-reference.md, file convention 4: placeholders may stay).
 * - `x-only-when`: on a property, `{ key, value }`: the property is used (and validated) only when
 *   the sibling `key` equals `value` (tsdbConfig.v1Config/v2Config/v3Config by `version`).
 * - `x-secret`: the value is a secret: redacted in logs, crash dumps and the config view.
 * - `x-secret-values`: on a string mapping, every value is a secret (server headers).
 * - `x-schedule`: the string is a text schedule for `@breejs/later`.
 * - `x-required`: the string must not be empty when its section is in use.
 * - `x-expect`: how the docs and error messages describe a value that a pattern checks.
 */
import {
  type TArray,
  type TObject,
  type TProperties,
  type TSchema,
  type TString,
  type TUnsafe,
  Type,
} from '@sinclair/typebox';

/** Name rule of every configured tag name (platform-formats.md §6.0). */
export const TAG_NAME_PATTERN = '^(?!time$)[A-Za-z][A-Za-z0-9_]*$';

/**
 * An http(s) URL, or '' for a placeholder (heartbeat.remoteURL, monsaas.metric.url).
 * One host character, then anything but white space: the same language as `[^\s/?#]+[^\s]*`,
 * whose two overlapping repetitions made a long value with a space at its end take quadratic time.
 */
export const HTTP_URL = {
  pattern: '^(|https?://[^\\s/?#][^\\s]*)$',
  'x-expect': 'an absolute http:// or https:// URL',
};

export interface Annotations {
  'x-secret'?: true;
  'x-required'?: true;
  'x-schedule'?: true;
  'x-expect'?: string;
  'x-only-when'?: { key: string; value: string | number | boolean };
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
}

export const Bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });

export const Str = (def: string, description: string, extra: Annotations = {}) =>
  Type.String({ default: def, description, ...extra });

/**
 * A string that must be set when its section is in use. Its default '' is a placeholder that the
 * schema accepts, so a disabled section's defaults stay valid; the loader reports '' in a section
 * that is in use.
 */
export const Required = (description: string, extra: Annotations = {}) =>
  Type.String({ default: '', description, 'x-required': true, ...extra });

export const Secret = (description: string, extra: Annotations = {}) =>
  Type.String({ default: '', description, 'x-secret': true, ...extra });

export const Int = (def: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: def, minimum, maximum, description });

export const Port = (def: number, description: string) => Int(def, 1, 65535, description);

/** Milliseconds; at most about 24.8 days, the largest delay a Node.js timer accepts. */
export const Millis = (def: number, minimum: number, description: string) =>
  Int(def, minimum, 2_147_483_647, `${description} (milliseconds)`);

export const Schedule = (def: string, description: string) =>
  Type.String({
    default: def,
    description,
    'x-schedule': true,
    'x-expect': 'a text schedule such as "every 15 minutes"',
  });

export const LogLevel = (def: LogLevelName, description: string) => Enum(LOG_LEVELS, def, description);

export const LOG_LEVELS = ['silly', 'debug', 'verbose', 'info', 'warn', 'error'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** A closed set of strings or integers, typed as the union of its values. */
export function Enum<const T extends readonly (string | number)[]>(
  values: T,
  def: T[number],
  description: string,
): TUnsafe<T[number]> {
  const type = typeof values[0] === 'number' ? 'integer' : 'string';
  return Type.Unsafe<T[number]>({ type, enum: [...values], default: def, description });
}

/** A list, empty by default; `example` is one plausible value, shown in config/full.yaml. */
export const List = <T extends TSchema>(items: T, description: string, example?: unknown[]): TArray<T> =>
  Type.Array(items, { default: [], description, ...(example ? { examples: [example] } : {}) });

/** A plain section: no switch of its own. */
export const Section = <P extends TProperties>(description: string, properties: P): TObject<P> =>
  Type.Object(properties, { additionalProperties: false, default: {}, description });

/** A section whose settings are used (and validated) only when one of `gate` is true. */
export const Gated = <P extends TProperties>(description: string, gate: string[], properties: P): TObject<P> =>
  Type.Object(properties, { additionalProperties: false, default: {}, description, 'x-gate': gate });

/** A section switched by its own `enable` key. */
export const Feature = <P extends TProperties>(
  description: string,
  enableDefault: boolean,
  enableDescription: string,
  properties: P,
) => Gated(description, ['enable'], { enable: Bool(enableDefault, enableDescription), ...properties });

/** `{ enable }` alone: a flag that has no settings of its own. */
export const Flag = (def: boolean, description: string) => Section(description, { enable: Bool(def, description) });

/** One `{name, value}` item: tags, categories, headers and attributes all share this shape. */
export const NameValue = (nameRule: 'tag' | 'any') =>
  Type.Object(
    {
      name:
        nameRule === 'tag'
          ? Type.String({
              pattern: TAG_NAME_PATTERN,
              'x-expect': 'a name of letters, digits and _ that starts with a letter and is not "time"',
            })
          : Type.String({ minLength: 1 }),
      value: Type.String(),
    },
    { additionalProperties: false },
  );

export const Tags = (description: string) =>
  List(NameValue('tag'), `${description}; items are {name, value}`, [{ name: 'env', value: 'prod' }]);
export const NameValues = (description: string) =>
  List(NameValue('any'), `${description}; items are {name, value}`, [{ name: 'team', value: 'platform' }]);

export function StringList(description: string, example: string[]): TArray<TString>;
export function StringList<T extends TSchema>(description: string, example: string[], items: T): TArray<T>;
export function StringList(
  description: string,
  example: string[],
  items: TSchema = Type.String({ minLength: 1 }),
): TArray<TSchema> {
  return List(items, description, example);
}

/** A directory/user pair (user exclusion lists). */
export const UserRef = Type.Object(
  { directory: Type.String({ minLength: 1 }), userId: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

/** A `key: value` mapping of strings (server tags, server headers). */
export const StringMap = (description: string, extra: { 'x-secret-values'?: true } = {}) =>
  Type.Record(Type.String(), Type.String(), { default: {}, description, ...extra });

/** The units of a Duration: seconds, minutes, hours, days. */
export const DURATION_PATTERN = '^(0|[0-9]{1,6}(s|m|h|d))$';

/** A length of time written `30s`, `2m`, `1h`, `1d` (or `0`); parse it with shared/util/duration.ts. */
export const Duration = (def: string, description: string) =>
  Type.String({
    default: def,
    description,
    pattern: DURATION_PATTERN,
    'x-expect': 'a duration such as 30s, 2m, 1h or 1d',
  });
