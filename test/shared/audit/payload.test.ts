/**
 * The payload rules of docs/audit-api.md ("Per-type payload rules", "payload.context", "source",
 * "Client versions"), rule by rule and edge by edge, through the real handler behind both front
 * doors: every case is one POST, and the answer (202, or 400/422 with exactly the expected
 * details.errors) is what is checked. Lengths are probed with an astral character (U+1F600, two
 * UTF-16 units, one code point) so a limit counted in UTF-16 units would fail these tests. The
 * page itself is held to the rule table too: each rule has its row, message and Required cell.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRow } from '../../../shared/destinations/files/mappers.js';
import type { AuditQueuedEvent } from '../../../shared/queue/events.js';
import { getPath, isRecord } from '../../../shared/util/records.js';
import {
  type ApiResponse,
  type AuditApi,
  CLIENT_VERSION,
  envelope,
  payloadContext,
  startAuditApi,
  typedEvents,
} from '../../support/audit.js';
import {
  ascii,
  checksNumber,
  EMOJI,
  edgeValues,
  emoji,
  MEMBER_RULES,
  type MemberRule,
  OVERFLOWING_NUMBERS,
  pointer,
  RULED_TYPES,
  SOURCE_MESSAGES,
} from '../../support/audit-rules.js';

type Errors = { instancePath: string; message: string }[];

/** `details.errors` of an answer, read without casts (a malformed entry shows up in the comparison). */
function errorsOf(res: ApiResponse): Errors {
  const errors = getPath(res.json, ['details', 'errors']);
  if (!Array.isArray(errors)) return [];
  return errors.map((e: unknown) => ({
    instancePath: String(getPath(e, ['instancePath'])),
    message: String(getPath(e, ['message'])),
  }));
}

/** A short label for a probe value in assertion messages. */
function label(value: unknown): string {
  if (value === undefined) return '(missing)';
  if (typeof value !== 'string') return JSON.stringify(value).slice(0, 60);
  const points = [...value];
  if (points.length <= 40) return JSON.stringify(value);
  const unit = points[0] ?? '';
  return value === unit.repeat(points.length)
    ? `${JSON.stringify(unit)} × ${points.length} code points`
    : `${JSON.stringify(value.slice(0, 30))}… (${points.length} code points)`;
}

const TYPED = typedEvents();

/**
 * A valid envelope of the rule's type (navigation.sheet.loaded for payload.context) with the rule's
 * member set to `value`, or left out for undefined. A nested member's parent (payload.event.crop)
 * starts from the type's full valid event.
 */
function place(rule: MemberRule, value: unknown): Record<string, unknown> {
  const type = rule.type ?? 'navigation.sheet.loaded';
  const event: Record<string, unknown> = structuredClone(TYPED[type]?.minimal ?? { sheetTitle: 'Overview' });
  const context = payloadContext();
  const [, holder, ...rest] = rule.path;
  let parent = holder === 'context' ? context : event;
  for (const name of rest.slice(0, -1)) {
    const start = getPath(TYPED[type]?.full, [name]);
    const child: Record<string, unknown> = isRecord(start) ? structuredClone(start) : {};
    parent[name] = child;
    parent = child;
  }
  const leaf = rest[rest.length - 1] ?? '';
  if (value === undefined) delete parent[leaf];
  else parent[leaf] = value;
  return envelope({ type, payload: { context, event } });
}

const ruleName = (rule: MemberRule) => `${rule.type ?? 'every type'}: ${rule.path.join('.')}`;

/** The cells of a Markdown table row, trimmed. */
const cells = (row: string): string[] =>
  row
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());

describe('docs/audit-api.md', () => {
  const docs = readFileSync(new URL('../../../docs/audit-api.md', import.meta.url), 'utf8');
  /** The table rows of the part of the page that starts at `heading` and ends at the next heading. */
  const rowsUnder = (heading: string): string[][] => {
    const start = docs.indexOf(heading);
    expect(start, heading).toBeGreaterThanOrEqual(0);
    const rest = docs.slice(start + heading.length);
    const end = rest.search(/^(#{2,3} |\*\*`)/m);
    return (end < 0 ? rest : rest.slice(0, end))
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map(cells);
  };

  it.each(MEMBER_RULES.map((r) => [ruleName(r), r] as const))(
    'lists %s with its rule, its message and whether it is required',
    (_name, rule) => {
      const member = rule.path.slice(2).join('.');
      const rows = rowsUnder(rule.type === undefined ? '### payload.context' : `**\`${rule.type}\`**`);
      const row = rows.find((r) => (r[0] ?? '').split(', ').includes(`\`${member}\``));
      expect(row, `no row names \`${member}\``).toBeDefined();
      const message = /^`(.*)`$/.exec(row?.at(-1) ?? '')?.[1] ?? '';
      // A row of several members shows the message of one: the others' differ only in the member's path.
      const shown = message.split(' ')[0] ?? '';
      expect(rule.message.replace(rule.path.join('.'), shown)).toBe(message);
      if (rule.type !== undefined) expect(row?.[1]?.startsWith('yes') ?? false, 'Required').toBe(rule.required);
    },
  );
});

describe.each(['lambda', 'http'] as const)('audit payload rules via %s', (door) => {
  let api: AuditApi;
  beforeAll(async () => {
    // Hundreds of requests from one address: the rate limit is not under test here.
    api = await startAuditApi(door, { yaml: ['    rateLimit:', '      enable: false'] });
  });
  afterAll(() => api.close());

  const post = (body: unknown, headers: Record<string, string> = { 'x-audit-client-version': CLIENT_VERSION }) =>
    api.call({ body, headers });

  async function expectAccepted(body: unknown, what: string, headers?: Record<string, string>): Promise<void> {
    const res = await post(body, headers);
    expect(res.status, `${what}: ${res.text}`).toBe(202);
  }

  async function expectRejected(body: unknown, status: 400 | 422, errors: Errors, what: string): Promise<void> {
    const res = await post(body);
    expect(res.status, `${what}: ${res.text}`).toBe(status);
    expect(res.json, what).toMatchObject({
      status: 'error',
      outcome: 'dropped',
      reason: status === 400 ? 'Schema validation failed' : 'One or more constraint violations',
    });
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
    it.each(MEMBER_RULES.map((r) => [ruleName(r), r] as const))('%s', async (name, rule) => {
      const { valid, invalid } = edgeValues(rule.check);
      for (const value of rule.required ? valid : [undefined, ...valid])
        await expectAccepted(place(rule, value), `${name} = ${label(value)}`);
      for (const value of invalid) {
        await expectRejected(
          place(rule, value),
          422,
          [{ instancePath: pointer(rule.path), message: rule.message }],
          `${name} = ${label(value)}`,
        );
      }
      if (rule.required) {
        await expectRejected(
          place(rule, undefined),
          422,
          [{ instancePath: pointer(rule.path), message: rule.requiredMessage ?? '' }],
          `${name} missing`,
        );
      }
    });

    it('covers every type with payload rules', () => {
      expect([...RULED_TYPES].sort()).toEqual(Object.keys(TYPED).sort());
    });
  });

  describe('payload.context', () => {
    it('reports each violation as its own entry, in member order, next to the other rules', async () => {
      const context = {
        appId: 'app-1',
        appName: emoji(65),
        sheetId: ascii(65),
        sheetName: 7,
        user: emoji(257),
        userAgent: ascii(513),
      };
      await expectRejected(
        envelope({ payload: { context } }),
        422,
        [
          { instancePath: '/payload/context/appId', message: 'payload.context.appId must be a UUID' },
          {
            instancePath: '/payload/context/appName',
            message: 'payload.context.appName must be a string of at most 64 characters',
          },
          {
            instancePath: '/payload/context/sheetId',
            message: 'payload.context.sheetId must be a string of at most 64 characters',
          },
          {
            instancePath: '/payload/context/sheetName',
            message: 'payload.context.sheetName must be a string of at most 64 characters',
          },
          {
            instancePath: '/payload/context/user',
            message: 'payload.context.user must be a string of at most 256 characters',
          },
          {
            instancePath: '/payload/context/userAgent',
            message: 'payload.context.userAgent must be a string of at most 512 characters',
          },
        ],
        'six context violations',
      );
    });

    it("applies to every type, together with the type's own rules", async () => {
      const body = envelope({
        type: 'object.view.duration',
        payload: {
          context: payloadContext({ sheetName: emoji(65) }),
          event: { objectId: '', duration: 1, leftAt: '2026-11-22T10:15:22Z' },
        },
      });
      await expectRejected(
        body,
        422,
        [
          {
            instancePath: '/payload/context/sheetName',
            message: 'payload.context.sheetName must be a string of at most 64 characters',
          },
          {
            instancePath: '/payload/event/objectId',
            message: 'payload.event.objectId must be a string of 1 to 64 characters',
          },
        ],
        'context and event violations',
      );
      await expectRejected(
        envelope({ type: 'event.custom-thing', payload: { context: { user: emoji(257) } } }),
        422,
        [
          {
            instancePath: '/payload/context/user',
            message: 'payload.context.user must be a string of at most 256 characters',
          },
        ],
        'a custom event type',
      );
    });

    it('is optional, may be empty, and keeps members the rules do not name', async () => {
      await expectAccepted(envelope({ payload: {} }), 'no context');
      await expectAccepted(envelope({ payload: { context: {} } }), 'empty context');
      await expectAccepted(
        envelope({
          payload: { context: payloadContext({ host: 7, client: { viewport: { width: 1920 } }, objectId: null }) },
        }),
        'unnamed members',
      );
    });

    it('must be an object when present', async () => {
      for (const context of [null, 'ctx', 7, ['x']]) {
        await expectRejected(
          envelope({ payload: { context } }),
          422,
          [{ instancePath: '/payload/context', message: 'payload.context must be an object' }],
          `context = ${label(context)}`,
        );
      }
    });
  });

  describe('payload.event per type', () => {
    it('accepts each type with every named member, and with only the required ones', async () => {
      for (const [type, { full, minimal }] of Object.entries(TYPED)) {
        await expectAccepted(envelope({ type, payload: { context: payloadContext(), event: full } }), `${type} (full)`);
        await expectAccepted(envelope({ type, payload: { event: minimal } }), `${type} (minimal)`);
      }
    });

    it('requires payload.event for every type with payload rules, and an object whenever it is sent', async () => {
      for (const type of RULED_TYPES) {
        const res = await post(envelope({ type, payload: { context: payloadContext() } }));
        expect(res.status, type).toBe(422);
        expect(errorsOf(res), type).toEqual([
          { instancePath: '/payload/event', message: 'payload.event is required for this type' },
        ]);
        for (const event of ['x', 7, null, []]) {
          await expectRejected(
            envelope({ type, payload: { event } }),
            422,
            [{ instancePath: '/payload/event', message: 'payload.event must be an object' }],
            `${type}: event = ${label(event)}`,
          );
        }
      }
      await expectAccepted(
        envelope({ type: 'navigation.sheet.loaded', payload: {} }),
        'a type without payload rules, without payload.event',
      );
    });

    it('reports every violation of one event, each as its own entry', async () => {
      const event = {
        objectId: ascii(65),
        duration: -0.5,
        leftAt: '2026-11-22T10:15:22',
        selectionTxnId: ascii(37),
        enterSelectionTxnId: 1,
        leaveSelectionTxnId: {},
        enteredAt: 'soon',
        visible: 'yes',
        dataStateId: 0.5,
      };
      await expectRejected(
        envelope({ type: 'object.view.duration', payload: { event } }),
        422,
        [
          {
            instancePath: '/payload/event/objectId',
            message: 'payload.event.objectId must be a string of 1 to 64 characters',
          },
          {
            instancePath: '/payload/event/duration',
            message: 'payload.event.duration must be a finite number of at least 0',
          },
          {
            instancePath: '/payload/event/leftAt',
            message: 'payload.event.leftAt must be an RFC 3339 date-time with a zone',
          },
          {
            instancePath: '/payload/event/selectionTxnId',
            message: 'payload.event.selectionTxnId must be a string of at most 36 characters, or null',
          },
          {
            instancePath: '/payload/event/enterSelectionTxnId',
            message: 'payload.event.enterSelectionTxnId must be a string of at most 36 characters, or null',
          },
          {
            instancePath: '/payload/event/leaveSelectionTxnId',
            message: 'payload.event.leaveSelectionTxnId must be a string of at most 36 characters, or null',
          },
          {
            instancePath: '/payload/event/enteredAt',
            message: 'payload.event.enteredAt must be an RFC 3339 date-time with a zone, or null',
          },
          { instancePath: '/payload/event/visible', message: 'payload.event.visible must be a boolean or null' },
          {
            instancePath: '/payload/event/dataStateId',
            message: 'payload.event.dataStateId must be an integer or null',
          },
        ],
        'nine object.view.duration violations',
      );
    });

    it('checks crop as an object with width and height whenever it is sent', async () => {
      const shot = TYPED['screenshot.url.received']?.minimal;
      for (const crop of [null, 'full', 7, [100, 50]]) {
        await expectRejected(
          envelope({ type: 'screenshot.url.received', payload: { event: { ...shot, crop } } }),
          422,
          [{ instancePath: '/payload/event/crop', message: 'payload.event.crop must be an object' }],
          `crop = ${label(crop)}`,
        );
      }
      await expectRejected(
        envelope({ type: 'screenshot.url.received', payload: { event: { ...shot, crop: { top: 4 } } } }),
        422,
        [
          {
            instancePath: '/payload/event/crop/width',
            message: 'payload.event.crop.width is required when payload.event.crop is sent',
          },
          {
            instancePath: '/payload/event/crop/height',
            message: 'payload.event.crop.height is required when payload.event.crop is sent',
          },
        ],
        'crop without width and height',
      );
    });

    it('checks the members the docs once called "stored as sent": each missing or broken one is its own entry', async () => {
      const notUuid = 'not-a-uuid';
      const uuidMessage = 'payload.event.selectionTxnId must be a UUID';
      await expectRejected(
        envelope({
          type: 'screenshot.url.received',
          payload: { event: { screenshotUrl: 'https://a.example.com/x.png', selectionTxnId: notUuid } },
        }),
        422,
        [{ instancePath: '/payload/event/selectionTxnId', message: uuidMessage }],
        'screenshot with a non-UUID selectionTxnId',
      );
      await expectRejected(
        envelope({
          type: 'event.unsupported.visualization',
          payload: { event: { vizType: '', dataStateId: false } },
        }),
        422,
        [
          {
            instancePath: '/payload/event/selectionTxnId',
            message: 'payload.event.selectionTxnId is required for this type',
          },
          {
            instancePath: '/payload/event/vizType',
            message: 'payload.event.vizType must be a string of 1 to 64 characters',
          },
          {
            instancePath: '/payload/event/dataStateId',
            message: 'payload.event.dataStateId must be a number, a string or null',
          },
        ],
        'visualization without selectionTxnId, with an empty vizType and a boolean dataStateId',
      );
      await expectRejected(
        envelope({
          type: 'app.model.validated',
          payload: { event: { selectionTxnId: notUuid, dataStateId: '17', captureScheduled: 'yes' } },
        }),
        422,
        [
          { instancePath: '/payload/event/selectionTxnId', message: uuidMessage },
          {
            instancePath: '/payload/event/dataStateId',
            message: 'payload.event.dataStateId must be an integer or null',
          },
          {
            instancePath: '/payload/event/captureScheduled',
            message: 'payload.event.captureScheduled must be a boolean or null',
          },
        ],
        'app.model.validated with three broken members',
      );
      await expectRejected(
        envelope({ type: 'object.view.duration', payload: { event: { objectId: 'o1', selectionTxnId: notUuid } } }),
        422,
        [
          { instancePath: '/payload/event/duration', message: 'payload.event.duration is required for this type' },
          { instancePath: '/payload/event/leftAt', message: 'payload.event.leftAt is required for this type' },
        ],
        'object.view.duration without duration and leftAt (its selectionTxnId need not be a UUID)',
      );
    });

    it("refuses a number that JSON parses to infinity (1e400) wherever a rule checks a number, with that rule's message", async () => {
      const numeric = MEMBER_RULES.filter((rule) => checksNumber(rule.check));
      // Every kind of number rule is among them: crop sizes and offsets, duration, integers, number-or-string.
      expect(new Set(numeric.map((rule) => rule.check.kind))).toEqual(
        new Set(['number', 'integerOrNull', 'numberStringOrNull']),
      );
      const mark = '__overflowing_number__';
      for (const rule of numeric) {
        for (const literal of OVERFLOWING_NUMBERS) {
          const text = JSON.stringify(place(rule, mark)).replace(`"${mark}"`, literal);
          const res = await post(text);
          const what = `${ruleName(rule)} = ${literal}`;
          expect(res.status, `${what}: ${res.text}`).toBe(422);
          expect(errorsOf(res), what).toEqual([{ instancePath: pointer(rule.path), message: rule.message }]);
        }
      }
      // The envelope's one number, a structural rule: 400.
      const text = JSON.stringify(envelope({ schemaVersion: mark })).replace(`"${mark}"`, '1e400');
      await expectRejected(
        text,
        400,
        [{ instancePath: '/schemaVersion', message: 'must be integer' }],
        'schemaVersion',
      );
    });

    it('accepts members the rules do not name, whatever they hold', async () => {
      const extra = { note: null, nested: { deep: [1, 'two'] }, objectData: { qId: 'abc' } };
      for (const [type, { minimal }] of Object.entries(TYPED)) {
        await expectAccepted(
          envelope({ type, payload: { event: { ...minimal, ...extra } } }),
          `${type} with extra members`,
        );
      }
      await expectAccepted(
        envelope({
          type: 'screenshot.url.received',
          payload: {
            event: {
              ...TYPED['screenshot.url.received']?.minimal,
              crop: { width: 1, height: 1, x: 'left', zoom: null },
            },
          },
        }),
        'crop with extra members',
      );
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
      const { notObject, kind, name, versionEmpty, versionNotString } = SOURCE_MESSAGES;
      const cases: [unknown, Errors][] = [
        [{ kind: 'browser' }, [{ instancePath: '/source/kind', message: kind }]],
        [{ kind: null }, [{ instancePath: '/source/kind', message: kind }]],
        [{ name: 'audit-qs2' }, [{ instancePath: '/source/name', message: name }]],
        [{ name: 7 }, [{ instancePath: '/source/name', message: name }]],
        [{ version: '' }, [{ instancePath: '/source/version', message: versionEmpty }]],
        [{ version: 3 }, [{ instancePath: '/source/version', message: versionNotString }]],
        [
          { kind: 'QLIK-SENSE-EXTENSION', name: '', version: null },
          [
            { instancePath: '/source/kind', message: kind },
            { instancePath: '/source/name', message: name },
            { instancePath: '/source/version', message: versionNotString },
          ],
        ],
        ['audit-qs', [{ instancePath: '/source', message: notObject }]],
        [null, [{ instancePath: '/source', message: notObject }]],
      ];
      for (const [source, errors] of cases)
        await expectRejected(envelope({ source }), 400, errors, `source = ${label(source)}`);
    });
  });

  describe('client version: X-Audit-Client-Version wins over source.version whenever it yields a value', () => {
    const withVersion = (version: string | undefined) =>
      envelope({
        source: { kind: 'qlik-sense-extension', name: 'audit-qs', ...(version === undefined ? {} : { version }) },
      });

    it('takes the header when it yields a value, compatible or not', async () => {
      const body = withVersion('9.9.9');
      await expectAccepted(body, 'header 0.3.1 over source.version 9.9.9', { 'x-audit-client-version': '0.3.1' });
      expect((await delivered(body['eventId'])).meta.clientVersion).toBe('0.3.1');

      const first = withVersion('0.2.0');
      await expectAccepted(first, 'first of several header values', { 'x-audit-client-version': ' 0.3.4 , 9.9.9' });
      expect((await delivered(first['eventId'])).meta.clientVersion).toBe('0.3.4');

      const res = await post(withVersion('0.3.1'), { 'x-audit-client-version': '0.4.0' });
      expect(res.status).toBe(422);
      expect(errorsOf(res)).toEqual([
        {
          instancePath: '',
          message: expect.stringMatching(/^audit client version 0\.4\.0 is not compatible/) as string,
        },
      ]);
    });

    it.each(['', ' ', ',', ' , 0.3.1', '\t,\t'])(
      'falls back to source.version when the header normalises to nothing (%j)',
      async (header) => {
        const compatible = withVersion('0.3.7');
        await expectAccepted(compatible, `header ${JSON.stringify(header)} with source.version 0.3.7`, {
          'x-audit-client-version': header,
        });
        expect((await delivered(compatible['eventId'])).meta.clientVersion).toBe('0.3.7');

        const res = await post(withVersion('0.2.9'), { 'x-audit-client-version': header });
        expect(res.status, res.text).toBe(422);
        expect(errorsOf(res)).toEqual([
          {
            instancePath: '/source/version',
            message: expect.stringMatching(/^audit client version 0\.2\.9 is not compatible/) as string,
          },
        ]);

        const none = withVersion(undefined);
        await expectAccepted(none, `header ${JSON.stringify(header)} without source.version`, {
          'x-audit-client-version': header,
        });
        expect((await delivered(none['eventId'])).meta.clientVersion).toBeNull();
      },
    );

    it('treats a source.version of only spaces as no version', async () => {
      const body = withVersion('   ');
      await expectAccepted(body, 'source.version of spaces', {});
      expect((await delivered(body['eventId'])).meta.clientVersion).toBeNull();
    });
  });

  describe('the data model finds the members it reads', () => {
    it("fills the columns from an accepted event's context and event", async () => {
      const txn = 'Txn-Mixed-Case-1';
      const body = envelope({
        type: 'object.view.duration',
        source: {},
        payload: {
          context: payloadContext({
            appId: 'E7AF59A0-C243-480D-9571-08727551A66F',
            sheetId: 's-1',
            user: `UserDirectory=LAB; UserId=g${EMOJI}ran`,
          }),
          event: {
            objectId: 'kPjmXq',
            selectionTxnId: txn,
            dataStateId: 17,
            duration: 12.5,
            leftAt: '2026-11-22T10:15:22Z',
          },
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
      const selection = envelope({
        type: 'selection.state.changed',
        payload: { event: { selectionTxnId: upper, details: [] } },
      });
      await expectAccepted(selection, 'selection.state.changed');
      expect(auditRow(await delivered(selection['eventId']))).toMatchObject({
        selection_txn_id: upper.toLowerCase(),
        source_name: 'audit-qs',
        user_id: null,
      });
    });
  });
});
