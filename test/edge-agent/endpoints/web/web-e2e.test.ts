/**
 * The web view in a real browser against a real `svc edge`: the platform simulator (three servers
 * over mutual TLS, moving one step a second, its client key encrypted with a marker passphrase)
 * polled every second, UDP user and log events from the simulator's generator, and a config with a
 * marker secret in every secret-like key. Headless Chromium (playwright-core) opens the pages:
 * - the config page renders, the JSON tree expands on a click, "Download YAML" downloads the masked
 *   YAML, and no marker is in the DOM, in any response body the page received, or in the download;
 * - the status page shows the simulator's servers with their charts, and its numbers change
 *   between two screenshots; its alerts part shows what the real alert engine fires (destinationFailing
 *   at once for the destinations at the closed port, engineCpuHigh at a threshold of 0 for each
 *   server) and the webhook channel to the closed port failing, each linked to /alerts. The first
 *   screenshot (status-1.png) is docs/images/status-page.png.
 * Screenshots go to test-output/screenshots/web/ and are checked for content (distinct colours).
 * Also: a taken port stops `svc edge` with exit 1, naming the key and the port.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createDatagramGenerator } from '../../../../edge-agent/simulate/messages.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../../../edge-agent/simulate/platform/server.js';
import { SVC_VERSION } from '../../../../shared/version.js';
import { chromiumPath, launchChromium, NO_CHROMIUM, pngColours, screenshotDir } from '../../../support/chromium.js';
import { freePort, freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { type SvcProcess, startSvc } from '../../../support/svc-process.js';
import { eventually, sendDatagrams } from '../../../support/udp.js';
import { SECRET_MARKERS, secretConfigLines, secretUserEventLines } from './fixtures.js';

const CHROMIUM = chromiumPath();
const PASSPHRASE = 'MARKER-CERT-PASSPHRASE';
const ALERT_CHANNEL_MARKER = 'MARKER-ALERT-CHANNEL';
const MARKERS = [...SECRET_MARKERS, PASSPHRASE, 'MARKER-SERVER-HEADER', ALERT_CHANNEL_MARKER];

let dir: string;
let sim: PlatformSimulator;
let svc: SvcProcess;
let browser: Browser;
let base: string;
let userPort: number;
let logPort: number;
let shots: string;

function userAndLogTraffic(n: number): Promise<void[]> {
  const startMs = Date.now();
  const users = createDatagramGenerator({
    seed: startMs % 1000,
    kinds: ['user-session', 'user-connection'],
    pool: sim.pool,
    startMs,
  });
  const logs = createDatagramGenerator({ seed: startMs % 1000, kinds: ['engine', 'proxy'], pool: sim.pool, startMs });
  return Promise.all([
    sendDatagrams(
      userPort,
      Array.from({ length: n }, () => users.next().data),
    ),
    sendDatagrams(
      logPort,
      Array.from({ length: n }, () => logs.next().data),
    ),
  ]);
}

beforeAll(async () => {
  if (!CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), 'svc-web-e2e-'));
  shots = screenshotDir('web');
  sim = await startPlatformSimulator({ servers: 3, seed: 7, certDir: join(dir, 'certs'), passphrase: PASSPHRASE });
  const [webPort, closed] = [await freePort(), await freePort()];
  [userPort, logPort] = [await freeUdpPort(), await freeUdpPort()];
  const servers = sim.config.Svc.serversToMonitor.servers.map((s, i) => ({
    ...s,
    ...(i === 0 ? { headers: { 'X-Api-Auth': 'MARKER-SERVER-HEADER' } } : {}),
  }));
  const simSections = stringify({
    cert: sim.config.Svc.cert,
    serversToMonitor: { ...sim.config.Svc.serversToMonitor, servers, pollingInterval: 1_000 },
    userSessions: { ...sim.config.Svc.userSessions, pollingInterval: 2_000 },
    appNames: sim.config.Svc.appNames,
  })
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`);
  const cwd = join(dir, 'edge');
  mkdirSync(cwd);
  writeFileSync(
    join(cwd, 'svc.yaml'),
    [
      'Svc:',
      '  uptimeMonitor: {enable: false}',
      '  systemInfo: {enable: false}',
      '  localQueue: {directory: queue}',
      `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${webPort}}`,
      '  errorTracking: {enable: true}',
      '  store: {path: store/svc.db}',
      '  alerts:',
      '    evaluationInterval: 1s',
      '    groupWait: "0"',
      '    builtIn: {destinationFailing: {for: "0"}, engineCpuHigh: {threshold: 0, for: "0"}}',
      `    channels: [{name: ops, type: webhook, url: "http://127.0.0.1:${closed}/hook/${ALERT_CHANNEL_MARKER}"}]`,
      ...secretConfigLines(closed),
      ...secretUserEventLines(userPort),
      `  logEvents: {udpServerConfig: {serverHost: ${LOOPBACK}, portLogEvents: ${logPort}}, source: {engine: {enable: true}, proxy: {enable: true}}, sendToTsdb: {enable: true}}`,
      ...simSections,
      '',
    ].join('\n'),
  );
  svc = startSvc(cwd, 'edge');
  await eventually(
    () => svc.output().includes(`svc edge ${SVC_VERSION} running`) || svc.child.exitCode !== null,
    20_000,
    'svc edge running',
  );
  if (!svc.output().includes('running (')) throw new Error(`svc edge did not start:\n${svc.output()}`);
  base = `http://${LOOPBACK}:${webPort}`;
  expect(svc.output()).toContain(`config view listening on ${base}/ (the live status page on ${base}/status)`);
  browser = await launchChromium(CHROMIUM);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (svc) {
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
  }
  await sim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A new page that records the body of every response it receives. */
async function recordingPage(): Promise<{ page: Page; bodies: () => Promise<string[]> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const pending: Promise<string>[] = [];
  page.on('response', (response) => pending.push(response.text().catch(() => '')));
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return {
    page,
    bodies: async () => {
      expect(errors, 'errors in the page (a CSP violation is one)').toEqual([]);
      return Promise.all(pending);
    },
  };
}

async function expectContent(page: Page, png: Buffer, what: string): Promise<void> {
  const colours = await pngColours(page, png);
  expect(colours.width, what).toBe(1280);
  expect(colours.distinct, `${what}: distinct colours`).toBeGreaterThan(50);
  expect(colours.topShare, `${what}: share of the most common colour`).toBeLessThan(0.9);
}

describe.skipIf(!CHROMIUM)(`web view in headless Chromium${CHROMIUM ? '' : ` (skipped: ${NO_CHROMIUM})`}`, () => {
  it('the config page renders, its tree expands on a click, Download YAML gives the masked YAML, and no secret reaches the browser', async () => {
    const { page, bodies } = await recordingPage();
    await page.goto(`${base}/`);
    await expect.poll(() => page.title()).toBe('Svc configuration');
    const tsdb = page.locator('#tree details:has(> summary > .key:text-is("tsdbConfig"))');
    expect(await tsdb.getAttribute('open')).toBeNull();
    expect(await page.locator('#tree .key:text-is("v1Config")').isVisible()).toBe(false);
    await tsdb.locator('> summary').click();
    expect(await tsdb.getAttribute('open')).toBe('');
    expect(await page.locator('#tree .key:text-is("v1Config")').isVisible()).toBe(true);
    await page.locator('#tree details:has(> summary > .key:text-is("v1Config")) > summary').click();
    await page.locator('#tree details:has(> summary > .key:text-is("auth")) > summary').first().click();
    await page.locator('#tree .key:text-is("tsdbConfig")').scrollIntoViewIfNeeded();
    const png = await page.screenshot({ path: join(shots, 'config.png') });
    await page.locator('#expand-all').click();
    expect(await page.locator('#tree details:not([open])').count()).toBe(0);
    const passwordLeaf = page.locator('#tree li.leaf:has(> .key:text-is("password"))').first();
    expect(await passwordLeaf.textContent()).toBe('password: "**********"');

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download').click()]);
    expect(download.suggestedFilename()).toBe('svc-config.yaml');
    const file = join(dir, 'downloaded.yaml');
    await download.saveAs(file);
    const yaml = readFileSync(file, 'utf8');
    expect(yaml).toMatch(/^Svc:\n/);
    expect(yaml).toContain('      password: "**********"');
    expect(yaml).toContain('    clientCertPassphrase: "**********"');
    expect(yaml).toContain('X-Api-Auth: "**********"');

    const dom = await page.content();
    const received = await bodies();
    expect(received.length).toBeGreaterThanOrEqual(4);
    for (const marker of MARKERS) {
      expect(dom, `DOM: ${marker}`).not.toContain(marker);
      expect(yaml, `download: ${marker}`).not.toContain(marker);
      for (const body of received) expect(body, `a response: ${marker}`).not.toContain(marker);
    }
    await expectContent(page, png, 'config page');
  }, 60_000);

  it("the status page shows the simulator's servers with a trend, the alerts firing and the failing channel, and its numbers change between two screenshots", async () => {
    const { page, bodies } = await recordingPage();
    await userAndLogTraffic(200);
    await page.goto(`${base}/status`);
    for (const server of sim.servers)
      await page.locator(`article[data-server="${server.name}"] .state.ok`).waitFor({ timeout: 15_000 });
    // A trend needs two polls; uPlot draws on a canvas.
    await page.locator('article.card canvas').first().waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator('article.card .uplot').count(), { timeout: 15_000 }).toBe(3);
    await expect
      .poll(async () => (await page.locator('#listeners td').allTextContents()).join(' '), { timeout: 15_000 })
      .toMatch(/user_events \S+\/s 200 /);
    // The alerts: counts linked to /alerts, the firing ones by name (a server's with its name), the
    // channel at the closed port failing once its retries are spent (1 + 2 + 4 s).
    const alerts = page.locator('#alerts');
    await expect
      .poll(() => alerts.locator('.alert-counts').textContent(), { timeout: 20_000, interval: 500 })
      .toMatch(/^\d+ firing: [1-9]\d* critical, [1-9]\d* warning, 0 info · \d+ pending · 1 channel$/);
    await expect
      .poll(() => alerts.locator('.alert-channels').textContent(), { timeout: 20_000, interval: 500 })
      .toMatch(/^Channel failing: ops \(its last notification was not delivered; [1-9]\d* failed since start\)$/);
    expect(await alerts.locator('.alert-counts a').first().getAttribute('href')).toBe('/alerts');
    const named = await alerts.locator('.alert-names a').allTextContents();
    // An alert not about a server says which one it is by its other labels.
    expect(named).toContainEqual('destinationFailing (queue=platform, destination=tsdb)');
    expect(named.some((name) => sim.servers.some((server) => name === `engineCpuHigh on ${server.name}`))).toBe(true);
    for (const link of await alerts.locator('.alert-names a').all())
      expect(await link.getAttribute('href')).toMatch(/^\/alerts(#\w+)?$/);
    const numbers = async () =>
      (await page.locator('#servers dd, #listeners td, #destinations td').allTextContents()).join('|');
    const before = await numbers();
    const first = await page.screenshot({ path: join(shots, 'status-1.png'), fullPage: true });

    await userAndLogTraffic(300);
    // The received counts reach 500 at the next refresh (every 3 s), with their rate.
    await expect
      .poll(() => page.locator('#listeners td').allTextContents(), { timeout: 15_000, interval: 500 })
      .toContain('500');
    const after = await numbers();
    const second = await page.screenshot({ path: join(shots, 'status-2.png'), fullPage: true });
    expect(after).not.toBe(before);
    expect(second.equals(first)).toBe(false);

    const received = await bodies();
    for (const marker of MARKERS) {
      expect(await page.content(), marker).not.toContain(marker);
      for (const body of received) expect(body, `a response: ${marker}`).not.toContain(marker);
    }
    await expectContent(page, first, 'status page, first');
    await expectContent(page, second, 'status page, second');
  }, 90_000);
});

describe('web view in a svc process', () => {
  it('a taken port stops svc edge with exit 1, naming the key and the port', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'svc-web-port-'));
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, LOOPBACK, resolve));
    try {
      writeFileSync(
        join(cwd, 'svc.yaml'),
        [
          'Svc:',
          '  uptimeMonitor: {enable: false}',
          '  systemInfo: {enable: false}',
          `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
          '',
        ].join('\n'),
      );
      const taken = startSvc(cwd, 'edge');
      expect(await taken.exited).toBe(1);
      expect(taken.output()).toContain(
        `Svc.configVisualisation.host, .port: the config view cannot listen on ${LOOPBACK}:${port}: listen EADDRINUSE`,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 30_000);
});
