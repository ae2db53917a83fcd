/**
 * Seeded traffic generator of `svc simulate udp`: realistic datagrams of the platform's UDP sources
 * (platform-formats.md §1.2/§1.6 user-activity events, §2.2/§2.6 log events), and malformed ones on
 * request. Pure and deterministic: the same options give the same stream, byte for byte (the clock
 * the timestamps come from is simulated too).
 */
import type { LogSource, UserEventType } from '../sources/udp/parse/layouts.js';
import { SeededRandom } from './random.js';

export { mulberry32 } from './random.js';

/** Every kind of datagram the generator makes, in this (stable) order. */
export const SIMULATE_KINDS = [
  'user-session',
  'user-connection',
  'engine',
  'proxy',
  'repository',
  'scheduler',
  'qix-perf',
] as const;
export type SimulateKind = (typeof SIMULATE_KINDS)[number];

/** Which listener a kind belongs to: `user` = user-activity events (§1), `log` = log events (§2). */
export type KindFamily = 'user' | 'log';

/** User-activity kinds (prefixes `/qseow-proxy-session/`, `/qseow-proxy-connection/`). */
export const USER_KINDS: readonly SimulateKind[] = ['user-session', 'user-connection'];
/** Log-event kinds (engine, proxy, repository, scheduler, engine performance). */
export const LOG_KINDS: readonly SimulateKind[] = ['engine', 'proxy', 'repository', 'scheduler', 'qix-perf'];

/** Names that `--kinds` accepts besides the kinds themselves. */
export const KIND_FAMILIES: Readonly<Record<KindFamily | 'all', readonly SimulateKind[]>> = {
  user: USER_KINDS,
  log: LOG_KINDS,
  all: SIMULATE_KINDS,
};

/** The platform's default listener port of each family (§1.1, §2.1, §3). */
export const DEFAULT_PORTS: Readonly<Record<KindFamily, number>> = { user: 9997, log: 9996 };

/** The `messageType` (user kinds) or `source` (log kinds) the parsers give each kind. */
export const KIND_EVENT_TYPE: Readonly<Record<SimulateKind, UserEventType | LogSource>> = {
  'user-session': 'qseow-proxy-session',
  'user-connection': 'qseow-proxy-connection',
  engine: 'qseow-engine',
  proxy: 'qseow-proxy',
  repository: 'qseow-repository',
  scheduler: 'qseow-scheduler',
  'qix-perf': 'qseow-qix-perf',
};

/** Field count `N` of each kind (§0.4). */
export const KIND_FIELD_COUNT: Readonly<Record<SimulateKind, number>> = {
  'user-session': 8,
  'user-connection': 8,
  engine: 19,
  proxy: 16,
  repository: 16,
  scheduler: 18,
  'qix-perf': 26,
};

/** The family (listener) of a kind. */
export function kindFamily(kind: SimulateKind): KindFamily {
  return USER_KINDS.includes(kind) ? 'user' : 'log';
}

export type KindListResult = { ok: true; kinds: SimulateKind[] } | { ok: false; error: string };

/**
 * Parses a comma list of kinds and families (`user`, `log`, `all`), e.g. `user,engine`. Blanks around
 * names are ignored, case is not. The result has no duplicates and is in SIMULATE_KINDS order.
 */
export function parseKindList(text: string): KindListResult {
  const names = text.split(',').map((name) => name.trim().toLowerCase());
  if (names.every((name) => name === '')) return { ok: false, error: 'no kind given' };
  const chosen = new Set<SimulateKind>();
  const unknown: string[] = [];
  for (const name of names) {
    if (name === '') continue;
    const family = (KIND_FAMILIES as Readonly<Record<string, readonly SimulateKind[] | undefined>>)[name];
    if (family !== undefined) for (const kind of family) chosen.add(kind);
    else if ((SIMULATE_KINDS as readonly string[]).includes(name)) chosen.add(name as SimulateKind);
    else unknown.push(name);
  }
  if (unknown.length > 0) {
    return {
      ok: false,
      error: `unknown kind${unknown.length === 1 ? '' : 's'} ${unknown.map((u) => JSON.stringify(u)).join(', ')} (valid: ${[...SIMULATE_KINDS, 'user', 'log', 'all'].join(', ')})`,
    };
  }
  return { ok: true, kinds: SIMULATE_KINDS.filter((kind) => chosen.has(kind)) };
}

// ---------------------------------------------------------------------------------------------
// Random numbers and timestamps

/** The three platform timestamp forms (§0.2). */
export type TimestampForm = 'compact' | 'extended' | 'local';

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * An instant (ms since the epoch) as a platform timestamp on a node `offsetMinutes` east of UTC:
 * compact ISO `20240312T101522.123+0100`, extended ISO `2024-03-12T10:15:22.123+01:00` or local
 * `2024-03-12 10:15:22,123` (the node's wall clock, no offset). Years 1–9999 only.
 */
export function formatPlatformTimestamp(ms: number, offsetMinutes: number, form: TimestampForm): string {
  const wall = new Date(Math.floor(ms) + offsetMinutes * 60_000);
  const date = [pad(wall.getUTCFullYear(), 4), pad(wall.getUTCMonth() + 1, 2), pad(wall.getUTCDate(), 2)];
  const time = [pad(wall.getUTCHours(), 2), pad(wall.getUTCMinutes(), 2), pad(wall.getUTCSeconds(), 2)];
  const millis = pad(wall.getUTCMilliseconds(), 3);
  const abs = Math.abs(offsetMinutes);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const oh = pad(Math.floor(abs / 60), 2);
  const om = pad(abs % 60, 2);
  switch (form) {
    case 'compact':
      return `${date.join('')}T${time.join('')}.${millis}${sign}${oh}${om}`;
    case 'extended':
      return `${date.join('-')}T${time.join(':')}.${millis}${sign}${oh}:${om}`;
    case 'local':
      return `${date.join('-')} ${time.join(':')},${millis}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The simulated platform: nodes, users, apps, browsers

/** A platform node the datagrams come from. */
export interface PoolNode {
  /** `%hostname`. */
  name: string;
  fqdn: string;
  /** UTC offset of the node's clock, minutes east. */
  offset: number;
  /** `%user`: the service account the platform services run as. */
  serviceUser: string;
  engineVersion: string;
}

const NODES: readonly PoolNode[] = [
  {
    name: 'PLAT-N1',
    fqdn: 'plat-n1.lab.local',
    offset: 60,
    serviceUser: 'LAB\\svc_platform',
    engineVersion: '12.1306.0',
  },
  {
    name: 'PLAT-N2',
    fqdn: 'plat-n2.lab.local',
    offset: 60,
    serviceUser: 'LAB\\svc_platform',
    engineVersion: '12.1306.0',
  },
  {
    name: 'plat-nyc-01',
    fqdn: 'plat-nyc-01.corp.example.com',
    offset: -300,
    serviceUser: 'CORP\\svc-analytics',
    engineVersion: '14.187.4',
  },
  {
    name: 'plat-blr-01',
    fqdn: 'plat-blr-01.corp.example.com',
    offset: 330,
    serviceUser: 'CORP\\svc-analytics',
    engineVersion: '14.187.4',
  },
  {
    name: 'plat-lon-01',
    fqdn: 'plat-lon-01.corp.example.com',
    offset: 0,
    serviceUser: 'CORP\\svc-analytics',
    engineVersion: '14.254.6',
  },
  {
    name: 'plat-stj-01',
    fqdn: 'plat-stj-01.corp.example.com',
    offset: -210,
    serviceUser: 'CORP\\svc-analytics',
    engineVersion: '14.254.6',
  },
  {
    name: 'plat-tyo-01',
    fqdn: 'plat-tyo-01.corp.example.com',
    offset: 540,
    serviceUser: 'CORP\\svc-analytics',
    engineVersion: '14.187.4',
  },
];

/** A platform user (`UserDirectory`, `UserId`). */
export interface PoolUser {
  dir: string;
  id: string;
}

/** People using the platform. */
const USERS: readonly PoolUser[] = [
  { dir: 'LAB', id: 'goran' },
  { dir: 'LAB', id: 'anna' },
  { dir: 'LAB', id: 'kalle' },
  { dir: 'CORP', id: 'jsmith' },
  { dir: 'CORP', id: 'm.garcia' },
  { dir: 'CORP', id: 'li.wei' },
  { dir: 'SALES', id: 'erik.berg' },
];

/** The platform's service users (reloads, the repository's own engine sessions). */
const SA_SCHEDULER: PoolUser = { dir: 'INTERNAL', id: 'sa_scheduler' };
const SA_REPOSITORY: PoolUser = { dir: 'INTERNAL', id: 'sa_repository' };

/** An app: its id (a uuid), its name, and the id of its reload task. */
export interface PoolApp {
  id: string;
  name: string;
  taskId: string;
}

const APPS: readonly PoolApp[] = [
  {
    id: 'e7af59a0-c243-480d-9571-08727551a66f',
    name: 'Sales dashboard',
    taskId: 'dec2a02a-1680-44ef-8dc2-e2bfb180af87',
  },
  {
    id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    name: 'Operations monitor',
    taskId: '5b1e0c9d-3f7a-4d2e-8a6b-0c9d8e7f6a5b',
  },
  {
    id: '3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098',
    name: 'HR – headcount',
    taskId: '7c6b5a49-3827-4a16-b5e4-d3c2b1a09f8e',
  },
  {
    id: '8d7c6b5a-4938-4271-8a0b-1c2d3e4f5a6b',
    name: 'Försäljning per region',
    taskId: '1a2b3c4d-5e6f-4a7b-9c8d-7e6f5a4b3c2d',
  },
  {
    id: 'b4a39281-7f6e-4d5c-9b4a-3f2e1d0c9b8a',
    name: 'Finance P&L (monthly)',
    taskId: '9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0',
  },
  { id: 'c0ffee00-1234-4abc-8def-0123456789ab', name: 'License usage', taskId: '2468ace0-1357-4bdf-8ace-02468ace1357' },
];

/** Real browser user agents; most contain `;`, which the parser must keep in the message (§0.4). */
const USER_AGENTS: readonly string[] = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
];

const QIX_METHODS_USER: readonly string[] = [
  'GenericObject::GetLayout',
  'GenericObject::GetHyperCubeData',
  'GenericObject::SelectHyperCubeValues',
  'GenericObject::GetListObjectData',
  'Doc::GetObject',
  'Doc::GetAppLayout',
  'Doc::CreateSessionObject',
  'Field::SelectValues',
  'Global::OpenApp',
];
const QIX_METHODS_INTERNAL: readonly string[] = [
  'Global::OpenApp',
  'Doc::DoReload',
  'Doc::DoSave',
  'Doc::GetAppProperties',
];
const QIX_OBJECT_TYPES: readonly string[] = [
  'barchart',
  'linechart',
  'combochart',
  'table',
  'pivot-table',
  'kpi',
  'filterpane',
  'map',
  'scatterplot',
  'sheet',
  'listbox',
];

const FIELDS: readonly string[] = ['OrderDate', 'Region', 'CustomerID', 'Amount', 'Employee'];
const QVD_FILES: readonly string[] = ['sales_2024', 'customers', 'orders_delta', 'hr/employees'];

// ---------------------------------------------------------------------------------------------
// Malformed datagrams

/**
 * The malformed datagrams the generator makes, and what the parser of the claimed kind's listener
 * returns for them (`ok`: the datagram is bad but tolerated, §0.1/§0.4 — still counted as malformed
 * by the generator):
 * - `too-few-fields`: a real message cut after 1…N−1 fields → `malformed`;
 * - `unknown-prefix`: a real message whose field 0 is no platform prefix (a typo, a missing slash) → `unknown_prefix`;
 * - `random-bytes`: 1–512 random bytes, the first one never `/` → `unknown_prefix`;
 * - `empty`: a zero-length datagram → `unknown_prefix`;
 * - `invalid-utf8`: invalid UTF-8 sequences in a text field (they decode to U+FFFD) → `ok`;
 * - `control-chars`: CR/LF, tabs, NUL, ESC, DEL in a text field (removed by s(n)) → `ok`.
 */
export const MALFORMED_VARIANTS = [
  'too-few-fields',
  'unknown-prefix',
  'random-bytes',
  'empty',
  'invalid-utf8',
  'control-chars',
] as const;
export type MalformedVariant = (typeof MALFORMED_VARIANTS)[number];

/** What the parser of a datagram's listener returns for it. */
export type ExpectedParse = 'ok' | 'unknown_prefix' | 'malformed';

export const MALFORMED_EXPECTED: Readonly<Record<MalformedVariant, ExpectedParse>> = {
  'too-few-fields': 'malformed',
  'unknown-prefix': 'unknown_prefix',
  'random-bytes': 'unknown_prefix',
  empty: 'unknown_prefix',
  'invalid-utf8': 'ok',
  'control-chars': 'ok',
};

/** Field 0 texts that no listener knows. */
const UNKNOWN_PREFIXES: readonly string[] = [
  '/qseow-proxy-sessions/',
  '/qseow-proxy-session',
  'qseow-engine/',
  '/qseow-printing/',
  '/qseow-hub/',
  '/qseow_scheduler/',
  '/qseow-qix-perf-x/',
  '<134>Mar 12 10:15:22 plat-n1 app',
];

/** Invalid UTF-8: a stray byte, an overlong `/`, a truncated 3-byte sequence, an encoded surrogate, a lone continuation byte. */
const INVALID_UTF8: readonly (readonly number[])[] = [
  [0xff],
  [0xc0, 0xaf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0x80],
  [0xfe, 0xfe],
];

const CONTROL_TEXTS: readonly string[] = [
  '\r\n   at Qlik.Sense.Common.Tasks.Run()\r\n   at Qlik.Sense.Common.Tasks.Execute()',
  '\tcolumn\tseparated\t',
  'nul\u0000byte',
  '\u001b[31mred\u001b[0m',
  'delete\u007f',
  '\n',
];

/** Field index where `invalid-utf8` / `control-chars` put their bytes: the message, or for engine performance (no message) the object type. */
const DIRTY_FIELD: Readonly<Record<SimulateKind, number>> = {
  'user-session': 7,
  'user-connection': 7,
  engine: 8,
  proxy: 8,
  repository: 8,
  scheduler: 8,
  'qix-perf': 25,
};

// ---------------------------------------------------------------------------------------------
// The generator

export interface GeneratorOptions {
  /** Seed of the PRNG; an integer, taken modulo 2^32. */
  seed: number;
  /** Kinds to make, each equally likely; default all. */
  kinds?: readonly SimulateKind[];
  /** Fraction 0–1 of malformed datagrams (each variant equally likely); default 0. */
  malformed?: number;
  /** Start of the simulated clock the timestamps come from (ms since the epoch); default DEFAULT_START_MS. */
  startMs?: number;
  /** Mean advance of the simulated clock per datagram, ms (uniform 0 … 2 × stepMs); default 100. */
  stepMs?: number;
  /**
   * The users, apps and nodes the datagrams name; each part not given is the built-in one. The
   * platform simulator passes its own, so the user events it drives name its users and its apps.
   */
  pool?: Partial<DatagramPool>;
}

/** Who and what the datagrams are about. */
export interface DatagramPool {
  users: readonly PoolUser[];
  apps: readonly PoolApp[];
  nodes: readonly PoolNode[];
}

/** The built-in pool: seven nodes in six time zones, seven people, six apps. */
export const DEFAULT_POOL: Readonly<DatagramPool> = { users: USERS, apps: APPS, nodes: NODES };

/** A `;` would split a fixed field; a control character would be removed by s(n) (§0.1, §0.4): either breaks the round trip. */
const FIELD_TEXT = /^[^;\u0000-\u001f\u007f]+$/;
const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The pool with defaults filled in; throws RangeError naming the first entry that cannot be sent as is. */
function resolvePool(pool: Partial<DatagramPool> = {}): DatagramPool {
  const { users = USERS, apps = APPS, nodes = NODES } = pool;
  const text = (what: string, value: string): void => {
    if (!FIELD_TEXT.test(value))
      throw new RangeError(
        `${what} must be non-empty text without ';' or control characters (got ${JSON.stringify(value)})`,
      );
  };
  for (const [name, list] of [
    ['users', users],
    ['apps', apps],
    ['nodes', nodes],
  ] as const) {
    if (list.length === 0) throw new RangeError(`pool.${name} must not be empty`);
  }
  users.forEach((u, i) => {
    text(`pool.users[${i}].dir`, u.dir);
    text(`pool.users[${i}].id`, u.id);
    // A backslash in either half would make `dir\id` ambiguous (§2.2 user_full).
    if (u.dir.includes('\\') || u.id.includes('\\')) throw new RangeError(`pool.users[${i}] must not contain '\\'`);
  });
  apps.forEach((a, i) => {
    if (!LOWER_UUID.test(a.id))
      throw new RangeError(`pool.apps[${i}].id must be a lower-case uuid (got ${JSON.stringify(a.id)})`);
    if (!LOWER_UUID.test(a.taskId))
      throw new RangeError(`pool.apps[${i}].taskId must be a lower-case uuid (got ${JSON.stringify(a.taskId)})`);
    text(`pool.apps[${i}].name`, a.name);
  });
  nodes.forEach((n, i) => {
    for (const key of ['name', 'fqdn', 'serviceUser', 'engineVersion'] as const)
      text(`pool.nodes[${i}].${key}`, n[key]);
    if (!(Number.isInteger(n.offset) && Math.abs(n.offset) <= 14 * 60))
      throw new RangeError(`pool.nodes[${i}].offset must be whole minutes within ±14 h (got ${n.offset})`);
  });
  return { users: [...users], apps: [...apps], nodes: [...nodes] };
}

/** Default start of the simulated clock: 2024-03-12T08:00:00.000Z (the day of the §2.6 examples). */
export const DEFAULT_START_MS = Date.UTC(2024, 2, 12, 8, 0, 0);

/** One generated datagram. */
export interface SimDatagram {
  /** The kind; for a malformed datagram the kind it claims to be (and whose listener it is meant for). */
  kind: SimulateKind;
  /** The bytes to send. */
  data: Buffer;
  /** `null` for a well-formed datagram, else how it is malformed. */
  malformed: MalformedVariant | null;
  /** What the parser of the kind's listener returns for it. */
  expected: ExpectedParse;
  /** The fields of a well-formed datagram as meant (joined with `;` they are `data`); `null` for a malformed one. */
  fields: readonly string[] | null;
}

/** Source of datagrams: what the UDP sender reads from. */
export interface DatagramSource {
  next(): SimDatagram;
}

/** Generator options with every default filled in. */
export type ResolvedGeneratorOptions = Required<Omit<GeneratorOptions, 'pool'>> & { pool: DatagramPool };

export interface DatagramGenerator extends DatagramSource {
  /** The options in effect (defaults filled in). */
  readonly options: Readonly<ResolvedGeneratorOptions>;
}

/** Validated options with defaults; throws RangeError on an invalid value. */
function resolveOptions(options: GeneratorOptions): ResolvedGeneratorOptions {
  const { seed, kinds = SIMULATE_KINDS, malformed = 0, startMs = DEFAULT_START_MS, stepMs = 100 } = options;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer (got ${seed})`);
  if (kinds.length === 0) throw new RangeError('kinds must not be empty');
  for (const kind of kinds)
    if (!(SIMULATE_KINDS as readonly string[]).includes(kind))
      throw new RangeError(`unknown kind ${JSON.stringify(kind)}`);
  if (!(malformed >= 0 && malformed <= 1))
    throw new RangeError(`malformed must be a fraction between 0 and 1 (got ${malformed})`);
  if (!Number.isFinite(startMs) || startMs < Date.UTC(1, 0, 2) || startMs > Date.UTC(9999, 0, 1))
    throw new RangeError(`startMs out of range (got ${startMs})`);
  if (!(Number.isFinite(stepMs) && stepMs >= 0)) throw new RangeError(`stepMs must be a number ≥ 0 (got ${stepMs})`);
  return { seed, kinds: [...kinds], malformed, startMs, stepMs, pool: resolvePool(options.pool) };
}

/**
 * A seeded datagram generator. Per datagram it draws, in this order: malformed or not, the kind
 * (uniform over `kinds`), the clock step, then the content. Same options, same stream.
 */
export function createDatagramGenerator(options: GeneratorOptions): DatagramGenerator {
  return new Generator(resolveOptions(options));
}

interface NodeState {
  node: PoolNode;
  /** `%property{ProcessId}` of the node's engine. */
  engineProcessId: string;
  /** `%property{Server Started}` of the node's engine (extended ISO). */
  engineStarted: string;
}

type Level = 'WARN' | 'ERROR' | 'FATAL';

class Generator extends SeededRandom implements DatagramGenerator {
  readonly options: Readonly<ResolvedGeneratorOptions>;
  private clockMs: number;
  private readonly nodes: readonly NodeState[];
  /** `%rownum` per (kind, node). */
  private readonly rows = new Map<string, number>();

  constructor(options: ResolvedGeneratorOptions) {
    super(options.seed);
    this.options = options;
    this.clockMs = options.startMs;
    this.nodes = options.pool.nodes.map((node) => ({
      node,
      engineProcessId: this.uuid(),
      engineStarted: formatPlatformTimestamp(
        options.startMs - 3_600_000 * (1 + this.int(72)) - this.int(3_600_000),
        node.offset,
        'extended',
      ),
    }));
  }

  next(): SimDatagram {
    const bad = this.options.malformed > 0 && this.rng() < this.options.malformed;
    const kind = this.pick(this.options.kinds);
    this.clockMs += this.rng() * 2 * this.options.stepMs;
    if (bad) return this.malformedDatagram(kind);
    const fields = this.fieldsOf(kind);
    return { kind, data: Buffer.from(fields.join(';'), 'utf8'), malformed: null, expected: 'ok', fields };
  }

  // -- helpers -------------------------------------------------------------------------------

  /** An object id as the engine makes them (`hXbRtP`). */
  private objectId(): string {
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    const length = this.chance(0.8) ? 6 : this.between(7, 12);
    for (let i = 0; i < length; i++) out += chars[this.int(chars.length)] ?? 'x';
    return out;
  }

  /** A decimal with one fraction digit (`412.5`): `float` of §0.2. */
  private decimal(max: number): string {
    return (this.int(max * 10) / 10).toFixed(1);
  }

  private level(): Level {
    const r = this.rng();
    return r < 0.6 ? 'WARN' : r < 0.97 ? 'ERROR' : 'FATAL';
  }

  private row(kind: SimulateKind, node: PoolNode): number {
    const key = `${kind}|${node.name}`;
    const row = (this.rows.get(key) ?? this.between(1, 5000)) + 1;
    this.rows.set(key, row);
    return row;
  }

  /** Fields 0–7 of a log event (§2.2): prefix, row, compact ISO, local time, level, host, logger, service user. */
  private logHead(kind: SimulateKind, state: NodeState, level: Level | 'INFO', logger: string): string[] {
    const { node } = state;
    return [
      `/${KIND_EVENT_TYPE[kind]}/`,
      String(this.row(kind, node)),
      formatPlatformTimestamp(this.clockMs, node.offset, 'compact'),
      formatPlatformTimestamp(this.clockMs, node.offset, 'local'),
      level,
      node.name,
      logger,
      node.serviceUser,
    ];
  }

  private fieldsOf(kind: SimulateKind): string[] {
    switch (kind) {
      case 'user-session':
        return this.userSession();
      case 'user-connection':
        return this.userConnection();
      case 'engine':
        return this.engine();
      case 'proxy':
        return this.proxy();
      case 'repository':
        return this.repository();
      case 'scheduler':
        return this.scheduler();
      case 'qix-perf':
        return this.qixPerf();
    }
  }

  // -- §1 user-activity events ----------------------------------------------------------------

  private userSession(): string[] {
    const node = this.pick(this.options.pool.nodes);
    const user = this.pick(this.options.pool.users);
    const start = this.chance(0.5);
    const context = this.pick(['/hub/', '/hub/', '/hub/', '/qmc/', '/sense/app/']);
    const verb = start ? 'Start' : 'Stop';
    return [
      '/qseow-proxy-session/',
      node.name,
      `${verb} session`,
      user.dir,
      user.id,
      'AppAccess',
      context,
      `${verb} session for user '${user.dir}\\${user.id}'`,
    ];
  }

  private userConnection(): string[] {
    const node = this.pick(this.options.pool.nodes);
    const user = this.pick(this.options.pool.users);
    const app = this.pick(this.options.pool.apps);
    const open = this.chance(0.5);
    const reloadBase = `https%3a%2f%2f${node.fqdn}%2fapp%2f${app.id}`;
    const context = this.pick([
      `/app/${app.id}?reloaduri=${reloadBase}`,
      `/app/${app.id}?reloaduri=${reloadBase}%2fsheet%2f${this.objectId()}%2fstate%2fanalysis`,
      `/app/${app.id}?reloaduri=${reloadBase}&language=en-US`,
      `/app/${app.id}/sheet/${this.objectId()}/state/analysis`,
      `/app/${app.id}`,
    ]);
    const ua = this.pick(USER_AGENTS);
    return [
      '/qseow-proxy-connection/',
      node.name,
      open ? 'Open connection' : 'Close connection',
      user.dir,
      user.id,
      'AppAccess',
      context,
      `Websocket connection ${open ? 'Opened' : 'Closed'} for session '${this.uuid()}'. UserAgent: '${ua}'`,
    ];
  }

  // -- §2 log events ----------------------------------------------------------------------------

  private engine(): string[] {
    const state = this.pick(this.nodes);
    const level = this.level();
    const logger = this.pick([
      'System.Engine.Engine',
      'System.Engine.Engine',
      'Session.Engine.Engine',
      'Performance.Engine.Engine',
    ]);
    const head = this.logHead('engine', state, level, logger);
    const app = this.pick(this.options.pool.apps);
    const r = this.rng();
    const user: PoolUser | null = r < 0.6 ? this.pick(this.options.pool.users) : r < 0.8 ? SA_SCHEDULER : null;
    const who = user === null ? 'an unknown user' : `${user.dir}\\${user.id}`;
    const message = this.pick([
      () => `Document was not found: ${app.id}`,
      () => `Failed to open app ${app.id}: access denied for user ${who}`,
      () => `License: no professional access available for user ${who}; falling back to analyzer access`,
      () => `Access denied: no license available for user ${who}`,
      () =>
        `Engine memory usage (${this.between(20_000, 64_000)} MB) is above the low memory limit (${this.between(16_000, 20_000)} MB)`,
      () =>
        `Reload of app ${app.id} failed; script error on line ${this.between(1, 400)}: Field not found - <${this.pick(FIELDS)}>`,
      () => `Session ${this.uuid()} was closed by the engine: inactivity timeout`,
      () => `QVD file not found: lib://DataFiles/${this.pick(QVD_FILES)}.qvd`,
      () =>
        `Out of memory while calculating object ${this.objectId()}; result truncated; ${this.between(2, 9)} cells skipped`,
      () =>
        `Could not load extension ${this.pick(['sense-export', 'climber-kpi', 'vizlib-table'])}: the file is missing`,
    ])();
    const withUser = user !== null;
    return [
      ...head,
      message,
      withUser && user !== SA_SCHEDULER ? this.uuid() : '',
      user?.dir ?? '',
      user?.id ?? '',
      formatPlatformTimestamp(this.clockMs, state.node.offset, 'extended'),
      state.engineProcessId,
      state.node.engineVersion,
      state.engineStarted,
      level === 'WARN' ? 'Warning' : 'Error',
      withUser ? this.uuid() : '',
      withUser || this.chance(0.3) ? app.id : '',
    ];
  }

  private proxy(): string[] {
    const state = this.pick(this.nodes);
    const level = this.level();
    const user = this.pick(this.options.pool.users);
    const who = `${user.dir}\\${user.id}`;
    const app = this.pick(this.options.pool.apps);
    type Incident = [
      logger: string,
      message: string,
      exception: string,
      command: string,
      result: string,
      context: string,
    ];
    const incident = this.pick<() => Incident>([
      () => [
        'Audit.Proxy.Proxy.Core.RequestListener',
        `Access was denied for User: '${who}'. No license available.`,
        '',
        'Login',
        '403',
        '/hub/',
      ],
      () => ['Audit.Proxy.Proxy.Core.RequestListener', 'Login failed; account locked', '', 'Login', '401', '/hub/'],
      () => [
        'AuditSecurity.Proxy',
        `Authentication failed for user '${who}'; invalid credentials`,
        '',
        'Login',
        '401',
        '/hub/',
      ],
      () => [
        'Security.Proxy.Proxy.Core.Ticket',
        'Ticket request rejected: the ticket has expired',
        '',
        'GetTicket',
        '403',
        `/app/${app.id}`,
      ],
      () => [
        'System.Proxy.Proxy.Core.Engine',
        `Failed to connect to engine on ${state.node.fqdn}:4747`,
        'System.Net.WebSockets.WebSocketException: Unable to connect to the remote server',
        'Connection',
        '502',
        `/app/${app.id}?reloaduri=https%3a%2f%2f${state.node.fqdn}%2fapp%2f${app.id}`,
      ],
      () => [
        'Security.Proxy.Proxy.Core.Certificates',
        `Certificate validation failed for client 10.${this.int(256)}.${this.int(256)}.${this.between(1, 254)}`,
        'System.Security.Authentication.AuthenticationException: The remote certificate is invalid according to the validation procedure.',
        'Connection',
        '495',
        '/hub/',
      ],
      () => [
        'System.Proxy.Proxy.Core.Repository',
        'Request to the repository failed',
        'System.Net.Http.HttpRequestException: Response status code 503; service unavailable',
        'GetApps',
        '503',
        '/hub/',
      ],
      () => [
        'Audit.Proxy.Proxy.SessionEstablishment',
        `Session limit reached for user '${who}'; oldest session ended`,
        '',
        'StartSession',
        '200',
        `/app/${app.id}`,
      ],
    ])();
    const [logger, message, exception, command, result, context] = incident;
    return [
      ...this.logHead('proxy', state, level, logger),
      message,
      exception,
      user.dir,
      user.id,
      command,
      result,
      'AppAccess',
      context,
    ];
  }

  private repository(): string[] {
    const state = this.pick(this.nodes);
    const level = this.level();
    const other = this.pick(this.options.pool.nodes);
    const app = this.pick(this.options.pool.apps);
    const user = this.pick(this.options.pool.users);
    type Incident = [logger: string, message: string, exception: string, user: PoolUser | null];
    const incident = this.pick<() => Incident>([
      () => [
        'System.Repository.Repository.Core.Synchronization',
        `Failed to request service alive response from https://${other.fqdn}:4242/.`,
        'System.Net.WebException: Unable to connect to the remote server',
        null,
      ],
      () => [
        'System.Repository.Repository.Core.Database',
        'Database connection failed',
        'System.Data.DataException: Host=db1;Port=4432 unreachable',
        null,
      ],
      () => ['Service', 'License check failed: the license has expired; contact your administrator', '', null],
      () => [
        'UserManagement.Repository.UserDirectoryConnectors',
        `User directory connector sync failed for ${user.dir}; ${this.between(1, 40)} users skipped`,
        '',
        null,
      ],
      () => [
        'System.Repository.Repository.Core.Synchronization',
        `Could not synchronize app ${app.id} to node ${other.name}`,
        'System.TimeoutException: The operation has timed out.',
        null,
      ],
      () => [
        'System.Repository.Repository.Core.Database',
        `Transaction deadlock detected; retrying (attempt ${this.between(1, 5)} of 5)`,
        '',
        null,
      ],
      () => [
        'System.Repository.Repository.Core.Security',
        `Access denied for user ${user.dir}\\${user.id} to app ${app.id}`,
        'System.UnauthorizedAccessException: Access is denied.',
        user,
      ],
      () => [
        'Service',
        `Could not allocate a license to user ${user.dir}\\${user.id}: no license of type professional left`,
        '',
        user,
      ],
    ])();
    const [logger, message, exception, who] = incident;
    return [
      ...this.logHead('repository', state, level, logger),
      message,
      exception,
      who?.dir ?? '',
      who?.id ?? '',
      who === null ? '' : 'Get',
      who === null ? '' : '403',
      'Not available',
      who === null ? 'Not available' : `/qrs/app/${app.id}`,
    ];
  }

  private scheduler(): string[] {
    const state = this.pick(this.nodes);
    const level = this.level();
    const app = this.pick(this.options.pool.apps);
    const owner = this.chance(0.4) ? SA_SCHEDULER : this.pick(this.options.pool.users);
    const full = `${owner.dir}\\${owner.id}`;
    // The three ways the platform fills UserDirectory, UserId and User (§0.4 user triple).
    const triple = this.pick<[string, string, string]>([
      ['', '', full],
      [owner.dir, owner.id, full],
      [owner.dir, owner.id, ''],
      ['', '', ''],
    ]);
    const taskName = this.pick([
      `Reload of ${app.name}`,
      `Reload ${app.name} (hourly)`,
      'Reload; nightly',
      `Reload of ${app.name}; part ${this.between(1, 3)} of 3`,
    ]);
    type Incident = [message: string, exception: string];
    const [message, exception] = this.pick<() => Incident>([
      () => ['Message from ReloadProvider: Reload failed in Engine. Check engine or script logs.', ''],
      () => ['Task failed', ''],
      () => [`Task finished with state FinishedFail; ${this.between(0, 3)} retries left`, ''],
      () => [`Reload of app ${app.id} aborted; the task timed out after ${this.between(30, 240)} minutes`, ''],
      () => [
        `Scheduler could not reach node ${this.pick(this.options.pool.nodes).name}; task queued`,
        'System.Net.WebException: The remote name could not be resolved',
      ],
      () => ['Task could not start: no license available for the reload', ''],
      () => [
        'Reload task failed',
        'System.AggregateException: One or more errors occurred.; inner: engine reported failure',
      ],
      () => [
        'Database connection failed during task update',
        'System.Data.DataException: Host=db1;Port=4432 unreachable',
      ],
    ])();
    return [
      ...this.logHead(
        'scheduler',
        state,
        level,
        this.pick([
          'System.Scheduler.Scheduler.Slave.Tasks.ReloadTask',
          'System.Scheduler.Scheduler.Master.Task',
          'Service',
        ]),
      ),
      message,
      exception,
      ...triple,
      taskName,
      app.name,
      app.taskId,
      app.id,
      this.uuid(),
    ];
  }

  private qixPerf(): string[] {
    const state = this.pick(this.nodes);
    const head = this.logHead('qix-perf', state, 'INFO', 'QixPerformance.Engine.Engine');
    const app = this.pick(this.options.pool.apps);
    const engineTs = formatPlatformTimestamp(this.clockMs, state.node.offset, 'extended');
    const processTime = this.decimal(this.chance(0.9) ? 500 : 5000);
    const work = (Number(processTime) * (0.8 + 0.2 * this.rng())).toFixed(1);
    const times = [processTime, work, this.decimal(20), this.decimal(5), this.decimal(300)];
    const netRam = String(this.between(1, 400) * 65_536);
    const peakRam = String(Number(netRam) + this.between(0, 800) * 65_536);
    if (this.chance(0.25)) {
      // A session the platform opened itself (reload, repository): no proxy session, no session id.
      const internal = this.chance(0.8) ? SA_SCHEDULER : SA_REPOSITORY;
      return [
        ...head,
        '0',
        internal.dir,
        internal.id,
        engineTs,
        '0',
        app.id,
        String(this.between(0, 20)),
        this.pick(QIX_METHODS_INTERNAL),
        ...times,
        '-1',
        '<Unknown>',
        netRam,
        peakRam,
        '<Unknown>',
      ];
    }
    const user = this.pick(this.options.pool.users);
    return [
      ...head,
      this.uuid(),
      user.dir,
      user.id,
      engineTs,
      this.uuid(),
      app.id,
      String(this.between(1, 9999)),
      this.pick(QIX_METHODS_USER),
      ...times,
      String(this.between(1, 60)),
      this.objectId(),
      netRam,
      peakRam,
      this.pick(QIX_OBJECT_TYPES),
    ];
  }

  // -- malformed --------------------------------------------------------------------------------

  private malformedDatagram(kind: SimulateKind): SimDatagram {
    const variant = this.pick(MALFORMED_VARIANTS);
    const done = (data: Buffer): SimDatagram => ({
      kind,
      data,
      malformed: variant,
      expected: MALFORMED_EXPECTED[variant],
      fields: null,
    });
    switch (variant) {
      case 'too-few-fields': {
        const parts = this.fieldsOf(kind).join(';').split(';');
        const keep = this.between(1, KIND_FIELD_COUNT[kind] - 1);
        return done(Buffer.from(parts.slice(0, keep).join(';'), 'utf8'));
      }
      case 'unknown-prefix': {
        const fields = this.fieldsOf(kind);
        fields[0] = this.pick(UNKNOWN_PREFIXES);
        return done(Buffer.from(fields.join(';'), 'utf8'));
      }
      case 'random-bytes': {
        const bytes = Buffer.alloc(this.between(1, 512));
        for (let i = 0; i < bytes.length; i++) bytes[i] = this.int(256);
        if (bytes[0] === 0x2f) bytes[0] = 0x2e; // never `/`: no prefix can start
        return done(bytes);
      }
      case 'empty':
        return done(Buffer.alloc(0));
      case 'invalid-utf8': {
        const fields = this.fieldsOf(kind);
        const at = DIRTY_FIELD[kind];
        const before = Buffer.from(fields.slice(0, at + 1).join(';'), 'utf8');
        const after = Buffer.from(at + 1 < fields.length ? `;${fields.slice(at + 1).join(';')}` : '', 'utf8');
        return done(Buffer.concat([before, Buffer.from(this.pick(INVALID_UTF8)), after]));
      }
      case 'control-chars': {
        const fields = this.fieldsOf(kind);
        const at = DIRTY_FIELD[kind];
        fields[at] = `${fields[at] ?? ''}${this.pick(CONTROL_TEXTS)}`;
        return done(Buffer.from(fields.join(';'), 'utf8'));
      }
    }
  }
}
