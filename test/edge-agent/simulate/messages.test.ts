/** The seeded datagram generator of `svc simulate udp`: every datagram round-trips through the real parsers. */
import { describe, expect, it } from 'vitest';
import {
  createDatagramGenerator,
  type DatagramPool,
  DEFAULT_POOL,
  DEFAULT_START_MS,
  formatPlatformTimestamp,
  KIND_EVENT_TYPE,
  KIND_FAMILIES,
  KIND_FIELD_COUNT,
  kindFamily,
  LOG_KINDS,
  MALFORMED_EXPECTED,
  MALFORMED_VARIANTS,
  mulberry32,
  parseKindList,
  SIMULATE_KINDS,
  type SimDatagram,
  type SimulateKind,
  USER_KINDS,
} from '../../../edge-agent/simulate/messages.js';
import { timestampForm, tsToInstantMs } from '../../../edge-agent/sources/common/validators.js';
import {
  type LogEvent,
  type ParseResult,
  parseLogEvent,
  parseUserEvent,
  type UserEvent,
} from '../../../edge-agent/sources/udp/parse/index.js';
import { countParts } from '../../../edge-agent/sources/udp/parse/split.js';

const RECEIVED_AT = Date.parse('2024-03-12T12:00:00.000Z');
const SEEDS = [1, 42, 0xdeadbeef];
const PER_SEED = 20_000;

function parse(d: SimDatagram): ParseResult<UserEvent | LogEvent> {
  return kindFamily(d.kind) === 'user' ? parseUserEvent(d.data, RECEIVED_AT) : parseLogEvent(d.data, RECEIVED_AT);
}

function take(seed: number, count: number, kinds?: readonly SimulateKind[], malformed = 0): SimDatagram[] {
  const generator = createDatagramGenerator({ seed, malformed, ...(kinds ? { kinds } : {}) });
  return Array.from({ length: count }, () => generator.next());
}

/** Text fields of each kind by index (§1.2, §2.2) that must come back from the parser exactly as generated. */
const TEXT_FIELDS: Record<SimulateKind, Record<string, number>> = {
  'user-session': { host: 1, command: 2, user_directory: 3, user_id: 4, origin: 5, context: 6, message: 7 },
  'user-connection': { host: 1, command: 2, user_directory: 3, user_id: 4, origin: 5, context: 6, message: 7 },
  engine: {
    level: 4,
    host: 5,
    subsystem: 6,
    windows_user: 7,
    message: 8,
    user_directory: 10,
    user_id: 11,
    engine_ts: 12,
    engine_exe_version: 14,
    server_started: 15,
    entry_type: 16,
  },
  proxy: {
    level: 4,
    host: 5,
    subsystem: 6,
    windows_user: 7,
    message: 8,
    exception_message: 9,
    user_directory: 10,
    user_id: 11,
    command: 12,
    result_code: 13,
    origin: 14,
    context: 15,
  },
  repository: {
    level: 4,
    host: 5,
    subsystem: 6,
    windows_user: 7,
    message: 8,
    exception_message: 9,
    user_directory: 10,
    user_id: 11,
    command: 12,
    result_code: 13,
    origin: 14,
    context: 15,
  },
  scheduler: {
    level: 4,
    host: 5,
    subsystem: 6,
    windows_user: 7,
    message: 8,
    exception_message: 9,
    task_name: 13,
    app_name: 14,
  },
  'qix-perf': {
    level: 4,
    host: 5,
    subsystem: 6,
    windows_user: 7,
    user_directory: 9,
    user_id: 10,
    engine_ts: 11,
    method: 15,
    object_id: 22,
    object_type: 25,
  },
};

describe('kinds and families', () => {
  it('lists seven kinds in two families', () => {
    expect(SIMULATE_KINDS).toEqual([
      'user-session',
      'user-connection',
      'engine',
      'proxy',
      'repository',
      'scheduler',
      'qix-perf',
    ]);
    expect(KIND_FAMILIES.user).toEqual(USER_KINDS);
    expect(KIND_FAMILIES.log).toEqual(LOG_KINDS);
    expect(KIND_FAMILIES.all).toEqual([...USER_KINDS, ...LOG_KINDS]);
    expect(SIMULATE_KINDS.map(kindFamily)).toEqual(['user', 'user', 'log', 'log', 'log', 'log', 'log']);
  });

  it('parses comma lists of kinds and families, without duplicates, in kind order', () => {
    expect(parseKindList('all')).toEqual({ ok: true, kinds: [...SIMULATE_KINDS] });
    expect(parseKindList('qix-perf, user')).toEqual({
      ok: true,
      kinds: ['user-session', 'user-connection', 'qix-perf'],
    });
    expect(parseKindList('Engine,log,engine')).toEqual({ ok: true, kinds: [...LOG_KINDS] });
    expect(parseKindList('user-session,')).toEqual({ ok: true, kinds: ['user-session'] });
    const bad = parseKindList('engine,bogus,nope');
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.error).toBe(
        'unknown kinds "bogus", "nope" (valid: user-session, user-connection, engine, proxy, repository, scheduler, qix-perf, user, log, all)',
      );
    expect(parseKindList(' , ')).toEqual({ ok: false, error: 'no kind given' });
  });
});

describe('helpers', () => {
  it('mulberry32 is deterministic, in [0, 1), and depends on the seed', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mulberry32(8)()).not.toBe(xs[0]);
    expect(mulberry32(2 ** 32 + 7)()).toBe(xs[0]);
  });

  it('formats the three platform timestamp forms with any offset', () => {
    const ms = Date.parse('2024-03-12T09:15:22.123Z');
    expect(formatPlatformTimestamp(ms, 60, 'compact')).toBe('20240312T101522.123+0100');
    expect(formatPlatformTimestamp(ms, 60, 'extended')).toBe('2024-03-12T10:15:22.123+01:00');
    expect(formatPlatformTimestamp(ms, 60, 'local')).toBe('2024-03-12 10:15:22,123');
    expect(formatPlatformTimestamp(ms, -210, 'compact')).toBe('20240312T054522.123-0330');
    expect(formatPlatformTimestamp(ms, 330, 'extended')).toBe('2024-03-12T14:45:22.123+05:30');
    expect(formatPlatformTimestamp(ms, 0, 'compact')).toBe('20240312T091522.123+0000');
    for (const offset of [-300, -210, 0, 60, 330, 540]) {
      expect(tsToInstantMs(formatPlatformTimestamp(ms, offset, 'compact'))).toBe(ms);
      expect(tsToInstantMs(formatPlatformTimestamp(ms, offset, 'extended'))).toBe(ms);
      expect(timestampForm(formatPlatformTimestamp(ms, offset, 'local'))).toBe('local');
    }
  });

  it('rejects invalid options', () => {
    expect(() => createDatagramGenerator({ seed: 1.5 })).toThrow(RangeError);
    expect(() => createDatagramGenerator({ seed: 1, kinds: [] })).toThrow(/kinds/);
    expect(() => createDatagramGenerator({ seed: 1, malformed: 1.1 })).toThrow(/malformed/);
    expect(() => createDatagramGenerator({ seed: 1, malformed: Number.NaN })).toThrow(/malformed/);
    expect(() => createDatagramGenerator({ seed: 1, stepMs: -1 })).toThrow(/stepMs/);
    expect(createDatagramGenerator({ seed: 3 }).options).toEqual({
      seed: 3,
      kinds: [...SIMULATE_KINDS],
      malformed: 0,
      startMs: DEFAULT_START_MS,
      stepMs: 100,
      pool: DEFAULT_POOL,
    });
  });
});

describe('an injected pool of users, apps and nodes', () => {
  const pool: DatagramPool = {
    users: [
      { dir: 'SIM', id: 'björn.åberg' },
      { dir: 'SIM', id: 'zoë' },
    ],
    apps: [
      { id: '11111111-2222-4333-8444-555555555555', name: 'Pool app', taskId: '66666666-7777-4888-9999-aaaaaaaaaaaa' },
    ],
    nodes: [
      { name: 'node7', fqdn: 'node7.sim.local', offset: 120, serviceUser: 'SIM\\svc', engineVersion: '14.254.6' },
    ],
  };

  it("names only the pool's users, apps and nodes, and still round-trips through the parsers", () => {
    const generator = createDatagramGenerator({ seed: 11, pool });
    const users = new Set<string>();
    const apps = new Set<string>();
    const hosts = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const d = generator.next();
      const result = parse(d);
      expect(result.ok, d.data.toString('utf8')).toBe(true);
      if (!result.ok) continue;
      const event = result.event as unknown as Record<string, unknown>;
      hosts.add(String(event['host']));
      for (const key of ['appId', 'app_id'])
        if (typeof event[key] === 'string' && event[key] !== '') apps.add(event[key]);
      const dir = event['user_directory'];
      if (typeof dir === 'string' && dir !== '' && dir !== 'INTERNAL') users.add(`${dir}\\${String(event['user_id'])}`);
    }
    expect([...hosts]).toEqual(['node7']);
    expect([...apps]).toEqual(['11111111-2222-4333-8444-555555555555']);
    expect([...users].sort()).toEqual(['SIM\\björn.åberg', 'SIM\\zoë']);
  });

  it('keeps the built-in parts the pool does not give', () => {
    const generator = createDatagramGenerator({ seed: 1, pool: { users: pool.users } });
    expect(generator.options.pool).toEqual({ ...DEFAULT_POOL, users: pool.users });
  });

  it('rejects a pool whose entries would not survive the wire format', () => {
    expect(() => createDatagramGenerator({ seed: 1, pool: { users: [] } })).toThrow('pool.users must not be empty');
    expect(() => createDatagramGenerator({ seed: 1, pool: { users: [{ dir: 'A;B', id: 'x' }] } })).toThrow(
      /pool\.users\[0\]\.dir must be non-empty text without ';'/,
    );
    expect(() => createDatagramGenerator({ seed: 1, pool: { users: [{ dir: 'A', id: 'x\\y' }] } })).toThrow(
      /pool\.users\[0\] must not contain/,
    );
    expect(() =>
      createDatagramGenerator({
        seed: 1,
        pool: { apps: [{ ...pool.apps[0]!, id: 'E7AF59A0-C243-480D-9571-08727551A66F' }] },
      }),
    ).toThrow(/pool\.apps\[0\]\.id must be a lower-case uuid/);
    expect(() =>
      createDatagramGenerator({ seed: 1, pool: { apps: [{ ...pool.apps[0]!, name: 'tab\there' }] } }),
    ).toThrow(/pool\.apps\[0\]\.name/);
    expect(() =>
      createDatagramGenerator({ seed: 1, pool: { nodes: [{ ...pool.nodes[0]!, offset: 15 * 60 }] } }),
    ).toThrow(/pool\.nodes\[0\]\.offset/);
  });
});

describe('well-formed datagrams round-trip through the parsers', () => {
  for (const kind of SIMULATE_KINDS) {
    it(`${kind}: ${SEEDS.length} seeds × ${PER_SEED} datagrams parse ok as ${KIND_EVENT_TYPE[kind]} with the generated fields`, () => {
      // Plain comparisons per datagram (expect() per field of 60,000 datagrams would dominate the run time).
      const problems: string[] = [];
      const check = (ok: boolean, what: string, d: SimDatagram): void => {
        if (!ok && problems.length < 10) problems.push(`${what}: ${d.data.toString('utf8')}`);
      };
      const hosts = new Set<string>();
      const offsets = new Set<string>();
      const levels = new Map<string, number>();
      const users = new Set<string>();
      const messages = new Set<string>();
      let surplus = 0;
      let license = 0;
      const activity = new Map<string, number>();
      const browsers = new Set<string>();
      for (const seed of SEEDS) {
        for (const d of take(seed, PER_SEED, [kind])) {
          const fields = d.fields ?? [];
          check(d.kind === kind && d.malformed === null && d.expected === 'ok', 'kind / malformed / expected', d);
          check(fields.length === KIND_FIELD_COUNT[kind], `field count ${fields.length}`, d);
          const text = d.data.toString('utf8');
          check(
            text === fields.join(';') && Buffer.byteLength(text) === d.data.length,
            'data = fields joined with ;',
            d,
          );
          const result = parse(d);
          if (!result.ok) {
            check(false, `seed ${seed}: ${result.reason} ${result.detail}`, d);
            continue;
          }
          const event = result.event as unknown as Record<string, unknown>;
          const type = kindFamily(kind) === 'user' ? event['messageType'] : event['source'];
          check(type === KIND_EVENT_TYPE[kind], `type ${String(type)}`, d);
          for (const [key, idx] of Object.entries(TEXT_FIELDS[kind])) {
            check(
              event[key] === fields[idx],
              `seed ${seed}: ${key} = ${JSON.stringify(event[key])}, generated ${JSON.stringify(fields[idx])}`,
              d,
            );
          }
          if (countParts(text) > fields.length) surplus++;
          hosts.add(String(event['host']));
          if (typeof event['user_full'] === 'string' && event['user_full'] !== '') users.add(event['user_full']);
          if (kindFamily(kind) === 'log') {
            // Field 2 compact ISO with the node's offset (the event time), field 3 local, both valid.
            const iso = fields[2] ?? '';
            check(timestampForm(iso) === 'compact' && event['ts_iso'] === iso, 'ts_iso', d);
            check(timestampForm(fields[3] ?? '') === 'local' && event['ts_local'] === fields[3], 'ts_local', d);
            check(event['eventTimeMs'] === tsToInstantMs(iso), 'eventTimeMs', d);
            check(event['log_row'] === Number(fields[1]), 'log_row', d);
            offsets.add(iso.slice(-5));
            levels.set(String(event['level']), (levels.get(String(event['level'])) ?? 0) + 1);
          }
          if (typeof event['message'] === 'string') {
            messages.add(event['message']);
            if (event['message'].toLowerCase().includes('license')) license++;
          }
          if (kind === 'user-connection') {
            const ue = result.event as UserEvent;
            check(ue.appId === /^\/app\/([0-9a-f-]{36})/.exec(fields[6] ?? '')?.[1], 'appId', d);
            check(ue.uaText === /UserAgent: '(.*)'$/.exec(fields[7] ?? '')?.[1], 'uaText', d);
            browsers.add(ue.uaText ?? '');
          }
          if (kind === 'qix-perf') {
            const qe = result.event as Extract<LogEvent, { source: 'qseow-qix-perf' }>;
            activity.set(qe.event_activity_source, (activity.get(qe.event_activity_source) ?? 0) + 1);
            if (qe.event_activity_source === 'user')
              check(qe.proxy_session_id === fields[8] && qe.session_id === fields[12], 'session ids', d);
            else
              check(fields[8] === '0' && qe.proxy_session_id === '' && qe.session_id === '', 'non-user session ids', d);
            check(qe.app_id === fields[13], 'app_id', d);
            for (const key of [
              'request_id',
              'process_time',
              'work_time',
              'lock_time',
              'validate_time',
              'traverse_time',
              'handle',
              'net_ram',
              'peak_ram',
            ] as const) {
              check(qe[key] !== null, `${key} is null`, d);
            }
          }
          if (kind === 'scheduler') {
            const se = result.event as Extract<LogEvent, { source: 'qseow-scheduler' }>;
            const [dir, id, full] = [fields[10], fields[11], fields[12]];
            check(
              se.user_full === (full !== '' ? full : dir !== '' ? `${dir}\\${id}` : ''),
              `user_full ${se.user_full}`,
              d,
            );
            check(se.app_id === fields[16] && se.task_id === fields[15], 'app_id / task_id', d);
          }
        }
      }
      expect(problems).toEqual([]);
      const total = SEEDS.length * PER_SEED;
      // Variety: several nodes, people, messages; surplus `;` in free text where the source has some.
      expect(hosts.size).toBeGreaterThanOrEqual(5);
      expect(users.size).toBeGreaterThanOrEqual(kind === 'repository' ? 3 : 7);
      if (kind !== 'qix-perf') expect(messages.size).toBeGreaterThanOrEqual(10);
      if (kind === 'user-connection') {
        expect(surplus).toBeGreaterThan(total / 2); // the `;` inside user agents
        expect(browsers.size).toBe(8);
      }
      if (['engine', 'proxy', 'repository', 'scheduler'].includes(kind)) {
        expect(surplus).toBeGreaterThan(total / 20);
        expect(license).toBeGreaterThan(total / 20);
        // Mostly WARN / ERROR, some FATAL.
        expect((levels.get('WARN') ?? 0) + (levels.get('ERROR') ?? 0)).toBeGreaterThan(total * 0.9);
        expect([...levels.keys()].sort()).toEqual(['ERROR', 'FATAL', 'WARN']);
      }
      if (kindFamily(kind) === 'log')
        expect([...offsets].sort()).toEqual(['+0000', '+0100', '+0530', '+0900', '-0330', '-0500']);
      if (kind === 'qix-perf') {
        expect([...levels.keys()]).toEqual(['INFO']);
        expect(surplus).toBe(0);
        expect(activity.get('non-user') ?? 0).toBeGreaterThan(total / 10);
        expect(activity.get('user') ?? 0).toBeGreaterThan(total / 2);
      }
      if (kind === 'qix-perf' || kind === 'scheduler' || kind === 'engine')
        expect(users.has('INTERNAL\\sa_scheduler')).toBe(true);
    });
  }
});

describe('streams', () => {
  it('the same seed gives the same stream, byte for byte; other seeds differ', () => {
    const a = take(42, 5000, undefined, 0.2);
    const b = take(42, 5000, undefined, 0.2);
    expect(
      b.every(
        (d, i) =>
          d.data.equals(a[i]?.data ?? Buffer.alloc(1)) && d.kind === a[i]?.kind && d.malformed === a[i]?.malformed,
      ),
    ).toBe(true);
    expect(a.filter((d) => d.malformed !== null).length).toBeGreaterThan(800);
    for (const seed of [41, 43, 1_000_000]) {
      const other = take(seed, 5000, undefined, 0.2);
      const same = other.filter((d, i) => d.data.equals(a[i]?.data ?? Buffer.alloc(0))).length;
      expect(same, `seed ${seed}`).toBeLessThan(50); // only the occasional empty datagram coincides
    }
  });

  it('the simulated clock starts at startMs and advances by about stepMs per datagram', () => {
    const startMs = Date.parse('2025-06-01T00:00:00.000Z');
    const generator = createDatagramGenerator({ seed: 5, kinds: ['engine'], startMs, stepMs: 10 });
    const times = Array.from({ length: 10_000 }, () => tsToInstantMs(generator.next().fields?.[2] ?? '') ?? Number.NaN);
    expect(times[0]).toBeGreaterThanOrEqual(startMs);
    expect(times.every((t, i) => i === 0 || t >= (times[i - 1] ?? 0))).toBe(true);
    const span = (times.at(-1) ?? 0) - startMs;
    expect(span).toBeGreaterThan(90_000);
    expect(span).toBeLessThan(110_000);
  });

  it('kinds are equally likely', () => {
    const counts = new Map<SimulateKind, number>();
    for (const d of take(9, 70_000)) counts.set(d.kind, (counts.get(d.kind) ?? 0) + 1);
    for (const kind of SIMULATE_KINDS) expect(Math.abs((counts.get(kind) ?? 0) - 10_000), kind).toBeLessThan(500);
  });
});

describe('malformed datagrams', () => {
  it('each variant gives its expected parse result; failing ones never parse ok as the claimed kind', () => {
    const datagrams = take(42, 20_000, undefined, 0.3);
    const tally = { wellFormed: 0, malformed: 0, ok: 0, unknown_prefix: 0, failedMalformed: 0 };
    const variants = new Map<string, number>();
    for (const d of datagrams) {
      const result = parse(d);
      if (d.malformed === null) {
        tally.wellFormed++;
        expect(result.ok).toBe(true);
        continue;
      }
      tally.malformed++;
      variants.set(d.malformed, (variants.get(d.malformed) ?? 0) + 1);
      expect(d.expected).toBe(MALFORMED_EXPECTED[d.malformed]);
      expect(d.fields).toBeNull();
      if (result.ok) {
        tally.ok++;
        expect(['invalid-utf8', 'control-chars']).toContain(d.malformed);
        const event = result.event as unknown as Record<string, unknown>;
        expect(kindFamily(d.kind) === 'user' ? event['messageType'] : event['source']).toBe(KIND_EVENT_TYPE[d.kind]);
      } else {
        expect(result.reason, `${d.malformed}: ${result.detail}`).toBe(d.expected);
        if (result.reason === 'unknown_prefix') tally.unknown_prefix++;
        else tally.failedMalformed++;
      }
    }
    // The exact split of this seeded run (changes only when the generator does).
    expect(tally).toEqual({
      wellFormed: 13_967,
      malformed: 6033,
      ok: 2069,
      unknown_prefix: 2966,
      failedMalformed: 998,
    });
    expect(tally.ok + tally.unknown_prefix + tally.failedMalformed).toBe(tally.malformed);
    expect([...variants.keys()].sort()).toEqual([...MALFORMED_VARIANTS].sort());
  });

  it('--malformed 1 makes every datagram malformed, of the chosen kinds', () => {
    const datagrams = take(3, 2000, ['qix-perf', 'user-session'], 1);
    expect(datagrams.every((d) => d.malformed !== null && ['qix-perf', 'user-session'].includes(d.kind))).toBe(true);
    const cut = datagrams.filter((d) => d.malformed === 'too-few-fields');
    expect(cut.length).toBeGreaterThan(200);
    for (const d of cut) expect(countParts(d.data.toString('utf8'))).toBeLessThan(KIND_FIELD_COUNT[d.kind]);
    const dirty = datagrams.filter((d) => d.malformed === 'invalid-utf8');
    expect(dirty.every((d) => d.data.toString('utf8').includes('\uFFFD'))).toBe(true);
  });

  it('malformed 0 gives no malformed datagram', () => {
    expect(take(4, 5000).every((d) => d.malformed === null)).toBe(true);
  });
});
