/** The local HTTP endpoints of the service: the config view (with the status page), the container health check and the metrics endpoint. */
import { Bool, Feature, Port, Str } from '../builders.js';

export const configVisualisation = Feature(
  'Web view of the config (GET /) and the live status page (GET /status); docs/operations.md',
  false,
  'Serve the masked config and the status page in a web UI',
  {
    host: Str('localhost', 'Listen host; localhost or the host IP in most cases', { minLength: 1 }),
    port: Port(3100, 'Listen port'),
    obfuscate: Bool(
      true,
      'Mask host names, topics and certificate paths in the view (platform-formats.md §10.7); secrets are masked either way',
    ),
  },
);

export const containerHealthCheck = Feature(
  'Health endpoint for container runtimes (GET /health, all interfaces)',
  false,
  'Create the health endpoint',
  {
    port: Port(12398, 'Port; change when several instances share a server'),
  },
);

export const metricsEndpoint = Feature('Pull-based metrics endpoint (GET /metrics)', false, 'Expose health metrics', {
  host: Str('127.0.0.1', 'Host or IP to listen on; a specific address is recommended', { minLength: 1 }),
  port: Port(9842, 'Port'),
});
