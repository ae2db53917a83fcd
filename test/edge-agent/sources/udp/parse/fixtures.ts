/**
 * The example messages of platform-formats.md §1.6 and §2.6, verbatim (String.raw keeps every `\`).
 */

/** §1.6 user-activity events. */
export const USER_SESSION_START = String.raw`/qseow-proxy-session/;PLAT-N1;Start session;LAB;goran;AppAccess;/hub/;Start session for user 'LAB\goran'`;
export const USER_SESSION_STOP = String.raw`/qseow-proxy-session/;PLAT-N1;Stop session;LAB;goran;AppAccess;/hub/;Stop session for user 'LAB\goran'`;
export const USER_CONNECTION_OPEN = String.raw`/qseow-proxy-connection/;PLAT-N1;Open connection;LAB;goran;AppAccess;/app/e7af59a0-c243-480d-9571-08727551a66f?reloaduri=https%3a%2f%2fplat.lab.local%2fapp%2fe7af59a0-c243-480d-9571-08727551a66f;Websocket connection Opened for session '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11'. UserAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'`;
export const USER_CONNECTION_CLOSE = String.raw`/qseow-proxy-connection/;PLAT-N2;Close connection;LAB;anna;AppAccess;/app/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d;Websocket connection Closed for session '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f'. UserAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15'`;

export const USER_EXAMPLES = [
  USER_SESSION_START,
  USER_SESSION_STOP,
  USER_CONNECTION_OPEN,
  USER_CONNECTION_CLOSE,
] as const;

/** §2.6 log events. */
export const LOG_ENGINE = String.raw`/qseow-engine/;1542;20240312T101522.123+0100;2024-03-12 10:15:22,123;WARN;PLAT-N1;System.Engine.Engine;LAB\svc_platform;Document was not found: e7af59a0-c243-480d-9571-08727551a66f;4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11;LAB;goran;2024-03-12T10:15:22.123+01:00;5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f;12.1306.0;2024-03-12T08:15:12.000+01:00;Warning;9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d;e7af59a0-c243-480d-9571-08727551a66f`;
export const LOG_PROXY = String.raw`/qseow-proxy/;312;20240312T094501.876+0100;2024-03-12 09:45:01,876;WARN;PLAT-N1;Audit.Proxy.Proxy.Core.RequestListener;LAB\svc_platform;Access was denied for User: 'LAB\kalle'. No license available.;;LAB;kalle;Login;403;AppAccess;/hub/`;
export const LOG_REPOSITORY = String.raw`/qseow-repository/;55;20240312T110012.004+0100;2024-03-12 11:00:12,004;ERROR;PLAT-N1;System.Repository.Repository.Core.Synchronization;LAB\svc_platform;Failed to request service alive response from https://plat-n2.lab.local:4242/.;System.Net.WebException: Unable to connect to the remote server;;;;;Not available;Not available`;
export const LOG_SCHEDULER = String.raw`/qseow-scheduler/;87;20240312T021503.447+0100;2024-03-12 02:15:03,447;ERROR;PLAT-N1;System.Scheduler.Scheduler.Slave.Tasks.ReloadTask;LAB\svc_platform;Message from ReloadProvider: Reload failed in Engine. Check engine or script logs.;;;;LAB\goran;Reload of Sales dashboard;Sales dashboard;dec2a02a-1680-44ef-8dc2-e2bfb180af87;e7af59a0-c243-480d-9571-08727551a66f;4831c6a5-34f6-45bb-9d40-73a6e6992670`;
export const LOG_QIX_PERF_USER = String.raw`/qseow-qix-perf/;20411;20240312T101530.551+0100;2024-03-12 10:15:30,551;INFO;PLAT-N1;QixPerformance.Engine.Engine;LAB\svc_platform;4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11;LAB;goran;2024-03-12T10:15:30.551+01:00;9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d;e7af59a0-c243-480d-9571-08727551a66f;117;GenericObject::GetLayout;412.5;398.2;0.4;1.1;210.7;7;hXbRtP;5242880;15728640;barchart`;
export const LOG_QIX_PERF_NON_USER = String.raw`/qseow-qix-perf/;20412;20240312T021501.002+0100;2024-03-12 02:15:01,002;INFO;PLAT-N1;QixPerformance.Engine.Engine;LAB\svc_platform;0;INTERNAL;sa_scheduler;2024-03-12T02:15:01.002+01:00;0;e7af59a0-c243-480d-9571-08727551a66f;3;Global::OpenApp;2380.3;2301.9;12.0;0.0;0.0;-1;<Unknown>;104857600;209715200;<Unknown>`;

/** §2.6 surplus `;` cases. */
export const LOG_PROXY_SURPLUS = String.raw`/qseow-proxy/;313;20240312T094502.001-0500;2024-03-12 09:45:02,001;WARN;PLAT-N1;Audit.Proxy.Proxy.Core.RequestListener;LAB\svc_platform;Login failed; account locked;;LAB;kalle;Login;401;AppAccess;/hub/`;
export const LOG_REPOSITORY_SURPLUS = String.raw`/qseow-repository/;56;20240312T110013.000+0100;2024-03-12 11:00:13,000;ERROR;PLAT-N1;System.Repository.Repository.Core.Database;LAB\svc_platform;Database connection failed;System.Data.DataException: Host=db1;Port=4432 unreachable;;;;;Not available;Not available`;
export const LOG_SCHEDULER_SURPLUS = String.raw`/qseow-scheduler/;88;20240312T021504.100+0100;2024-03-12 02:15:04,100;ERROR;PLAT-N1;System.Scheduler.Scheduler.Slave.Tasks.ReloadTask;LAB\svc_platform;Task failed;;;;LAB\goran;Reload; nightly;Sales dashboard;dec2a02a-1680-44ef-8dc2-e2bfb180af87;e7af59a0-c243-480d-9571-08727551a66f;4831c6a5-34f6-45bb-9d40-73a6e6992670`;

export const LOG_EXAMPLES = [
  LOG_ENGINE,
  LOG_PROXY,
  LOG_REPOSITORY,
  LOG_SCHEDULER,
  LOG_QIX_PERF_USER,
  LOG_QIX_PERF_NON_USER,
  LOG_PROXY_SURPLUS,
  LOG_REPOSITORY_SURPLUS,
  LOG_SCHEDULER_SURPLUS,
] as const;

/** Replaces field `idx` (0-based, split on every `;`) of a datagram without surplus. */
export function withField(datagram: string, idx: number, value: string): string {
  return withFields(datagram, { [idx]: value });
}

/** Replaces several fields at once (indices of the datagram without surplus, so values may hold `;`). */
export function withFields(datagram: string, values: Readonly<Record<number, string>>): string {
  const parts = datagram.split(';');
  for (const [idx, value] of Object.entries(values)) parts[Number(idx)] = value;
  return parts.join(';');
}

/** Receive time used by the tests: 2024-03-12T12:00:00.000Z. */
export const RECEIVED_AT = Date.parse('2024-03-12T12:00:00.000Z');
