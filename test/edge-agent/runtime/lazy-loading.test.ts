/**
 * A long-running `svc local` / `svc edge` loads the large libraries of a feature only when its config
 * switches the feature on (docs/architecture.md "Memory"): the AWS SDK's S3 client (cloud forwarding's
 * claim checks; SQS goes through Svc's own client, shared/aws/, and never loads the SDK's), mqtt (the
 * MQTT destination), hyparquet-writer (the parquet encoder, at the first file), prom-client (the metrics endpoint), node-forge (the simulator's certificates:
 * `svc simulate` and `svc demo` only), pino-pretty and pino-roll (a TTY, file logging). Nor ajv's
 * compiler (the config validator is generated at build; the pollers' body checks compile at the
 * first body) or bowser (at the first user agent parsed).
 *
 * The real built CLI runs as a child with bench/loaded-modules.mjs preloaded through NODE_OPTIONS (an
 * ESM resolve hook and a CommonJS `require` hook that write every module loaded to a file); the test
 * reads which packages its start loaded. The later cases switch those features on (and send the
 * first poll's body and user agent) and see each package loaded, so the check cannot pass because
 * the hooks saw nothing.
 *
 * And what a start uses once is let go after: `systeminformation` (the system info, collected once)
 * is not in a heap snapshot of the running process taken after start.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeCertificates, writeCertificates } from '../../../edge-agent/simulate/platform/certs.js';
import { REPO_ROOT } from '../../support/build.js';
import { startMosquitto } from '../../support/mosquitto.js';
import { startHttpsStub } from '../../support/platform-https.js';
import { freePorts, freeUdpPort, LOOPBACK } from '../../support/ports.js';
import { startSvc } from '../../support/svc-process.js';
import { sendDatagrams } from '../../support/udp.js';
import { USER_CONNECTION_OPEN } from '../sources/udp/parse/fixtures.js';

const HOOK = pathToFileURL(join(REPO_ROOT, 'bench/loaded-modules.mjs')).href;
/** ajv's compiler (its runtime helpers, which generated code requires, are not the compiler). */
const AJV_COMPILER = 'node_modules/ajv/dist/core.js';
const OPTIONAL = [
  '@aws-sdk/client-s3',
  '@aws-sdk/credential-providers',
  'hyparquet-writer',
  'mqtt',
  'prom-client',
  'node-forge',
  'pino-pretty',
  'pino-roll',
];

/** The modules loaded so far (their URLs), from the hooks' file. */
const modulesIn = (list: string): string[] =>
  readFileSync(list, 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter(Boolean);

/**
 * Starts `svc <mode>` on `lines` (in `dir`, a new one by default), waits until it runs and `until`
 * holds of the modules loaded (after `act`), stops it; the packages (node_modules/<pkg>) loaded and
 * every module's URL.
 */
async function packagesLoaded(
  mode: 'local' | 'edge',
  lines: readonly string[],
  options: { dir?: string; act?: () => Promise<void>; until?: (modules: string[]) => boolean } = {},
): Promise<Set<string> & { modules: string[] }> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'svc-lazy-'));
  writeFileSync(join(dir, 'svc.yaml'), ['Svc:', '  localQueue: {directory: queue}', ...lines, ''].join('\n'));
  const list = join(dir, 'modules.txt');
  const svc = startSvc(dir, mode, { NODE_OPTIONS: `--import=${HOOK}`, SVC_LOADED_MODULES: list });
  try {
    await expect.poll(svc.output, { timeout: 20_000 }).toMatch(new RegExp(`svc ${mode} \\S+ running`));
    await options.act?.();
    const until = options.until;
    if (until) await expect.poll(() => until(modulesIn(list)), { timeout: 10_000 }).toBe(true);
  } finally {
    svc.child.kill('SIGTERM');
  }
  expect(await svc.exited).toBe(0);
  const modules = modulesIn(list);
  const packages = new Set<string>();
  for (const url of modules) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg !== undefined) packages.add(pkg);
  }
  return Object.assign(packages, { modules });
}

describe('the libraries a start loads', () => {
  it('svc local with the audit API, a UDP listener and the defaults loads none of the optional ones', async () => {
    const [audit, udp] = await freePorts(2);
    const loaded = await packagesLoaded('local', [
      `  auditEvents: {enable: true, host: ${LOOPBACK}, port: ${audit}, destination: {enable: true, type: json, json: {objectdata: {enable: true, exportDirectory: audit}}}}`,
      `  logEvents: {udpServerConfig: {serverHost: ${LOOPBACK}, portLogEvents: ${udp}}, source: {proxy: {enable: true}}}`,
    ]);
    // The hooks saw the start: the config's own library (imported) and the generated validator (required) are there.
    expect(loaded).toContain('yaml');
    expect(loaded.modules.some((m) => m.endsWith('/dist/shared/config/config-validator.generated.cjs'))).toBe(true);
    expect(OPTIONAL.filter((p) => loaded.has(p))).toEqual([]);
    expect(loaded.modules.filter((m) => m.endsWith(AJV_COMPILER))).toEqual([]);
    expect(loaded.has('bowser')).toBe(false);
    // TypeBox as the build's one-module bundle (scripts/bundle-typebox.mjs), not the package's ≈ 200 modules.
    expect(loaded.has('@sinclair/typebox')).toBe(false);
    expect(loaded.modules.some((m) => m.endsWith('/dist/vendor/typebox.js'))).toBe(true);
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

  it('svc edge with a health poller and a user-events listener loads ajv at the first body checked and bowser at the first user agent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-lazy-'));
    const certs = makeCertificates([LOOPBACK]);
    mkdirSync(join(dir, 'certs'));
    writeCertificates(join(dir, 'certs'), certs, 'export-pass');
    const engine = await startHttpsStub(certs);
    // Any 200 body is checked against the health schema (this one fails it: the poll counts an invalid response).
    engine.route('/engine/healthcheck', { json: {} });
    // A real broker: the queued user event is delivered, so the stop does not wait for it.
    const [userPort, broker] = await Promise.all([freeUdpPort(), startMosquitto()]);
    try {
      const loaded = await packagesLoaded(
        'edge',
        [
          '  systemInfo: {enable: false}',
          '  uptimeMonitor: {enable: false}',
          '  cert: {clientCert: certs/client.pem, clientCertKey: certs/client_key.pem, clientCertCA: certs/root.pem, clientCertPassphrase: export-pass}',
          `  serversToMonitor: {pollingInterval: 1000, servers: [{host: "${engine.hostPort}", serverName: node1}]}`,
          // A destination, so that user events are built (user agent included) and queued.
          `  mqttConfig: {enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${broker.port}}`,
          `  userEvents: {enable: true, udpServerConfig: {serverHost: ${LOOPBACK}, portUserActivityEvents: ${userPort}}, sendToMQTT: {enable: true, postTo: {everythingTopic: {enable: true, topic: lazy/user}}}}`,
        ],
        {
          dir,
          act: () => sendDatagrams(userPort, [USER_CONNECTION_OPEN]),
          until: (modules) =>
            modules.some((m) => m.endsWith(AJV_COMPILER)) && modules.some((m) => m.includes('/node_modules/bowser/')),
        },
      );
      expect(loaded).toContain('bowser');
    } finally {
      await Promise.all([engine.stop(), broker.stop()]);
    }
  }, 30_000);
});

describe('what a start uses once', () => {
  /** A line of systeminformation's main module (its header), which only its source text holds. */
  const SI_SOURCE = 'System Information - library';

  it('svc local lets systeminformation go once the system info is collected', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-released-'));
    writeFileSync(join(dir, 'svc.yaml'), ['Svc:', '  localQueue: {directory: queue}', ''].join('\n'));
    // Node writes a heap snapshot (after a full garbage collection) into the working directory at SIGUSR2.
    const svc = startSvc(dir, 'local', { NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2' });
    let snapshot = '';
    try {
      await expect.poll(svc.output, { timeout: 20_000 }).toMatch(/svc local \S+ running/);
      // The library did the collecting (not the fallbacks), so it was loaded.
      expect(svc.output()).toMatch(/"source":"systeminformation"/);
      svc.child.kill('SIGUSR2');
      await expect
        .poll(
          () => {
            const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
            snapshot = file === undefined ? '' : readFileSync(join(dir, file), 'utf8');
            return snapshot.trimEnd().endsWith('}');
          },
          { timeout: 20_000, interval: 200 },
        )
        .toBe(true);
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    // The snapshot holds the process's code: the start of Svc's own system-info module's source is
    // there (a snapshot names a string by its first 1,024 characters; JSON-escaped in the file).
    const ownSource = readFileSync(join(REPO_ROOT, 'dist/edge-agent/self-report/system-info.js'), 'utf8').slice(0, 300);
    expect(snapshot).toContain(JSON.stringify(ownSource).slice(1, -1));
    expect(snapshot.includes(SI_SOURCE)).toBe(false);
  }, 40_000);
});
