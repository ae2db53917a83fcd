/**
 * A long-running `svc local` / `svc edge` loads the large libraries of a feature only when its config
 * switches the feature on (docs/architecture.md "Memory"): the AWS SDK's S3 client (cloud forwarding's
 * claim checks; SQS goes through Svc's own client, shared/aws/, and never loads the SDK's), mqtt (the
 * MQTT destination), hyparquet-writer (the parquet encoder, at the first file), prom-client (the metrics endpoint), node-forge (the simulator's certificates:
 * `svc simulate` and `svc demo` only), pino-pretty and pino-roll (a TTY, file logging).
 *
 * The real built CLI runs as a child with bench/loaded-modules.mjs preloaded through NODE_OPTIONS (an
 * ESM resolve hook that writes every module it resolves to a file); the test reads which packages
 * its start loaded. The second case switches those features on and sees each package loaded, so the
 * check cannot pass because the hook saw nothing.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/build.js';
import { freePorts, LOOPBACK } from '../../support/ports.js';
import { startSvc } from '../../support/svc-process.js';

const HOOK = pathToFileURL(join(REPO_ROOT, 'bench/loaded-modules.mjs')).href;
const OPTIONAL = ['@aws-sdk/client-s3', '@aws-sdk/credential-providers', 'hyparquet-writer', 'mqtt', 'prom-client', 'node-forge', 'pino-pretty', 'pino-roll'];

/** Starts `svc <mode>` on `lines`, waits until it runs, stops it; the packages (node_modules/<pkg>) its start loaded. */
async function packagesLoaded(mode: 'local' | 'edge', lines: readonly string[]): Promise<Set<string>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lazy-'));
  writeFileSync(join(dir, 'svc.yaml'), ['Svc:', '  localQueue: {directory: queue}', ...lines, ''].join('\n'));
  const list = join(dir, 'modules.txt');
  const svc = startSvc(dir, mode, { NODE_OPTIONS: `--import=${HOOK}`, SVC_LOADED_MODULES: list });
  try {
    await expect.poll(svc.output, { timeout: 20_000 }).toMatch(new RegExp(`svc ${mode} \\S+ running`));
  } finally {
    svc.child.kill('SIGTERM');
  }
  expect(await svc.exited).toBe(0);
  const packages = new Set<string>();
  for (const line of readFileSync(list, 'utf8').split('\n')) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line.split(' ')[0] ?? '')?.[1];
    if (pkg !== undefined) packages.add(pkg);
  }
  return packages;
}

describe('the libraries a start loads', () => {
  it('svc local with the audit API, a UDP listener and the defaults loads none of the optional ones', async () => {
    const [audit, udp] = await freePorts(2);
    const loaded = await packagesLoaded('local', [
      `  auditEvents: {enable: true, host: ${LOOPBACK}, port: ${audit}, destination: {enable: true, type: json, json: {objectdata: {enable: true, exportDirectory: audit}}}}`,
      `  logEvents: {udpServerConfig: {serverHost: ${LOOPBACK}, portLogEvents: ${udp}}, source: {proxy: {enable: true}}}`,
    ]);
    // The hook saw the start: the config's own libraries are there.
    expect(loaded).toContain('yaml');
    expect(loaded).toContain('ajv');
    expect(OPTIONAL.filter((p) => loaded.has(p))).toEqual([]);
    expect(loaded.has('@aws-sdk/client-sqs')).toBe(false);
  }, 30_000);

  it('svc edge with cloud forwarding, MQTT and the metrics endpoint on loads their libraries', async () => {
    const [udp, metrics, broker] = await freePorts(3);
    const loaded = await packagesLoaded('edge', [
      `  logEvents: {udpServerConfig: {serverHost: ${LOOPBACK}, portLogEvents: ${udp}}, source: {proxy: {enable: true}}, sendToTsdb: {enable: true}, sendToMQTT: {enable: true, postTo: {baseTopic: true}}}`,
      '  tsdbConfig: {enable: true, host: influx.example.com}',
      // Nothing listens on the broker's port: the MQTT writer warns and reconnects in the background.
      `  mqttConfig: {enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${broker}}`,
      `  metricsEndpoint: {enable: true, host: ${LOOPBACK}, port: ${metrics}}`,
      '  cloud: {enable: true, region: eu-west-1, queues: {tsdb: "https://sqs.eu-west-1.amazonaws.com/123456789012/svc-tsdb"}}',
    ]);
    expect(['@aws-sdk/client-s3', 'mqtt', 'prom-client'].filter((p) => !loaded.has(p))).toEqual([]);
    // SQS through shared/aws/, not the SDK; the credential providers load at the first send, not at start.
    expect(loaded.has('@aws-sdk/client-sqs')).toBe(false);
    expect(loaded.has('@aws-sdk/credential-providers')).toBe(false);
    // Still not the simulator's.
    expect(loaded.has('node-forge')).toBe(false);
  }, 30_000);
});
