/**
 * shared/util/schema-check.ts replaced ajv on the audit envelope and the queue codec (the Lambda
 * bundles' size and cold start). Its promise: the same verdict and the same errors as ajv configured
 * as those callers configured it. ajv (still the config loader's validator) is the oracle here: every
 * schema the checker serves, on valid samples and on thousands of seeded mutations of them.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../edge-agent/simulate/random.js';
import { AuditEnvelopeSchema, isAbsoluteUri, isRfc3339, PAYLOAD_RULES } from '../../../shared/audit/envelope.js';
import { encodeClaimCheck, encodePacked, QueueMessageSchema } from '../../../shared/queue/codec.js';
import { compileSchema, lazyChecker, type SchemaError } from '../../../shared/util/schema-check.js';
import { auditQueued, envelope, typedEvents } from '../../support/audit.js';
import { healthQueued, sessionsQueued } from '../destinations/polled.js';
import {
  ENGINE,
  logQueued,
  PROXY,
  QIX_PERF_USER,
  REPOSITORY,
  SCHEDULER,
  START_SESSION,
  userQueued,
} from '../platform/fixtures.js';
import { EVENT_COUNT, pointsQueued, QUEUE_METRICS } from '../platform/queued.js';

const FORMATS = { rfc3339: isRfc3339, 'absolute-uri': isAbsoluteUri };
const ANNOTATIONS = ['x-message', 'x-required'];

function oracle(): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes: false, verbose: true, strict: true, allowUnionTypes: true });
  for (const [name, test] of Object.entries(FORMATS)) ajv.addFormat(name, test);
  for (const keyword of ANNOTATIONS) ajv.addKeyword({ keyword });
  return ajv;
}

const ODD_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  0.0001,
  32_768,
  1e21,
  '',
  'x',
  'é',
  '\u{1F600}'.repeat(65),
  'a'.repeat(65),
  'a'.repeat(2049),
  true,
  false,
  [],
  {},
  [1, 'a'],
  { a: 1 },
  'not-a-uuid',
  'E7AF59A0-C243-480D-9571-08727551A66F',
  '2026-02-30T00:00:00Z',
  '2026-11-22T10:15:22Z',
  'http://x y',
  'https://example.com/a',
  '123',
  'audit',
  'log-event',
  1,
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const clone = (v: unknown): Json => JSON.parse(JSON.stringify(v)) as Json; // test data we made ourselves

/** Every container in `value` with the keys/indexes under it. */
function containers(value: Json, out: (Json[] | { [key: string]: Json })[] = []): (Json[] | { [key: string]: Json })[] {
  if (typeof value === 'object' && value !== null) {
    out.push(value);
    for (const child of Object.values(value)) containers(child, out);
  }
  return out;
}

function mutate(sample: unknown, random: SeededRandom): Json {
  const value = clone(sample);
  for (let n = random.between(1, 3); n > 0; n--) {
    const target = random.pick(containers(value));
    const keys = Object.keys(target);
    const action = random.int(4);
    if (Array.isArray(target)) {
      if (action === 0 && target.length > 0) target.splice(random.int(target.length), 1);
      else if (target.length > 0) target[random.int(target.length)] = clone(random.pick(ODD_VALUES));
      else target.push(clone(random.pick(ODD_VALUES)));
    } else if (action === 0 && keys.length > 0) {
      delete target[random.pick(keys)];
    } else if (action === 1) {
      target[random.pick(['extra', 'kind', 'v', 'width', '~odd/key'])] = clone(random.pick(ODD_VALUES));
    } else if (keys.length > 0) {
      target[random.pick(keys)] = clone(random.pick(ODD_VALUES));
    }
  }
  return value;
}

const view = (e: ErrorObject | SchemaError) => ({
  instancePath: e.instancePath,
  keyword: e.keyword,
  params: e.params,
  message: e.message,
  parentSchema: e.parentSchema,
});

const packed = (events: unknown[]) => JSON.parse(encodePacked(events as never)) as Json; // encodePacked's input is checked by the schema below

const CASES: { name: string; schema: object; samples: () => unknown[] }[] = [
  {
    name: 'audit envelope',
    schema: AuditEnvelopeSchema,
    samples: () => [envelope(), envelope({ source: {} }), envelope({ correlationId: undefined })],
  },
  ...Object.entries(PAYLOAD_RULES).map(([type, schema]) => ({
    name: `payload rules of ${type}`,
    schema,
    samples: () => {
      const t = typedEvents()[type];
      return [{ event: t?.full }, ...(t?.minimal ? [{ event: t.minimal }] : [])];
    },
  })),
  {
    name: 'queue message',
    schema: QueueMessageSchema,
    samples: () => [
      packed([auditQueued(), auditQueued({ type: 'selection.state.changed' })]),
      packed([
        userQueued(START_SESSION),
        logQueued(ENGINE),
        logQueued(PROXY),
        logQueued(REPOSITORY),
        logQueued(SCHEDULER),
        logQueued(QIX_PERF_USER),
      ]),
      packed([healthQueued(), sessionsQueued(), pointsQueued('errors', [EVENT_COUNT, QUEUE_METRICS])]),
      JSON.parse(encodeClaimCheck({ bucket: 'b', key: 'claim-checks/k' }, 3)) as Json,
    ],
  },
];

describe('schema-check answers as ajv does', () => {
  for (const { name, schema, samples } of CASES) {
    it(`${name}: valid samples and 1,500 seeded mutations`, () => {
      const expected = oracle().compile(schema);
      const checker = compileSchema(schema, { formats: FORMATS, annotations: ANNOTATIONS });
      const random = new SeededRandom(7);
      const inputs = [...samples(), ...Array.from({ length: 1500 }, () => mutate(random.pick(samples()), random))];
      let invalid = 0;
      for (const input of inputs) {
        const valid = expected(input);
        expect(checker.check(input), JSON.stringify(input)).toBe(valid);
        expect(checker.errors(input).map(view), JSON.stringify(input)).toEqual((expected.errors ?? []).map(view));
        if (!valid) invalid += 1;
      }
      // The mutations must exercise the failure path, not only valid inputs.
      expect(invalid).toBeGreaterThan(300);
    });
  }
});

describe('schema-check refuses what it does not understand', () => {
  it('an unknown keyword, naming it and where', () => {
    expect(() => compileSchema({ type: 'object', properties: { a: { type: 'string', uniqueItems: true } } })).toThrow(
      '#/properties/a: unknown keyword "uniqueItems"',
    );
  });
  it('an unknown format or type', () => {
    expect(() => compileSchema({ type: 'string', format: 'email' }, { formats: FORMATS })).toThrow(
      'unknown format "email" (known: rfc3339, absolute-uri)',
    );
    expect(() => compileSchema({ type: 'text' })).toThrow('#: unknown type "text"');
  });
  it('an annotation it was not told about', () => {
    expect(() => compileSchema({ type: 'string', 'x-message': 'm' })).toThrow('unknown keyword "x-message"');
    expect(compileSchema({ type: 'string', 'x-message': 'm' }, { annotations: ['x-message'] }).check('s')).toBe(true);
  });
});

describe('lazyChecker', () => {
  it('compiles at the first use, not when made, and then answers as compileSchema does', () => {
    const broken = lazyChecker({ type: 'string', uniqueItems: true });
    expect(() => broken.check('x')).toThrow('unknown keyword "uniqueItems"');
    const lazy = lazyChecker<string>({ type: 'string', minLength: 2 });
    const eager = compileSchema<string>({ type: 'string', minLength: 2 });
    for (const value of ['ab', 'a', 3]) {
      expect(lazy.check(value)).toBe(eager.check(value));
      expect(lazy.errors(value)).toEqual(eager.errors(value));
    }
  });
});
