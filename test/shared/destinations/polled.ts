/**
 * Polled data for the destination tests: the health API body of platform-formats.md §4 as a sample
 * of the server of §6.11 (`node1.lab.local`, `Node1`, `Central node`), a session sample (§5.1), and
 * their queued events. Factories take overrides so each test states only what it varies.
 */
import type { HealthBody, HealthSample, ServerTags, SessionSample } from '../../../shared/platform/polled.js';
import type { HealthQueuedEvent, SessionsQueuedEvent } from '../../../shared/queue/events.js';

export const APP_ID = 'e7af59a0-c243-480d-9571-08727551a66f';
export const SESSION_APP = 'SessionApp_8d1c2f';

/** §4's example body, verbatim. */
export function healthBody(over: Partial<HealthBody> = {}): HealthBody {
  return {
    version: '12.1306.0',
    started: '20240312T081512.000+0100',
    mem: { committed: 4213.6, allocated: 4577.3, free: 27890.4 },
    apps: {
      active_docs: [APP_ID],
      in_memory_docs: [APP_ID, SESSION_APP],
      loaded_docs: [APP_ID],
      calls: 15234,
      selections: 812,
    },
    cpu: { total: 7.5 },
    session: { active: 3, total: 12 },
    users: { active: 2, total: 9 },
    cache: { hits: 1290, lookups: 1720, added: 430, replaced: 12, bytes_added: 52428800 },
    saturated: false,
    ...over,
  };
}

/** §6.11's server tags. */
export const SERVER_TAGS: ServerTags = {
  host: 'node1.lab.local',
  server_name: 'Node1',
  server_description: 'Central node',
};

export function healthSample(over: Partial<HealthSample> = {}): HealthSample {
  return { serverName: 'Node1', tags: { ...SERVER_TAGS }, body: healthBody(), uptime: '0 days, 1h 00m 18s', ...over };
}

/** Doc names as the edge derives them when the app list is loaded (§4). */
export const DOC_NAMES: NonNullable<HealthSample['docNames']> = {
  active: { names: ['Sales dashboard'], sessionApps: [] },
  loaded: { names: ['Sales dashboard'], sessionApps: [] },
  inMemory: { names: ['Sales dashboard'], sessionApps: [SESSION_APP] },
};

/** The first point time of §6.11's health example (2024-03-12T08:45:30Z). */
export const HEALTH_TIME_NS = '1710233130000000000';

let seq = 0;

export function healthQueued(
  sample: HealthSample = healthSample(),
  timeNs = HEALTH_TIME_NS,
  id = `health-${++seq}`,
): HealthQueuedEvent {
  return { kind: 'health', id, receivedAt: '2024-03-12T08:45:30.000Z', timeNs, sample };
}

export const SESSION_TAGS: ServerTags = {
  ...SERVER_TAGS,
  user_session_virtual_proxy: '/hdr',
  user_session_host: 'node1.lab.local:4243',
};

/** Two sessions of two users after exclusion (§5.1), with a field Svc does not use kept as it came. */
export function sessionSample(over: Partial<SessionSample> = {}): SessionSample {
  return {
    serverName: 'Node1',
    tags: { ...SESSION_TAGS },
    virtualProxy: '/hdr',
    sessions: [
      { UserDirectory: 'LAB', UserId: 'goran', Attributes: [], SessionId: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11' },
      {
        UserDirectory: 'LAB',
        UserId: 'anna',
        Attributes: [{ Group: 'Sales' }],
        SessionId: '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f',
      },
    ],
    userIdList: 'LAB\\goran,LAB\\anna',
    ...over,
  };
}

export const SESSIONS_TIME_NS = '1710233131000000010';

export function sessionsQueued(
  sample: SessionSample = sessionSample(),
  timeNs = SESSIONS_TIME_NS,
  id = `sessions-${++seq}`,
): SessionsQueuedEvent {
  return { kind: 'user-sessions', id, receivedAt: '2024-03-12T08:45:31.000Z', timeNs, sample };
}
