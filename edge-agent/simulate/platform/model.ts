/**
 * The simulated platform behind `svc simulate platform`: users, apps and servers drawn from a seed,
 * and per server a state that moves one step at a time — users log in and out through the virtual
 * proxies, open and close apps, work or idle; the engine's counters grow. The health body (§4), the
 * session lists (§5.1) and the app list (§5.2) are views of that one state, so they agree with each
 * other at every step.
 *
 * Pure and deterministic: a server's state after step n depends only on the seed, the options and n
 * (each server draws from a stream of its own), whatever was asked of other servers or when.
 */
import type { HealthBody, ProxySession } from '../../../shared/platform/polled.js';
import { type DatagramPool, formatPlatformTimestamp, type PoolApp, type PoolNode, type PoolUser } from '../messages.js';
import { deriveSeed, SeededRandom } from '../random.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Steps every server runs before its first answer, so a fresh simulator already has users. */
export const WARMUP_STEPS = 60;

/** Stream numbers of deriveSeed: the pool, then one per server. */
const POOL_STREAM = 0;
const serverStream = (index: number): number => 1 + index;

export interface PlatformModelOptions {
  seed: number;
  /** Simulated servers (engine + proxy each). */
  servers: number;
  /** People in the user directories. */
  users: number;
  /** Apps in the repository. */
  apps: number;
  /** Virtual proxy prefixes as configured (`/`, `/hdr`). */
  virtualProxies: readonly string[];
  /** The simulator's start (ms since the epoch): the servers' `started` lie before it. */
  startMs: number;
}

/** An app of the repository, with what the app list shows and what it costs in memory. */
export interface SimApp extends PoolApp {
  description: string;
  /** The stream it is published to; `null` = unpublished (in its owner's work area). */
  stream: { id: string; name: string } | null;
  owner: PoolUser & { uuid: string };
  createdMs: number;
  modifiedMs: number;
  lastReloadMs: number;
  /** Size of the .qvf file, bytes. */
  fileSize: number;
  /** Memory the engine needs to hold it, MB. */
  sizeMb: number;
}

export interface SimServer {
  /** 0-based position in the list. */
  index: number;
  /** `serverName` in the printed config, and `%hostname` of its user events (`node1`, `node02`, …). */
  name: string;
  description: string;
  /** Engine version (`version`); the same on every node, as in a real cluster. */
  version: string;
  /** UTC offset of the node's clock, minutes east. */
  offset: number;
  ramMb: number;
  startedMs: number;
  /** `started` of the health body: compact ISO with the node's offset. */
  started: string;
}

/** One proxy session and what its user does in the engine. */
interface Session {
  id: string;
  user: PoolUser;
  /** The virtual proxy as configured. */
  vp: string;
  attributes: Record<string, string>[];
  /** The app open in this session (an app id or a `SessionApp_…` id), or none (the hub). */
  app: string | null;
  /** Working right now (selections, calculations) rather than idle. */
  active: boolean;
}

/** The health body with a field Svc ignores, as recent engines send it (§4: "others are ignored"). */
export type SimHealthBody = HealthBody & { externalEngines: { grpc: { active: string[]; inactive: string[] } } };

/** One app object of the repository's app list (§5.2): the fields the QRS sends for an app; Svc keeps id, name, description. */
export interface QrsApp {
  id: string;
  createdDate: string;
  modifiedDate: string;
  modifiedByUserName: string;
  customProperties: never[];
  owner: { id: string; userId: string; userDirectory: string; name: string; privileges: null };
  name: string;
  appId: string;
  sourceAppId: string;
  targetAppId: string;
  publishTime: string;
  published: boolean;
  tags: never[];
  description: string;
  stream: { id: string; name: string; privileges: null } | null;
  fileSize: number;
  lastReloadTime: string;
  thumbnail: string;
  savedInProductVersion: string;
  migrationHash: string;
  dynamicColor: string;
  availabilityStatus: number;
  privileges: null;
  schemaPath: 'App';
}

const FIRST_NAMES = [
  'anna',
  'goran',
  'kalle',
  'maria',
  'li',
  'wei',
  'priya',
  'arjun',
  'sofia',
  'lukas',
  'emma',
  'noah',
  'olga',
  'ivan',
  'fatima',
  'omar',
  'yuki',
  'haruto',
  'chloé',
  'zoë',
  'björn',
  'åsa',
  'jens',
  'mette',
  'carlos',
  'lucía',
  'thomas',
  'sarah',
  'david',
  'aisha',
];
const LAST_NAMES = [
  'berg',
  'nilsson',
  'garcia',
  'smith',
  'chen',
  'kumar',
  'tanaka',
  'müller',
  'dubois',
  'rossi',
  'novak',
  'ali',
  'jensen',
  'silva',
  'kowalski',
  'andersson',
];
/** User directories, the first ones more common. */
const DIRECTORIES = ['LAB', 'LAB', 'CORP', 'CORP', 'CORP', 'SALES'];
const APP_NAMES = [
  'Sales dashboard',
  'Operations monitor',
  'HR – headcount',
  'Försäljning per region',
  'Finance P&L (monthly)',
  'License usage',
  'Customer churn',
  'Inventory turnover',
  'Marketing funnel',
  'Supply chain overview',
  'Helpdesk tickets',
  'Budget vs actual',
  'Product margins',
  'Web analytics',
  'Procurement spend',
  'Quality KPIs',
  'Fleet tracking',
  'Energy consumption',
  'Project portfolio',
  'Customer 360',
  '売上分析 (Japan)',
  'Risk register',
  'Payroll audit',
  'Executive summary',
];
const DESCRIPTIONS = [
  'Reloaded nightly from the data warehouse.',
  'Self-service analysis for the regional teams.',
  'KPIs for the weekly management meeting; owner: BI team.',
  'Hourly reload from the ERP system. Contact the helpdesk for access.',
  '',
  '',
];
const STREAMS = ['Everyone', 'Finance', 'Sales', 'Operations'];
const VERSIONS = ['12.1306.0', '14.187.4', '14.254.6'];
/** Node clocks: the first node is the central one, the others anywhere. */
const OFFSETS = [60, 60, 0, -300, 330, 540, -210];
const RAM_MB = [32_768, 65_536, 131_072];
const ATTRIBUTE_GROUPS = ['Sales', 'Finance', 'IT', 'Operations'];

const round1 = (n: number): number => Math.round(n * 10) / 10;
const userKey = (u: PoolUser): string => `${u.dir}\\${u.id}`;

/** Checks the options; throws RangeError naming the first bad one. */
function checkOptions(o: PlatformModelOptions): void {
  const int = (name: string, value: number, min: number, max: number): void => {
    if (!(Number.isSafeInteger(value) && value >= min && value <= max))
      throw new RangeError(`${name} must be an integer ${min}–${max} (got ${value})`);
  };
  int('seed', o.seed, 0, 4_294_967_295);
  int('servers', o.servers, 1, 100_000);
  int('users', o.users, 1, 100_000);
  int('apps', o.apps, 1, 100_000);
  if (o.virtualProxies.length === 0) throw new RangeError('virtualProxies must not be empty');
  if (!Number.isFinite(o.startMs) || o.startMs < 31 * DAY_MS)
    throw new RangeError(`startMs out of range (got ${o.startMs})`);
}

/** The users, apps and servers of one seed, and the state of each server. */
export class PlatformModel {
  readonly users: readonly PoolUser[];
  readonly apps: readonly SimApp[];
  readonly servers: readonly SimServer[];
  readonly options: Readonly<PlatformModelOptions>;
  /** Created on first use: a bench with hundreds of servers pays only for those it polls. */
  private readonly states: (ServerState | undefined)[];

  constructor(options: PlatformModelOptions) {
    checkOptions(options);
    this.options = { ...options, virtualProxies: [...options.virtualProxies] };
    const random = new SeededRandom(deriveSeed(options.seed, POOL_STREAM));
    this.users = makeUsers(random, options.users);
    this.apps = makeApps(random, options.apps, this.users, options.startMs);
    const version = random.pick(VERSIONS);
    const width = String(options.servers).length;
    this.servers = Array.from({ length: options.servers }, (_, index) => {
      const offset = index === 0 ? (OFFSETS[0] ?? 0) : random.pick(OFFSETS);
      // Up for an hour to a month, started on a whole second plus the engine's own milliseconds.
      const startedMs = options.startMs - random.between(1, 30 * 24) * HOUR_MS + random.between(0, HOUR_MS - 1);
      return {
        index,
        name: `node${String(index + 1).padStart(width, '0')}`,
        description: `Simulated node ${index + 1}${index === 0 ? ' (central)' : ''}`,
        version,
        offset,
        ramMb: random.pick(RAM_MB),
        startedMs,
        started: formatPlatformTimestamp(startedMs, offset, 'compact'),
      };
    });
    this.states = new Array<ServerState | undefined>(options.servers).fill(undefined);
  }

  /** Server `index` after step `step` (a step already passed is not undone: the state never goes back). */
  at(index: number, step: number): ServerState {
    const server = this.servers[index];
    if (server === undefined) throw new RangeError(`no server ${index}`);
    let state = this.states[index];
    if (state === undefined) {
      state = new ServerState(this, server);
      this.states[index] = state;
    }
    state.advanceTo(step);
    return state;
  }

  /** §5.2: the repository's app list. */
  appList(): QrsApp[] {
    return this.apps.map((app) => qrsApp(app, this.servers[0]?.version ?? ''));
  }

  /** The users, apps and nodes for the UDP datagram generator (messages.ts), so user events name this platform. */
  datagramPool(): DatagramPool {
    const nodes: PoolNode[] = this.servers.map((s) => ({
      name: s.name,
      fqdn: `${s.name}.sim.local`,
      offset: s.offset,
      serviceUser: 'SIM\\svc_platform',
      engineVersion: s.version,
    }));
    return { users: this.users, apps: this.apps.map(({ id, name, taskId }) => ({ id, name, taskId })), nodes };
  }
}

function makeUsers(random: SeededRandom, count: number): PoolUser[] {
  const seen = new Set<string>();
  const users: PoolUser[] = [];
  while (users.length < count) {
    const dir = random.pick(DIRECTORIES);
    let id = `${random.pick(FIRST_NAMES)}.${random.pick(LAST_NAMES)}`;
    // More people than name pairs: number the namesakes, as directories do.
    if (seen.has(`${dir}\\${id}`)) id = `${id}${users.length + 1}`;
    seen.add(`${dir}\\${id}`);
    users.push({ dir, id });
  }
  return users;
}

function makeApps(random: SeededRandom, count: number, users: readonly PoolUser[], startMs: number): SimApp[] {
  const streams = STREAMS.map((name) => ({ id: random.uuid(), name }));
  return Array.from({ length: count }, (_, i) => {
    const base = APP_NAMES[i % APP_NAMES.length] ?? 'App';
    const round = Math.floor(i / APP_NAMES.length);
    const owner = random.pick(users);
    const createdMs = startMs - random.between(30, 900) * DAY_MS - random.int(DAY_MS);
    const modifiedMs = createdMs + random.int(Math.max(1, startMs - createdMs - DAY_MS));
    const published = random.chance(0.8);
    return {
      id: random.uuid(),
      name: round === 0 ? base : `${base} ${round + 1}`,
      taskId: random.uuid(),
      description: random.pick(DESCRIPTIONS),
      stream: published ? random.pick(streams) : null,
      owner: { ...owner, uuid: random.uuid() },
      createdMs,
      modifiedMs,
      lastReloadMs: startMs - random.int(DAY_MS),
      fileSize: random.between(200, 900_000) * 1024,
      sizeMb: random.between(20, 800),
    };
  });
}

const NO_ID = '00000000-0000-0000-0000-000000000000';

function qrsApp(app: SimApp, version: string): QrsApp {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    id: app.id,
    createdDate: iso(app.createdMs),
    modifiedDate: iso(app.modifiedMs),
    modifiedByUserName: 'INTERNAL\\sa_repository',
    customProperties: [],
    owner: {
      id: app.owner.uuid,
      userId: app.owner.id,
      userDirectory: app.owner.dir,
      name: app.owner.id,
      privileges: null,
    },
    name: app.name,
    appId: '',
    sourceAppId: NO_ID,
    targetAppId: NO_ID,
    publishTime: app.stream === null ? '1753-01-01T00:00:00.000Z' : iso(app.modifiedMs),
    published: app.stream !== null,
    tags: [],
    description: app.description,
    stream: app.stream === null ? null : { ...app.stream, privileges: null },
    fileSize: app.fileSize,
    lastReloadTime: iso(app.lastReloadMs),
    thumbnail: '',
    savedInProductVersion: version,
    migrationHash: 'c1ca5a8d1f9f3fb5d3bd9bbd5c9b8d2e0a3f5c62',
    dynamicColor: '',
    availabilityStatus: 0,
    privileges: null,
    schemaPath: 'App',
  };
}

/** The moving state of one server. */
export class ServerState extends SeededRandom {
  /** Steps taken (the warm-up not counted). */
  step = 0;
  private readonly model: PlatformModel;
  readonly server: SimServer;
  private sessions: Session[] = [];
  /** Apps no session has open that the engine still holds in memory, with the step they are dropped after. */
  private readonly cached = new Map<string, number>();
  private readonly capacity: number;
  private readonly period: number;
  private readonly phase: number;
  private readonly baseMb: number;
  private readonly otherMb: number;
  private readonly allocFactor: number;
  private calls: number;
  private selections: number;
  private readonly cache: { hits: number; lookups: number; added: number; replaced: number; bytes_added: number };
  private cpu = 0;
  /** Steps run including the warm-up: the time base of the load wave and of the cache expiry. */
  private tick = 0;

  constructor(model: PlatformModel, server: SimServer) {
    super(deriveSeed(model.options.seed, serverStream(server.index)));
    this.model = model;
    this.server = server;
    const { users, virtualProxies, startMs } = model.options;
    this.capacity = Math.max(1, Math.round(users * virtualProxies.length * (0.2 + 0.2 * this.fraction())));
    this.period = this.between(300, 900);
    this.phase = this.fraction() * 2 * Math.PI;
    this.baseMb = this.between(300, 700);
    this.otherMb = Math.round(server.ramMb * (0.1 + 0.1 * this.fraction()));
    this.allocFactor = 1.05 + 0.15 * this.fraction();
    // Counters as an engine up since `started` would have them.
    const hours = Math.max(1, (startMs - server.startedMs) / HOUR_MS);
    this.calls = Math.floor(hours * this.between(2_000, 20_000));
    this.selections = Math.floor(this.calls * (0.05 + 0.1 * this.fraction()));
    const lookups = Math.floor(this.calls * 0.6);
    const hits = Math.floor(lookups * (0.6 + 0.3 * this.fraction()));
    const added = lookups - hits;
    this.cache = {
      hits,
      lookups,
      added,
      replaced: Math.floor(added * 0.1),
      bytes_added: added * this.between(4_096, 131_072),
    };
    for (let i = 0; i < WARMUP_STEPS; i++) this.move();
  }

  /** Runs steps until `step` (never backwards). */
  advanceTo(step: number): void {
    while (this.step < step) {
      this.step++;
      this.move();
    }
  }

  /** One step: logouts, logins, work, the engine's counters, CPU. */
  private move(): void {
    this.tick++;
    const { users, apps, options } = this.model;
    // The load follows a slow wave between a tenth and all of the server's capacity (a working day in minutes).
    const wave = 0.55 + 0.45 * Math.sin((2 * Math.PI * this.tick) / this.period + this.phase);
    const target = Math.round(this.capacity * wave);

    const leaveChance = this.sessions.length > target ? 0.08 : 0.02;
    this.sessions = this.sessions.filter((session) => {
      const leaves = this.chance(leaveChance);
      if (leaves) this.close(session);
      return !leaves;
    });
    for (let i = 0; i < 3 && this.sessions.length < target; i++) {
      if (!this.chance(0.6)) continue;
      const user = this.pick(users);
      const vp = this.pick(options.virtualProxies);
      // One proxy session per user and virtual proxy; try someone else next time.
      if (this.sessions.some((s) => s.vp === vp && s.user === user)) continue;
      this.sessions.push({
        id: this.uuid(),
        user,
        vp,
        attributes: vp === '/' || this.chance(0.5) ? [] : [{ Group: this.pick(ATTRIBUTE_GROUPS) }],
        app: this.chance(0.7) ? this.pick(apps).id : null,
        active: false,
      });
    }
    for (const session of this.sessions) {
      session.active = this.chance(0.35);
      if (!this.chance(0.08)) continue;
      this.close(session);
      const r = this.fraction();
      // Back to the hub, into a session app (an app made on the fly by a mashup), or into another app.
      session.app = r < 0.15 ? null : r < 0.25 ? `SessionApp_${this.hex(8)}` : this.pick(apps).id;
    }
    const open = new Set(this.sessions.map((s) => s.app));
    for (const [id, until] of this.cached) if (until <= this.tick || open.has(id)) this.cached.delete(id);

    const working = this.sessions.filter((s) => s.active).length;
    const calls = working * this.between(3, 40) + this.between(0, 4);
    this.calls += calls;
    this.selections += Math.floor(calls * 0.2 * this.fraction());
    const lookups = Math.floor(calls * 0.6) + this.between(0, 2);
    const hits = Math.floor(lookups * (0.6 + 0.35 * this.fraction()));
    const misses = lookups - hits;
    this.cache.lookups += lookups;
    this.cache.hits += hits;
    this.cache.added += misses;
    this.cache.replaced += Math.floor(misses * 0.2 * this.fraction());
    this.cache.bytes_added += misses * this.between(4_096, 262_144);
    this.cpu = round1(Math.min(100, 0.5 + 2 * this.fraction() + working * (1 + 4 * this.fraction())));
  }

  /** The session leaves its app: an app no one else has open stays in memory a while (a session app is gone at once). */
  private close(session: Session): void {
    const app = session.app;
    session.app = null;
    if (app === null || app.startsWith('SessionApp_')) return;
    if (this.sessions.some((s) => s !== session && s.app === app)) return;
    this.cached.set(app, this.tick + this.between(60, 600));
  }

  /** §4: the health body now. */
  health(): SimHealthBody {
    const unique = (ids: (string | null)[]): string[] => [...new Set(ids.filter((id): id is string => id !== null))];
    const loaded = unique(this.sessions.map((s) => s.app));
    const active = unique(this.sessions.filter((s) => s.active).map((s) => s.app));
    const inMemory = unique([...loaded, ...this.cached.keys()]);
    const sizeOf = new Map(this.model.apps.map((a) => [a.id, a.sizeMb]));
    const docsMb = inMemory.reduce((sum, id) => sum + (sizeOf.get(id) ?? 15), 0);
    const committed = round1(this.baseMb + docsMb + 3 * this.sessions.length + this.cpu / 10);
    const allocated = round1(committed * this.allocFactor);
    const free = round1(Math.max(256, this.server.ramMb - this.otherMb - allocated));
    const userKeys = unique(this.sessions.map((s) => userKey(s.user)));
    const activeUsers = unique(this.sessions.filter((s) => s.active).map((s) => userKey(s.user)));
    return {
      version: this.server.version,
      started: this.server.started,
      mem: { committed, allocated, free },
      apps: {
        active_docs: active,
        in_memory_docs: inMemory,
        loaded_docs: loaded,
        calls: this.calls,
        selections: this.selections,
      },
      cpu: { total: this.cpu },
      session: { active: this.sessions.filter((s) => s.active).length, total: this.sessions.length },
      users: { active: activeUsers.length, total: userKeys.length },
      cache: { ...this.cache },
      saturated: this.cpu >= 90 || free < this.server.ramMb * 0.05,
      externalEngines: { grpc: { active: [], inactive: [] } },
    };
  }

  /** §5.1: the proxy's sessions of one virtual proxy (as configured), in login order. */
  sessionList(vp: string): ProxySession[] {
    return this.sessions
      .filter((s) => s.vp === vp)
      .map((s) => ({
        UserDirectory: s.user.dir,
        UserId: s.user.id,
        Attributes: s.attributes.map((a) => ({ ...a })),
        SessionId: s.id,
      }));
  }
}
