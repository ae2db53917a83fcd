/**
 * What the edge's pollers hand on (platform-formats.md §4, §5): one TypeBox schema per shape, the
 * single source of the TypeScript types, of the check of a platform server's response (the health
 * body is validated by its schema, never read by property access), of the queue codec's validation
 * and of the destinations' input.
 *
 * The edge derives everything that needs its own state (server tags, app names from its app list,
 * uptime at the poll's moment, counts after user exclusion) once, into a sample, so every output
 * (tsdb §6.1/§6.2, MQTT §7.1/§7.2, monsaas §8.2, the metrics endpoint §9) maps the same values.
 */
import { type Static, Type } from '@sinclair/typebox';

const Int = Type.Integer();
const Num = Type.Number();
const Ids = Type.Array(Type.String());

/** §4: the fields of the health API's body that Svc uses (others are ignored). */
export const HealthBodySchema = Type.Object({
  version: Type.String(),
  started: Type.String(),
  mem: Type.Object({ committed: Num, allocated: Num, free: Num }),
  apps: Type.Object({ active_docs: Ids, in_memory_docs: Ids, loaded_docs: Ids, calls: Int, selections: Int }),
  cpu: Type.Object({ total: Num }),
  session: Type.Object({ active: Int, total: Int }),
  users: Type.Object({ active: Int, total: Int }),
  cache: Type.Object({ hits: Int, lookups: Int, added: Int, replaced: Int, bytes_added: Int }),
  saturated: Type.Boolean(),
});
export type HealthBody = Static<typeof HealthBodySchema>;

/** §4 server tags: `{host, server_name, server_description, …serverTags}`, in that order. */
export const ServerTagsSchema = Type.Record(Type.String(), Type.String());
export type ServerTags = Static<typeof ServerTagsSchema>;

/** §4 "doc names" of one doc list: app names (from the app list; the id when unknown) and session-app ids, both sorted. */
export const DocNamesSchema = Type.Object({ names: Ids, sessionApps: Ids }, { additionalProperties: false });
export type DocNames = Static<typeof DocNamesSchema>;

/** One successful health poll of one server, with §4's derived values. */
export const HealthSampleSchema = Type.Object(
  {
    /** `servers[].serverName`: error tracking and logs. */
    serverName: Type.String({ minLength: 1 }),
    tags: ServerTagsSchema,
    body: HealthBodySchema,
    /** §4 `uptime` at the response's arrival: `<d> days, <h>h <mm>m <ss>s`, or `''`. */
    uptime: Type.String(),
    /** §4 doc names; present only when app names are extracted (the app list is loaded). */
    docNames: Type.Optional(
      Type.Object(
        { active: DocNamesSchema, loaded: DocNamesSchema, inMemory: DocNamesSchema },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type HealthSample = Static<typeof HealthSampleSchema>;

/** §5.1: one session of the session API, after user exclusion (the fields Svc keeps). */
export const ProxySessionSchema = Type.Object(
  {
    UserDirectory: Type.String(),
    UserId: Type.String(),
    SessionId: Type.String(),
    Attributes: Type.Optional(Type.Array(Type.Unknown())),
  },
  { additionalProperties: true },
);
export type ProxySession = Static<typeof ProxySessionSchema>;

/** One successful session poll of one server and virtual proxy, after user exclusion (§5.1). */
export const SessionSampleSchema = Type.Object(
  {
    serverName: Type.String({ minLength: 1 }),
    /** Session tags: server tags + `user_session_virtual_proxy` + `user_session_host`. */
    tags: ServerTagsSchema,
    /** The virtual proxy as configured (`/`, `/hdr`). */
    virtualProxy: Type.String(),
    sessions: Type.Array(ProxySessionSchema),
    /** `session_user_id_list`: distinct `DIR\id`, first-seen order, joined by `,`. */
    userIdList: Type.String(),
  },
  { additionalProperties: false },
);
export type SessionSample = Static<typeof SessionSampleSchema>;
