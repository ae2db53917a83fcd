/**
 * The corporate proxy (shared/runtime/proxy.ts, `Svc.proxy`): how the settings are resolved from the
 * config and the environment, what is refused and what the start-up line shows, the config keys as
 * secrets, and calls through a real forward proxy (tinyproxy, test/support/tinyproxy.ts): the lean
 * AWS client to fauxqs (plain HTTP, through HTTP_PROXY), the AWS SDK's S3 client, global fetch, and
 * the pollers' mutual-TLS requests (CONNECT through HTTPS_PROXY), each with a NO_PROXY host kept out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../edge-agent/cli/program.js';
import { makeCertificates } from '../../../edge-agent/simulate/platform/certs.js';
import { getJson } from '../../../edge-agent/sources/platform/http.js';
import { LeanSqsClient } from '../../../shared/aws/sqs.js';
import { ConfigError } from '../../../shared/config/errors.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { MASK, maskConfig } from '../../../shared/config/mask.js';
import { secretValues } from '../../../shared/config/secrets.js';
import { createTsdbClient } from '../../../shared/destinations/tsdb/writer.js';
import {
  installProxy,
  proxyAgentOptions,
  proxyEnvOf,
  proxyProblems,
  proxySummary,
  resolveProxy,
  sdkProxyOptions,
} from '../../../shared/runtime/proxy.js';
import { startFakeInflux } from '../../support/fake-influx.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { recordingLog } from '../../support/log.js';
import { clientTlsOf, type HttpsStub, startHttpsStub } from '../../support/platform-https.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { startSvc } from '../../support/svc-process.js';
import { startTinyproxy, type TinyproxyHandle } from '../../support/tinyproxy.js';
import { tsdbConfig } from '../destinations/tsdb/helpers.js';

const EMPTY = { httpProxy: '', httpsProxy: '', noProxy: '' };

describe('resolving the settings', () => {
  it('takes each key from the config when set, else from the variables (lower-case first)', () => {
    const env = {
      HTTP_PROXY: 'http://upper:3128',
      http_proxy: 'http://lower:3128',
      HTTPS_PROXY: 'http://env-https:3128',
      NO_PROXY: 'env.local',
    };
    expect(resolveProxy({ ...EMPTY, httpsProxy: 'http://config:8080' }, env)).toEqual({
      http: { value: 'http://lower:3128', from: 'http_proxy' },
      https: { value: 'http://config:8080', from: 'Svc.proxy.httpsProxy' },
      noProxy: { value: 'env.local', from: 'NO_PROXY' },
    });
    expect(resolveProxy({ ...EMPTY, noProxy: 'localhost' }, env).noProxy).toEqual({
      value: 'localhost',
      from: 'Svc.proxy.noProxy',
    });
  });

  it('a key still holding a secret reference (before the fetch at start) leaves the variable in charge', () => {
    const resolved = resolveProxy({ ...EMPTY, httpsProxy: '${aws-secret:corp/proxy}' }, { HTTPS_PROXY: 'http://p:1' });
    expect(resolved.https).toEqual({ value: 'http://p:1', from: 'HTTPS_PROXY' });
  });

  it('nothing set: no proxy, and Node agents get no proxyEnv; NO_PROXY alone changes nothing', () => {
    expect(proxyEnvOf(resolveProxy(EMPTY, {}))).toBeUndefined();
    expect(proxyEnvOf(resolveProxy(EMPTY, { NO_PROXY: 'localhost' }))).toBeUndefined();
    expect(proxyEnvOf(resolveProxy(EMPTY, { HTTPS_PROXY: 'http://p:1', no_proxy: 'a' }))).toEqual({
      HTTPS_PROXY: 'http://p:1',
      NO_PROXY: 'a',
    });
  });

  it('refuses a URL Node would silently ignore, naming where it came from and never its text', () => {
    const problems = proxyProblems(
      resolveProxy(
        { ...EMPTY, httpProxy: 'socks5://user:pa55word@proxy:1080' },
        { HTTPS_PROXY: 'user:pa55word@proxy.corp:3128' },
      ),
    );
    expect(problems).toEqual([
      'Svc.proxy.httpProxy is not an http:// or https:// proxy URL with a host (e.g. http://proxy.example.com:3128)',
      'HTTPS_PROXY is not an http:// or https:// proxy URL with a host (e.g. http://proxy.example.com:3128)',
    ]);
    expect(problems.join(' ')).not.toContain('pa55word');
  });

  it('the start-up line names host, port and source; credentials are said to be there, never shown', () => {
    const { message, fields } = proxySummary(
      resolveProxy(
        { ...EMPTY, httpsProxy: 'http://svc:pa55word@proxy.corp:3128' },
        { HTTP_PROXY: 'http://plain.corp:8080', NO_PROXY: 'localhost,.lan' },
      ),
    );
    expect(message).toBe(
      'outbound proxy: http:// targets through plain.corp:8080 (http proxy, from HTTP_PROXY), https:// targets through proxy.corp:3128 (http proxy, with credentials, from Svc.proxy.httpsProxy); NO_PROXY (from NO_PROXY): localhost,.lan',
    );
    expect(JSON.stringify(fields)).not.toContain('pa55word');
    expect(proxySummary(resolveProxy(EMPTY, {})).message).toBe(
      'outbound HTTP(S) calls connect directly: no proxy is set (Svc.proxy.httpProxy / httpsProxy, HTTP_PROXY / HTTPS_PROXY)',
    );
  });
});

describe('Svc.proxy in the config file', () => {
  const load = (proxy: string, env: NodeJS.ProcessEnv = {}) =>
    parseConfigText(`Svc:\n  proxy: ${proxy}\n`, 'svc.yaml', env);

  it('the proxy URLs are secrets: ${env:…} and ${aws-secret:…} are taken, the config view masks them', () => {
    const secret = 'http://svc:pa55word@proxy.corp:3128';
    const loaded = load('{ httpProxy: "${env:CORP_PROXY}", httpsProxy: "${aws-secret:corp/proxy}" }', {
      CORP_PROXY: secret,
    });
    expect(loaded.config.proxy.httpProxy).toBe(secret);
    expect(loaded.secretRefs.map((r) => [r.path.join('.'), r.ref.text])).toEqual([
      ['Svc.proxy.httpsProxy', '${aws-secret:corp/proxy}'],
    ]);
    expect(secretValues(loaded.config)).toContain(secret);
    const view = maskConfig(loaded.config, { obfuscate: false });
    expect(view).toMatchObject({ proxy: { httpProxy: MASK, httpsProxy: MASK, noProxy: '' } });
    // With the fetched value in, it is checked like a written one.
    const withFetched = (value: string) =>
      parseConfigText(
        'Svc:\n  proxy: { httpsProxy: "${aws-secret:corp/proxy}" }\n',
        'svc.yaml',
        {},
        {
          secrets: new Map([['${aws-secret:corp/proxy}', value]]),
        },
      );
    expect(withFetched(secret).config.proxy.httpsProxy).toBe(secret);
    expect(() => withFetched('proxy.corp:3128')).toThrow(ConfigError);
  });

  it('a value that is not an http(s) URL is refused, naming the key and not the value', () => {
    let error: unknown;
    try {
      load('{ httpsProxy: "svc:pa55word@proxy.corp:3128" }');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = error instanceof ConfigError ? error.issues.map((i) => `${i.path}: ${i.message}`).join('\n') : '';
    expect(text).toContain('Svc.proxy.httpsProxy');
    expect(text).toContain('http:// or https:// proxy URL');
    expect(text).not.toContain('pa55word');
  });

  it('defaults: every key empty (today: no proxy unless the environment sets one)', () => {
    expect(parseConfigText('Svc: {}\n', 'svc.yaml', {}).config.proxy).toEqual(EMPTY);
  });
});

describe('through a real forward proxy (tinyproxy)', () => {
  let proxy: TinyproxyHandle;
  let fx: FauxqsHandle;
  let plain: RecordingServer;
  let platform: HttpsStub;
  let restore: (() => void) | undefined;
  const certs = makeCertificates(['localhost', '127.0.0.1']);
  const logged = recordingLog();

  beforeAll(async () => {
    [proxy, fx, plain, platform] = await Promise.all([
      startTinyproxy(),
      startFauxqs(),
      startRecordingServer(),
      startHttpsStub(certs),
    ]);
    plain.setFallback(200);
    platform.route('/engine/healthcheck', { json: { version: 'x' } });
    // Only 127.0.0.1 is kept out: `localhost` (the same servers) goes through the proxy.
    restore = installProxy(
      resolveProxy({ httpProxy: proxy.url, httpsProxy: proxy.url, noProxy: '127.0.0.1' }, {}),
      logged.log,
    );
  });
  afterAll(async () => {
    restore?.();
    await Promise.all([proxy?.stop(), fx?.stop(), plain?.stop(), platform?.stop()]);
  });

  it('says so at start', () => {
    expect(logged.lines.map((l) => l.msg)).toEqual([
      `outbound proxy: http:// targets through 127.0.0.1:${proxy.port} (http proxy, from Svc.proxy.httpProxy), https:// targets through 127.0.0.1:${proxy.port} (http proxy, from Svc.proxy.httpsProxy); NO_PROXY (from Svc.proxy.noProxy): 127.0.0.1`,
    ]);
  });

  it('the lean AWS client: SQS at localhost through HTTP_PROXY, at 127.0.0.1 directly', async () => {
    const queueUrl = await fx.createQueue('proxied');
    const credentials = () => Promise.resolve({ accessKeyId: 'local', secretAccessKey: 'local' });
    const viaProxy = new LeanSqsClient({ region: 'us-east-1', credentials, endpoint: `http://localhost:${fx.port}` });
    const direct = new LeanSqsClient({ region: 'us-east-1', credentials, endpoint: `http://127.0.0.1:${fx.port}` });
    try {
      const entry = (id: string) => ({ QueueUrl: queueUrl, Entries: [{ Id: id, MessageBody: id }] });
      expect((await viaProxy.sendMessageBatch(entry('a'))).Successful).toEqual([{ Id: 'a' }]);
      expect((await direct.sendMessageBatch(entry('b'))).Successful).toEqual([{ Id: 'b' }]);
    } finally {
      viaProxy.destroy();
      direct.destroy();
    }
    expect(proxy.requests()).toContainEqual({ method: 'POST', target: `http://localhost:${fx.port}/` });
    expect(proxy.saw(`127.0.0.1:${fx.port}`)).toBe(false);
  });

  it("the AWS SDK's S3 client gets agents through the proxy", async () => {
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: `http://localhost:${fx.port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      ...sdkProxyOptions(),
    });
    try {
      await s3.send(new CreateBucketCommand({ Bucket: 'proxied-bucket' }));
    } finally {
      s3.destroy();
    }
    expect(proxy.saw(`localhost:${fx.port}`)).toBe(true);
    expect(proxy.requests().some((r) => r.target.includes('proxied-bucket'))).toBe(true);
  });

  it('global fetch (heartbeat, telemetry, the monitoring SaaS) goes through it; NO_PROXY keeps 127.0.0.1 out', async () => {
    expect((await fetch(`http://localhost:${plain.port}/via-proxy`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${plain.port}/direct`)).status).toBe(200);
    expect(plain.requests.map((r) => r.url)).toEqual(['/via-proxy', '/direct']);
    expect(proxy.saw(`localhost:${plain.port}`)).toBe(true);
    expect(proxy.saw(`127.0.0.1:${plain.port}`)).toBe(false);
  });

  it('the tsdb (setup and writes): at localhost through HTTP_PROXY, at 127.0.0.1 directly', async () => {
    const influx = await startFakeInflux({ version: 2, token: 'v2-token', org: 'acme' });
    try {
      for (const host of ['localhost', '127.0.0.1']) {
        const config = tsdbConfig({ version: 2, host, port: influx.port, v2: { org: 'acme', bucket: host } });
        const client = createTsdbClient({ config, tls: null, log: logged.log, requestTimeoutMs: 5_000 });
        await client.ensureDatabase();
        expect(await client.send({ body: new TextEncoder().encode('m n=1i 1') })).toEqual({ kind: 'ok' });
      }
      expect(influx.lines()).toHaveLength(2);
      expect(proxy.requests()).toContainEqual({
        method: 'POST',
        target: `http://localhost:${influx.port}/api/v2/write?org=acme&bucket=localhost&precision=ns`,
      });
      expect(proxy.saw(`127.0.0.1:${influx.port}`)).toBe(false);
    } finally {
      await influx.close();
    }
  });

  it("the pollers' mutual TLS works through CONNECT (TLS end to end), and NO_PROXY keeps 127.0.0.1 out", async () => {
    const tls = clientTlsOf(certs);
    const poll = (host: string) =>
      getJson({
        url: new URL(`https://${host}:${platform.port}/engine/healthcheck`),
        headers: [],
        tls,
        timeoutMs: 5_000,
        maxBodyBytes: 1_000_000,
      });
    expect((await poll('localhost')).body).toEqual({ version: 'x' });
    expect(proxy.requests()).toContainEqual({ method: 'CONNECT', target: `localhost:${platform.port}` });
    const connects = proxy.requests().filter((r) => r.method === 'CONNECT').length;
    expect((await poll('127.0.0.1')).body).toEqual({ version: 'x' });
    expect(proxy.requests().filter((r) => r.method === 'CONNECT')).toHaveLength(connects);
    expect(platform.to('/engine/healthcheck').map((r) => r.clientCert)).toEqual(['svc-client', 'svc-client']);
  });
});

describe('a proxy URL that cannot be used', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-proxy-refused-'));
    writeFileSync(join(dir, 'svc.yaml'), 'Svc:\n  localQueue: { directory: queue }\n  proxy: { noProxy: localhost }\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Without a scheme: Node's agents would ignore it and connect directly.
  const BAD = { HTTPS_PROXY: 'svc:pa55word@proxy.corp.example:3128' };

  it('svc validate-config reports it, naming the variable and not its text', async () => {
    let err = '';
    const code = await runCli(['validate-config', '--config', join(dir, 'svc.yaml')], {
      out: () => undefined,
      err: (text) => void (err += text),
      env: BAD,
    });
    expect(code).toBe(1);
    expect(err).toContain(
      'Svc.proxy: HTTPS_PROXY is not an http:// or https:// proxy URL with a host (e.g. http://proxy.example.com:3128)',
    );
    expect(err).not.toContain('pa55word');
  });

  it('svc edge refuses to start with it (exit 1, one line naming it)', async () => {
    const edge = startSvc(dir, 'edge', BAD);
    expect(await edge.exited).toBe(1);
    expect(edge.output()).toContain(
      'svc: cannot start: svc.yaml Svc.proxy: HTTPS_PROXY is not an http:// or https:// proxy URL with a host',
    );
    expect(edge.output()).not.toContain('pa55word');
  });
});

describe('without a proxy (the Lambda functions, a direct edge)', () => {
  it("installs nothing: the global agents and fetch's dispatcher stay the same objects, agents get no options", () => {
    const dispatcher = Symbol.for('undici.globalDispatcher.1');
    const before = { http: http.globalAgent, https: https.globalAgent, fetch: Reflect.get(globalThis, dispatcher) };
    const { log, lines } = recordingLog();
    const restore = installProxy(resolveProxy(EMPTY, {}), log);
    try {
      expect(http.globalAgent).toBe(before.http);
      expect(https.globalAgent).toBe(before.https);
      expect(Reflect.get(globalThis, dispatcher)).toBe(before.fetch);
      expect(proxyAgentOptions()).toEqual({});
      expect(sdkProxyOptions()).toEqual({});
      expect(lines.map((l) => l.msg)).toEqual([
        'outbound HTTP(S) calls connect directly: no proxy is set (Svc.proxy.httpProxy / httpsProxy, HTTP_PROXY / HTTPS_PROXY)',
      ]);
    } finally {
      restore();
    }
  });
});
