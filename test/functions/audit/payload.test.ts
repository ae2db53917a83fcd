/**
 * The payload rules of docs/audit-api.md ("Per-type payload rules", "payload.context", "source",
 * "Client versions"), rule by rule and edge by edge, through the real handler behind both front
 * doors: every case is one POST, and the answer (202, or 400/422 with exactly the expected
 * details.errors) is what is checked. Lengths are probed with an astral character (U+1F600, two
 * UTF-16 units, one code point) so a limit counted in UTF-16 units would fail these tests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRow } from '../../../shared/datamodel/audit.js';
import type { AuditQueuedEvent } from '../../../shared/queue/events.js';
import { getPath } from '../../../shared/util/records.js';
import { CLIENT_VERSION, envelope, payloadContext, startAuditApi, typedEvents, type ApiResponse, type AuditApi } from '../../support/audit.js';

/** One code point, two UTF-16 units. */
const EMOJI = '\u{1F600}';
/** `n` code points: ASCII, or the emoji (twice as many UTF-16 units). */
const ascii = (n: number) => 'a'.repeat(n);
const emoji = (n: number) => EMOJI.repeat(n);

/** An absolute URI of exactly `n` characters. */
function uriOf(n: number): string {
  const head = 'https://shots.example.com/';
  return head + 'p'.repeat(n - head.length);
}

type Errors = { instancePath: string; message: string }[];

/** `details.errors` of an answer, read without casts (a malformed entry shows up in the comparison). */
function errorsOf(res: ApiResponse): Errors {
  const errors = getPath(res.json, ['details', 'errors']);
  if (!Array.isArray(errors)) return [];
  return errors.map((e: unknown) => ({ instancePath: String(getPath(e, ['instancePath'])), message: String(getPath(e, ['message'])) }));
}

/** A short label for a probe value in assertion messages. */
function label(value: unknown): string {
  if (value === undefined) return '(missing)';
  if (typeof value !== 'string') return JSON.stringify(value);
  if (value.length <= 40) return JSON.stringify(value);
  const unit = [...value][0] ?? '';
  const n = [...value].length;
  return value === unit.repeat(n) ? `${JSON.stringify(unit)} × ${n} code points` : `${JSON.stringify(value.slice(0, 30))}… (${n} code points)`;
}

/**
 * One member rule: the values on each side of its edges. `place` puts the value into an envelope;
 * `undefined` means the member is left out.
 */
interface Rule {
  path: string;
  instancePath: string;
  place: (value: unknown) => Record<string, unknown>;
  valid: unknown[];
  invalid: unknown[];
  message: string;
  /** The message when the member is missing, for a required member. */
  requiredMessage?: string;
}

const TYPED = typedEvents();

/** A valid minimal event of `type` with `member` set to `value` (or removed, for undefined). */
function withEventMember(type: string, member: string, value: unknown): Record<string, unknown> {
  const event: Record<string, unknown> = { ...TYPED[type]?.minimal };
  if (value === undefined) delete event[member];
  else event[member] = value;
  return envelope({ type, payload: { context: payloadContext(), event } });
}

function eventRule(type: string, member: string, valid: unknown[], invalid: unknown[], message: string, required = false): Rule {
  return {
    path: `${type}: payload.event.${member}`,
    instancePath: `/payload/event/${member}`,
    place: (value) => withEventMember(type, member, value),
    valid: required ? valid : [undefined, ...valid],
    invalid,
    message,
    ...(required ? { requiredMessage: `payload.event.${member} is required for this type` } : {}),
  };
}

function contextRule(member: string, max: number): Rule {
  return {
    path: `payload.context.${member}`,
    instancePath: `/payload/context/${member}`,
    place: (value) => {
      const context = payloadContext();
      if (value === undefined) delete context[member];
      else context[member] = value;
      return envelope({ payload: { context, event: { sheetTitle: 'Overview' } } });
    },
    valid: [undefined, '', 'x', ascii(max), emoji(max), `${emoji(max - 1)}a`],
    invalid: [ascii(max + 1), emoji(max + 1), `${emoji(max)}a`, null, 7, true, { directory: 'LAB', id: 'goran' }, ['x']],
    message: `payload.context.${member} must be a string of at most ${max} characters`,
  };
}

function cropRule(member: string, valid: unknown[], invalid: unknown[], message: string, required: boolean): Rule {
  const screenshot = TYPED['screenshot.url.received']?.minimal ?? {};
  return {
    path: `screenshot.url.received: payload.event.crop.${member}`,
    instancePath: `/payload/event/crop/${member}`,
    place: (value) => {
      const crop: Record<string, unknown> = { width: 100, height: 50 };
      if (value === undefined) delete crop[member];
      else crop[member] = value;
      return envelope({ type: 'screenshot.url.received', payload: { event: { ...screenshot, crop } } });
    },
    valid: required ? valid : [undefined, ...valid],
    invalid,
    message,
    ...(required ? { requiredMessage: `payload.event.crop.${member} is required when payload.event.crop is sent` } : {}),
  };
}

const textOrNullProbes = (max: number) => ({
  valid: [null, '', 'x', ascii(max), emoji(max)],
  invalid: [ascii(max + 1), emoji(max + 1), 7, false, {}, []],
});
const CROP_SIZE = { valid: [0.001, 1, 640.5, 32_767], invalid: [0, -1, 32_767.5, 32_768, '100', null, true] };
const CROP_OFFSET = { valid: [0, 0.5, 12, 32_767], invalid: [-0.5, -1, 32_767.01, 32_768, '0', null, false] };

const RULES: Rule[] = [
  // payload.context: every type.
  contextRule('appName', 64),
  contextRule('sheetId', 64),
  contextRule('sheetName', 64),
  contextRule('user', 256),
  contextRule('userAgent', 512),

  // screenshot.url.received
  eventRule(
    'screenshot.url.received',
    'screenshotUrl',
    ['https://a.example.com/x.png', 'http://10.0.0.7:8080/print?id=1&w=640#top', 'urn:uuid:6f1c1a40-0a5e-4c39-9d55-3b0f8e0f8f11', 'https://[::1]/x', 'https://a.example.com/%C3%BC.png', uriOf(2048)],
    ['', uriOf(2049), '/relative.png', 'shots.example.com/a.png', 'https://a.example.com/a b.png', 'https://a.example.com/ü.png', 'https://a.example.com/x.png\n', ' https://a.example.com/x.png', 'https://a.example.com:99999/x', 'https://', 'https://a.example.com/x#a#b', null, 42],
    'payload.event.screenshotUrl must be an absolute URI (RFC 3986) of 1 to 2048 characters',
    true,
  ),
  eventRule('screenshot.url.received', 'objectId', textOrNullProbes(64).valid, textOrNullProbes(64).invalid, 'payload.event.objectId must be a string of at most 64 characters, or null'),
  cropRule('width', CROP_SIZE.valid, CROP_SIZE.invalid, 'payload.event.crop.width must be a number greater than 0 and at most 32767', true),
  cropRule('height', CROP_SIZE.valid, CROP_SIZE.invalid, 'payload.event.crop.height must be a number greater than 0 and at most 32767', true),
  ...['top', 'left', 'scrollTop', 'scrollAreaOffsetY', 'renderingOverflow'].map((m) =>
    cropRule(m, CROP_OFFSET.valid, CROP_OFFSET.invalid, `payload.event.crop.${m} must be a number from 0 to 32767`, false),
  ),

  // event.unsupported.visualization
  eventRule('event.unsupported.visualization', 'vizType', ['x', ascii(64), emoji(64)], ['', ascii(65), emoji(65), null, 7], 'payload.event.vizType must be a string of 1 to 64 characters', true),
  ...['objectId', 'title', 'trigger'].map((m) =>
    eventRule('event.unsupported.visualization', m, textOrNullProbes(64).valid, textOrNullProbes(64).invalid, `payload.event.${m} must be a string of at most 64 characters, or null`),
  ),

  // object.view.duration
  eventRule('object.view.duration', 'objectId', ['x', ascii(64), emoji(64)], ['', ascii(65), emoji(65), null, 7], 'payload.event.objectId must be a string of 1 to 64 characters', true),
  ...['selectionTxnId', 'enterSelectionTxnId', 'leaveSelectionTxnId'].map((m) =>
    eventRule(
      'object.view.duration',
      m,
      [...textOrNullProbes(36).valid, randomUUID(), randomUUID().toUpperCase(), 'txn-42', 'not a uuid at all'],
      [...textOrNullProbes(36).invalid, `${randomUUID()}x`],
      `payload.event.${m} must be a string of at most 36 characters, or null`,
    ),
  ),
  eventRule(
    'object.view.duration',
    'enteredAt',
    [null, '2026-11-22T10:15:02Z', '2026-11-22T10:15:02.123456+05:30', '2028-02-29t23:59:59-08:00'],
    ['', '2026-11-22T10:15:02', '2026-11-22 10:15:02Z', '2026-02-30T10:00:00Z', '2026-11-22T24:00:00Z', 'yesterday', 1_732_270_502_000, true],
    'payload.event.enteredAt must be an RFC 3339 date-time with a zone, or null',
  ),
  eventRule('object.view.duration', 'visible', [true, false, null], ['true', 0, 1, {}], 'payload.event.visible must be a boolean or null'),
  eventRule('object.view.duration', 'dataStateId', [null, 0, -5, 1_732_270_502_000, Number.MAX_SAFE_INTEGER], [1.5, '17', true, {}], 'payload.event.dataStateId must be an integer or null'),

  // app.model.validated
  eventRule('app.model.validated', 'captureScheduled', [true, false, null], ['true', 0, 1, []], 'payload.event.captureScheduled must be a boolean or null'),

  // selection.state.changed (rules outside the list, unchanged)
  eventRule('selection.state.changed', 'selectionTxnId', [randomUUID(), randomUUID().toUpperCase()], ['nope', '', 7, null], 'payload.event.selectionTxnId must be a UUID', true),
  eventRule('selection.state.changed', 'details', [[], new Array<number>(500).fill(0)], [new Array<number>(501).fill(0), 'x', {}, null], 'payload.event.details must be a list of at most 500 items', true),
];

describe.each(['lambda', 'http'] as const)('audit payload rules via %s', (door) => {
  let api: AuditApi;
  beforeAll(async () => {
    // Hundreds of requests from one address: the rate limit is not under test here.
    api = await startAuditApi(door, { yaml: ['    rateLimit:', '      enable: false'] });
  });
  afterAll(() => api.close());

  const post = (body: unknown, headers: Record<string, string> = { 'x-audit-client-version': CLIENT_VERSION }) => api.call({ body, headers });

  async function expectAccepted(body: unknown, what: string, headers?: Record<string, string>): Promise<void> {
    const res = await post(body, headers);
    expect(res.status, `${what}: ${res.text}`).toBe(202);
  }

  async function expectRejected(body: unknown, status: 400 | 422, errors: Errors, what: string): Promise<void> {
    const res = await post(body);
    expect(res.status, `${what}: ${res.text}`).toBe(status);
    expect(res.json, what).toMatchObject({ status: 'error', outcome: 'dropped', reason: status === 400 ? 'Schema validation failed' : 'One or more constraint violations' });
    expect(errorsOf(res), what).toEqual(errors);
  }

  async function delivered(eventId: unknown): Promise<AuditQueuedEvent> {
    const id = String(eventId).toLowerCase();
    const find = () => api.delivered.find((e): e is AuditQueuedEvent => e.kind === 'audit' && e.id === id);
    await expect.poll(find).toBeDefined();
    const found = find();
    if (!found) throw new Error(`event ${id} was not delivered`);
    return found;
  }

  describe('member rules: each valid edge is accepted, each invalid one is one 422 entry naming the member and its rule', () => {
    it.each(RULES.map((r) => [r.path, r] as const))('%s', async (_path, rule) => {
      for (const value of rule.valid) await expectAccepted(rule.place(value), `${rule.path} = ${label(value)}`);
      for (const value of rule.invalid) {
        await expectRejected(rule.place(value), 422, [{ instancePath: rule.instancePath, message: rule.message }], `${rule.path} = ${label(value)}`);
      }
      if (rule.requiredMessage !== undefined) {
        await expectRejected(rule.place(undefined), 422, [{ instancePath: rule.instancePath, message: rule.requiredMessage }], `${rule.path} missing`);
      }
    });
  });

  describe('payload.context', () => {
    it('reports each violation as its own entry, in member order, next to the other rules', async () => {
      const context = { appId: 'app-1', appName: emoji(65), sheetId: ascii(65), sheetName: 7, user: emoji(257), userAgent: ascii(513) };
      await expectRejected(envelope({ payload: { context } }), 422, [
        { instancePath: '/payload/context/appId', message: 'payload.context.appId must be a UUID' },
        { instancePath: '/payload/context/appName', message: 'payload.context.appName must be a string of at most 64 characters' },
        { instancePath: '/payload/context/sheetId', message: 'payload.context.sheetId must be a string of at most 64 characters' },
        { instancePath: '/payload/context/sheetName', message: 'payload.context.sheetName must be a string of at most 64 characters' },
        { instancePath: '/payload/context/user', message: 'payload.context.user must be a string of at most 256 characters' },
        { instancePath: '/payload/context/userAgent', message: 'payload.context.userAgent must be a string of at most 512 characters' },
      ], 'six context violations');
    });

    it('applies to every type, together with the type\'s own rules', async () => {
      const body = envelope({ type: 'object.view.duration', payload: { context: payloadContext({ sheetName: emoji(65) }), event: { objectId: '' } } });
      await expectRejected(body, 422, [
        { instancePath: '/payload/context/sheetName', message: 'payload.context.sheetName must be a string of at most 64 characters' },
        { instancePath: '/payload/event/objectId', message: 'payload.event.objectId must be a string of 1 to 64 characters' },
      ], 'context and event violations');
      await expectRejected(envelope({ type: 'event.custom-thing', payload: { context: { user: emoji(257) } } }), 422, [
        { instancePath: '/payload/context/user', message: 'payload.context.user must be a string of at most 256 characters' },
      ], 'a custom event type');
    });

    it('is optional, may be empty, and keeps members the rules do not name', async () => {
      await expectAccepted(envelope({ payload: {} }), 'no context');
      await expectAccepted(envelope({ payload: { context: {} } }), 'empty context');
      await expectAccepted(envelope({ payload: { context: payloadContext({ host: 7, client: { viewport: { width: 1920 } }, objectId: null }) } }), 'unnamed members');
    });

    it('must be an object when present', async () => {
      for (const context of [null, 'ctx', 7, ['x']]) {
        await expectRejected(envelope({ payload: { context } }), 422, [{ instancePath: '/payload/context', message: 'payload.context must be an object' }], `context = ${label(context)}`);
      }
    });
  });

  describe('payload.event per type', () => {
    it('accepts each type with every named member, and with only the required ones', async () => {
      for (const [type, { full, minimal }] of Object.entries(TYPED)) {
        await expectAccepted(envelope({ type, payload: { context: payloadContext(), event: full } }), `${type} (full)`);
        await expectAccepted(envelope({ type, payload: minimal === undefined ? {} : { event: minimal } }), `${type} (minimal)`);
      }
    });

    it('requires payload.event only for a type with a required member, and an object whenever it is sent', async () => {
      for (const type of ['screenshot.url.received', 'event.unsupported.visualization', 'object.view.duration', 'selection.state.changed']) {
        const res = await post(envelope({ type, payload: { context: payloadContext() } }));
        expect(res.status, type).toBe(422);
        expect(errorsOf(res), type).toEqual([{ instancePath: '/payload/event', message: 'payload.event is required for this type' }]);
      }
      await expectAccepted(envelope({ type: 'app.model.validated', payload: {} }), 'app.model.validated without payload.event');
      await expectAccepted(envelope({ type: 'app.model.validated', payload: { event: {} } }), 'app.model.validated with an empty payload.event');
      for (const event of ['x', 7, null, []]) {
        for (const type of ['app.model.validated', 'object.view.duration']) {
          await expectRejected(envelope({ type, payload: { event } }), 422, [{ instancePath: '/payload/event', message: 'payload.event must be an object' }], `${type}: event = ${label(event)}`);
        }
      }
    });

    it('reports every violation of one event, each as its own entry', async () => {
      const event = { objectId: ascii(65), selectionTxnId: ascii(37), enterSelectionTxnId: 1, leaveSelectionTxnId: {}, enteredAt: 'soon', visible: 'yes', dataStateId: 0.5 };
      await expectRejected(envelope({ type: 'object.view.duration', payload: { event } }), 422, [
        { instancePath: '/payload/event/objectId', message: 'payload.event.objectId must be a string of 1 to 64 characters' },
        { instancePath: '/payload/event/selectionTxnId', message: 'payload.event.selectionTxnId must be a string of at most 36 characters, or null' },
        { instancePath: '/payload/event/enterSelectionTxnId', message: 'payload.event.enterSelectionTxnId must be a string of at most 36 characters, or null' },
        { instancePath: '/payload/event/leaveSelectionTxnId', message: 'payload.event.leaveSelectionTxnId must be a string of at most 36 characters, or null' },
        { instancePath: '/payload/event/enteredAt', message: 'payload.event.enteredAt must be an RFC 3339 date-time with a zone, or null' },
        { instancePath: '/payload/event/visible', message: 'payload.event.visible must be a boolean or null' },
        { instancePath: '/payload/event/dataStateId', message: 'payload.event.dataStateId must be an integer or null' },
      ], 'seven object.view.duration violations');
    });

    it('checks crop as an object with width and height whenever it is sent', async () => {
      const url = 'https://a.example.com/x.png';
      for (const crop of [null, 'full', 7, [100, 50]]) {
        await expectRejected(envelope({ type: 'screenshot.url.received', payload: { event: { screenshotUrl: url, crop } } }), 422, [{ instancePath: '/payload/event/crop', message: 'payload.event.crop must be an object' }], `crop = ${label(crop)}`);
      }
      await expectRejected(envelope({ type: 'screenshot.url.received', payload: { event: { screenshotUrl: url, crop: { top: 4 } } } }), 422, [
        { instancePath: '/payload/event/crop/width', message: 'payload.event.crop.width is required when payload.event.crop is sent' },
        { instancePath: '/payload/event/crop/height', message: 'payload.event.crop.height is required when payload.event.crop is sent' },
      ], 'crop without width and height');
    });

    it('no longer applies the old rules the issue\'s list replaced (UUID selectionTxnId, required members it does not name)', async () => {
      const notUuid = 'not-a-uuid';
      await expectAccepted(envelope({ type: 'screenshot.url.received', payload: { event: { screenshotUrl: 'https://a.example.com/x.png', selectionTxnId: notUuid } } }), 'screenshot with a non-UUID selectionTxnId');
      await expectAccepted(envelope({ type: 'event.unsupported.visualization', payload: { event: { vizType: 'sankey', selectionTxnId: notUuid } } }), 'visualization with a non-UUID selectionTxnId');
      await expectAccepted(envelope({ type: 'app.model.validated', payload: { event: { selectionTxnId: notUuid, dataStateId: 1.5 } } }), 'app.model.validated with members the list does not name');
      await expectAccepted(envelope({ type: 'object.view.duration', payload: { event: { objectId: 'o1', selectionTxnId: notUuid, duration: -1, leftAt: 'later' } } }), 'object.view.duration without duration/leftAt rules');
    });

    it('accepts members the rules do not name, whatever they hold', async () => {
      const extra = { note: null, nested: { deep: [1, 'two'] }, objectData: { qId: 'abc' } };
      for (const [type, { minimal }] of Object.entries(TYPED)) {
        await expectAccepted(envelope({ type, payload: { event: { ...minimal, ...extra } } }), `${type} with extra members`);
      }
      await expectAccepted(envelope({ type: 'screenshot.url.received', payload: { event: { screenshotUrl: 'https://a.example.com/x.png', crop: { width: 1, height: 1, x: 'left', zoom: null } } } }), 'crop with extra members');
    });
  });

  describe('source (structural: 400)', () => {
    it('is optional, and so is each member: only a present member is checked', async () => {
      const sources: unknown[] = [
        undefined,
        {},
        { kind: 'qlik-sense-extension' },
        { name: 'audit-qs' },
        { version: CLIENT_VERSION },
        { kind: 'qlik-sense-extension', name: 'audit-qs', version: CLIENT_VERSION },
        { kind: 'qlik-sense-extension', name: 'audit-qs', build: 7, browser: { name: 'Chrome' } },
      ];
      for (const source of sources) await expectAccepted(envelope({ source }), `source = ${label(source)}`);
    });

    it('rejects a present member that breaks its rule with 400, one entry per member', async () => {
      const cases: [unknown, Errors][] = [
        [{ kind: 'browser' }, [{ instancePath: '/source/kind', message: 'must be "qlik-sense-extension"' }]],
        [{ kind: null }, [{ instancePath: '/source/kind', message: 'must be "qlik-sense-extension"' }]],
        [{ name: 'audit-qs2' }, [{ instancePath: '/source/name', message: 'must be "audit-qs"' }]],
        [{ name: 7 }, [{ instancePath: '/source/name', message: 'must be "audit-qs"' }]],
        [{ version: '' }, [{ instancePath: '/source/version', message: 'must be a non-empty string' }]],
        [{ version: 3 }, [{ instancePath: '/source/version', message: 'must be string' }]],
        [
          { kind: 'QLIK-SENSE-EXTENSION', name: '', version: null },
          [
            { instancePath: '/source/kind', message: 'must be "qlik-sense-extension"' },
            { instancePath: '/source/name', message: 'must be "audit-qs"' },
            { instancePath: '/source/version', message: 'must be string' },
          ],
        ],
        ['audit-qs', [{ instancePath: '/source', message: 'must be object' }]],
        [null, [{ instancePath: '/source', message: 'must be object' }]],
      ];
      for (const [source, errors] of cases) await expectRejected(envelope({ source }), 400, errors, `source = ${label(source)}`);
    });
  });

  describe('client version: X-Audit-Client-Version wins over source.version whenever it yields a value', () => {
    const withVersion = (version: string | undefined) => envelope({ source: { kind: 'qlik-sense-extension', name: 'audit-qs', ...(version === undefined ? {} : { version }) } });

    it('takes the header when it yields a value, compatible or not', async () => {
      const body = withVersion('9.9.9');
      await expectAccepted(body, 'header 0.3.1 over source.version 9.9.9', { 'x-audit-client-version': '0.3.1' });
      expect((await delivered(body['eventId'])).meta.clientVersion).toBe('0.3.1');

      const first = withVersion('0.2.0');
      await expectAccepted(first, 'first of several header values', { 'x-audit-client-version': ' 0.3.4 , 9.9.9' });
      expect((await delivered(first['eventId'])).meta.clientVersion).toBe('0.3.4');

      const res = await post(withVersion('0.3.1'), { 'x-audit-client-version': '0.4.0' });
      expect(res.status).toBe(422);
      expect(errorsOf(res)).toEqual([{ instancePath: '', message: expect.stringMatching(/^audit client version 0\.4\.0 is not compatible/) as string }]);
    });

    it.each(['', ' ', ',', ' , 0.3.1', '\t,\t'])('falls back to source.version when the header normalises to nothing (%j)', async (header) => {
      const compatible = withVersion('0.3.7');
      await expectAccepted(compatible, `header ${JSON.stringify(header)} with source.version 0.3.7`, { 'x-audit-client-version': header });
      expect((await delivered(compatible['eventId'])).meta.clientVersion).toBe('0.3.7');

      const res = await post(withVersion('0.2.9'), { 'x-audit-client-version': header });
      expect(res.status, res.text).toBe(422);
      expect(errorsOf(res)).toEqual([{ instancePath: '/source/version', message: expect.stringMatching(/^audit client version 0\.2\.9 is not compatible/) as string }]);

      const none = withVersion(undefined);
      await expectAccepted(none, `header ${JSON.stringify(header)} without source.version`, { 'x-audit-client-version': header });
      expect((await delivered(none['eventId'])).meta.clientVersion).toBeNull();
    });

    it('treats a source.version of only spaces as no version', async () => {
      const body = withVersion('   ');
      await expectAccepted(body, 'source.version of spaces', {});
      expect((await delivered(body['eventId'])).meta.clientVersion).toBeNull();
    });
  });

  describe('the data model finds the members it reads', () => {
    it('fills the columns from an accepted event\'s context and event', async () => {
      const txn = 'Txn-Mixed-Case-1';
      const body = envelope({
        type: 'object.view.duration',
        source: {},
        payload: {
          context: payloadContext({ appId: 'E7AF59A0-C243-480D-9571-08727551A66F', sheetId: 's-1', user: `UserDirectory=LAB; UserId=g${EMOJI}ran` }),
          event: { objectId: 'kPjmXq', selectionTxnId: txn, dataStateId: 17, duration: 12.5 },
        },
      });
      await expectAccepted(body, 'object.view.duration');
      const row = auditRow(await delivered(body['eventId']));
      expect(row).toMatchObject({
        app_id: 'e7af59a0-c243-480d-9571-08727551a66f',
        sheet_id: 's-1',
        object_id: 'kPjmXq',
        user_id: `UserDirectory=LAB; UserId=g${EMOJI}ran`,
        source_name: null,
        client_version: CLIENT_VERSION,
        selection_txn_id: txn,
        data_state_id: 17,
        duration: 12.5,
      });

      const upper = randomUUID().toUpperCase();
      const selection = envelope({ type: 'selection.state.changed', payload: { event: { selectionTxnId: upper, details: [] } } });
      await expectAccepted(selection, 'selection.state.changed');
      expect(auditRow(await delivered(selection['eventId']))).toMatchObject({ selection_txn_id: upper.toLowerCase(), source_name: 'audit-qs', user_id: null });
    });
  });
});
