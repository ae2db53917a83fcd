/** The servers endpoints of the read API: the servers with their newest sample, and a server's health over time. */
import { health, servers } from '../../../../shared/store/queries/servers.js';
import type { Endpoint } from './endpoint.js';
import { COMMON } from './params.js';

/** `servers` and `servers/{serverName}/health`. */
export const SERVER_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'servers',
    summary: 'The servers and their newest health sample',
    description: 'Every server the store knows, by name, with its newest health sample in the range (null when none).',
    parameters: [COMMON.from, COMMON.to],
    run: ({ db, range }) => servers(db, range),
  },
  {
    path: 'servers/{serverName}/health',
    summary: "A server's health over time",
    description:
      'CPU, memory, sessions, users, apps and cache of one server as columnar series: raw samples when at most 1,000 fall in the range, else buckets of `stepMs` (from the 5-minute rollups where the raw samples are gone). 404 for a server the store does not know.',
    pathParameters: { serverName: "the server's configured name (serversToMonitor.servers[].serverName)" },
    parameters: [COMMON.from, COMMON.to],
    run: ({ db, range, path }) => {
      const server = path['serverName'] ?? '';
      return health(db, { range, server }) ?? `no server named ${JSON.stringify(server)} in the store`;
    },
  },
];
