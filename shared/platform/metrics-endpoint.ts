/**
 * The metrics endpoint's data model (platform-formats.md §9): the gauge of each health value, its
 * help text and how it is read from a health sample, and the label names the endpoint puts on them.
 * The endpoint (edge-agent/endpoints/metrics/) exposes them; the config rules keep configured server
 * tags from colliding with these labels. docs/metrics.md lists them.
 */
import type { HealthBody } from './polled.js';

/** A Prometheus label name (names starting `__` are reserved for Prometheus itself). */
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The §4 server tags every §9 metric carries, before the configured `serverTagsDefinition` tags. */
export const SERVER_LABELS = ['host', 'server_name', 'server_description'] as const;

/** One health value as a gauge holding the last polled value. */
export interface HealthGauge {
  name: string;
  help: string;
  value: (body: HealthBody) => number;
}

/** §4 "bytes": the health API reports memory in MB. */
const BYTES_PER_MB = 1_048_576;

export const HEALTH_GAUGES: readonly HealthGauge[] = [
  {
    name: 'svc_apps_calls',
    help: 'Engine: calls to apps since the engine started (health API apps.calls)',
    value: (b) => b.apps.calls,
  },
  {
    name: 'svc_apps_selections',
    help: 'Engine: selections in apps since the engine started (health API apps.selections)',
    value: (b) => b.apps.selections,
  },
  {
    name: 'svc_apps_activedocs_total',
    help: 'Engine: number of active apps (health API apps.active_docs)',
    value: (b) => b.apps.active_docs.length,
  },
  {
    name: 'svc_apps_loadeddocs_total',
    help: 'Engine: number of apps loaded in a session (health API apps.loaded_docs)',
    value: (b) => b.apps.loaded_docs.length,
  },
  {
    name: 'svc_apps_inmemorydocs_total',
    help: 'Engine: number of apps in memory (health API apps.in_memory_docs)',
    value: (b) => b.apps.in_memory_docs.length,
  },
  { name: 'svc_cache_hits', help: 'Engine: cache hits (health API cache.hits)', value: (b) => b.cache.hits },
  {
    name: 'svc_cache_lookups',
    help: 'Engine: cache lookups (health API cache.lookups)',
    value: (b) => b.cache.lookups,
  },
  {
    name: 'svc_cache_added',
    help: 'Engine: objects added to the cache (health API cache.added)',
    value: (b) => b.cache.added,
  },
  {
    name: 'svc_cache_replaced',
    help: 'Engine: objects replaced in the cache (health API cache.replaced)',
    value: (b) => b.cache.replaced,
  },
  {
    name: 'svc_cache_bytes_added',
    help: 'Engine: bytes added to the cache (health API cache.bytes_added)',
    value: (b) => b.cache.bytes_added,
  },
  {
    name: 'svc_cache_saturated',
    help: 'Engine: 1 when the engine reports itself saturated, else 0 (health API saturated)',
    value: (b) => (b.saturated ? 1 : 0),
  },
  { name: 'svc_cpu_total', help: 'Engine: CPU usage in percent (health API cpu.total)', value: (b) => b.cpu.total },
  {
    name: 'svc_mem_committed',
    help: 'Engine: committed memory in bytes (health API mem.committed, reported in MB)',
    value: (b) => b.mem.committed * BYTES_PER_MB,
  },
  {
    name: 'svc_mem_allocated',
    help: 'Engine: allocated memory in bytes (health API mem.allocated, reported in MB)',
    value: (b) => b.mem.allocated * BYTES_PER_MB,
  },
  {
    name: 'svc_mem_free',
    help: 'Engine: free memory in bytes (health API mem.free, reported in MB)',
    value: (b) => b.mem.free * BYTES_PER_MB,
  },
  {
    name: 'svc_session_active',
    help: 'Engine: active sessions (health API session.active)',
    value: (b) => b.session.active,
  },
  {
    name: 'svc_session_total',
    help: 'Engine: sessions in total (health API session.total)',
    value: (b) => b.session.total,
  },
  { name: 'svc_users_active', help: 'Engine: active users (health API users.active)', value: (b) => b.users.active },
  { name: 'svc_users_total', help: 'Engine: users in total (health API users.total)', value: (b) => b.users.total },
];

/** Constant 1; the engine's version and start time are its labels. */
export const ENGINE_METADATA = {
  name: 'svc_engine_metadata',
  help: 'Engine: always 1; labels engine_version and engine_started carry the health API version and started',
  labels: ['engine_version', 'engine_started'],
} as const;

/** Sessions per virtual proxy (§5.1 `session_count`, after user exclusion). */
export const USER_SESSION_TOTAL = {
  name: 'svc_user_session_total',
  help: 'Proxy: user sessions of the virtual proxy (session API, excluded users not counted)',
  labels: ['user_session_virtual_proxy', 'user_session_host'],
} as const;

/** Label names a configured server tag cannot have on the metrics endpoint: a series cannot carry a label twice. */
export const BUILT_IN_LABELS: ReadonlySet<string> = new Set([
  ...SERVER_LABELS,
  ...ENGINE_METADATA.labels,
  ...USER_SESSION_TOTAL.labels,
]);

/** The server labels of every §9 metric for a config's `serverTagsDefinition`, in §4's order. */
export function serverLabelNames(serverTagsDefinition: readonly string[]): string[] {
  return [...new Set([...SERVER_LABELS, ...serverTagsDefinition])];
}
