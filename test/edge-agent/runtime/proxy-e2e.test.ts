/**
 * A real `svc edge` behind a corporate proxy (a real tinyproxy, test/support/tinyproxy.ts): its
 * forwarding to SQS (fauxqs, plain HTTP) goes through the proxy of `Svc.proxy.httpProxy`, its heartbeat
 * to an HTTPS stand-in (test CA) and its health polls of a platform server over mutual TLS go through
 * CONNECT at the HTTPS_PROXY of the environment, and the second platform server, named by the
 * address NO_PROXY lists, is polled directly. `Svc.proxy.httpProxy` is itself a secret reference
 * (with a user name and password in the URL): its fetch at start goes through the environment's
 * HTTP_PROXY, and the password never reaches the output. What went through is read from
 * tinyproxy's log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates, writeCertificates } from '../../../edge-agent/simulate/platform/certs.js';
import { healthBody } from '../../shared/destinations/polled.js';
import { type SecretStores, startSecretStores } from '../../support/aws-secrets.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { type HttpsStub, startHttpsStub } from '../../support/platform-https.js';
import { logLines, startSvc } from '../../support/svc-process.js';
import { startTinyproxy, type TinyproxyHandle } from '../../support/tinyproxy.js';

let proxy: TinyproxyHandle;
let secrets: SecretStores;
let fx: FauxqsHandle;
let heartbeat: HttpsStub;
let proxied: HttpsStub;
let direct: HttpsStub;
let dir: string;
let queueUrl: string;

beforeAll(async () => {
  const certs = makeCertificates(['localhost', '127.0.0.1']);
  dir = mkdtempSync(join(tmpdir(), 'svc-proxy-e2e-'));
  writeCertificates(join(dir, 'certs'), certs, '');
  [proxy, secrets, fx, heartbeat, proxied, direct] = await Promise.all([
    startTinyproxy(),
    startSecretStores(),
    startFauxqs(),
    startHttpsStub(certs, { requestCert: false }),
    startHttpsStub(certs),
    startHttpsStub(certs),
  ]);
  heartbeat.route('/alive', { status: 200, body: 'ok' });
  for (const server of [proxied, direct]) server.route('/engine/healthcheck', () => ({ json: healthBody() }));
  queueUrl = await fx.createQueue('svc-tsdb');
  secrets.putSecret('corp/proxy', `http://svc:pa55word@127.0.0.1:${proxy.port}`);
}, 60_000);

afterAll(async () => {
  await Promise.all([proxy?.stop(), secrets?.stop(), fx?.stop(), heartbeat?.stop(), proxied?.stop(), direct?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function messagesOnQueue(): Promise<number> {
  const out = await fx.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
  return out.Messages?.length ?? 0;
}

describe('svc edge behind a corporate proxy', () => {
  it('forwards, reports and polls through the proxy; NO_PROXY keeps its host out', async () => {
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue: { directory: queue }',
        '  uptimeMonitor: { enable: false }',
        '  systemInfo: { enable: false }',
        `  heartbeat: { enable: true, remoteURL: "https://localhost:${heartbeat.port}/alive", frequency: "every 1 second" }`,
        // Forwarded to SQS, never contacted by svc edge.
        '  tsdbConfig: { enable: true, host: tsdb.example.com, version: 1, v1Config: { dbName: svc } }',
        '  cert: { clientCert: certs/client.pem, clientCertKey: certs/client_key.pem, clientCertCA: certs/root.pem }',
        '  serversToMonitor:',
        '    pollingInterval: 1000',
        '    serverTagsDefinition: []',
        `    servers: [{ host: "localhost:${proxied.port}", serverName: proxied }, { host: "127.0.0.1:${direct.port}", serverName: direct }]`,
        '  cloud:',
        '    enable: true',
        '    region: us-east-1',
        `    endpoint: http://localhost:${fx.port}`,
        `    queues: { tsdb: "${queueUrl}" }`,
        // The http proxy from the config (a secret in Secrets Manager), the https one from the environment: key by key.
        '  proxy: { httpProxy: "${aws-secret:corp/proxy}", noProxy: "127.0.0.1" }',
        '',
      ].join('\n'),
    );
    const edge = startSvc(dir, 'edge', {
      HTTPS_PROXY: proxy.url,
      // Only for the fetch of the secret references: Svc.proxy.httpProxy is not known before it.
      HTTP_PROXY: proxy.url,
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://localhost:${new URL(secrets.url).port}`,
      NODE_EXTRA_CA_CERTS: join(dir, 'certs', 'root.pem'),
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_PROFILE: '',
      AWS_CONFIG_FILE: join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    });
    try {
      await expect.poll(() => heartbeat.to('/alive').length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(() => proxied.to('/engine/healthcheck').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(() => direct.to('/engine/healthcheck').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      // The polled samples reach SQS through the forwarder.
      await expect.poll(messagesOnQueue, { timeout: 15_000 }).toBeGreaterThan(0);
    } finally {
      edge.child.kill('SIGTERM');
    }
    expect(await edge.exited).toBe(0);

    // The secret reference, fetched at start through the environment's proxy.
    expect(secrets.requests.map((r) => r.target)).toEqual(['secretsmanager.GetSecretValue']);
    expect(proxy.requests()).toContainEqual({
      method: 'POST',
      target: `http://localhost:${new URL(secrets.url).port}/`,
    });
    expect(edge.output()).not.toContain('pa55word');
    // Plain HTTP to SQS: an absolute-URL request at the proxy.
    expect(proxy.requests()).toContainEqual({ method: 'POST', target: `http://localhost:${fx.port}/` });
    // HTTPS: tunnels (fetch for the heartbeat, the pollers' agent with the client certificate).
    expect(proxy.requests()).toContainEqual({ method: 'CONNECT', target: `localhost:${heartbeat.port}` });
    expect(proxy.requests()).toContainEqual({ method: 'CONNECT', target: `localhost:${proxied.port}` });
    expect(proxied.to('/engine/healthcheck').every((r) => r.clientCert === 'svc-client')).toBe(true);
    // NO_PROXY: polled directly, never at the proxy.
    expect(proxy.saw(`127.0.0.1:${direct.port}`)).toBe(false);
    expect(direct.to('/engine/healthcheck').every((r) => r.clientCert === 'svc-client')).toBe(true);

    const info = logLines(edge.output()).filter((l) => l.level === 'info' && l.msg.startsWith('outbound proxy:'));
    expect(info.map((l) => l.msg)).toEqual([
      `outbound proxy: http:// targets through 127.0.0.1:${proxy.port} (http proxy, with credentials, from Svc.proxy.httpProxy), https:// targets through 127.0.0.1:${proxy.port} (http proxy, from HTTPS_PROXY); NO_PROXY (from Svc.proxy.noProxy): 127.0.0.1`,
    ]);
  });
});
