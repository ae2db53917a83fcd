/**
 * `svc demo`, the README's first command, as a newcomer runs it: a real child process on the shipped
 * config/demo.yaml (ports moved to free ones), with the platform simulator over real mutual TLS,
 * real UDP and real HTTP. Within a minute the metrics endpoint shows every simulated server's
 * gauges, user and log events are counted, and audit events land under ./data/demo.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Demo, startDemo } from '../support/demo.js';
import { sleep } from '../support/ports.js';
import { type Exposition, scrape } from '../support/prometheus.js';
import { filesIn, parquetEventIds } from '../support/svc-process.js';

const SERVERS = ['node1', 'node2', 'node3'];
/** The promise: everything shows within a minute of the start. */
const WITHIN_MS = 60_000;

let demo: Demo;

beforeAll(async () => {
  demo = await startDemo(['--servers', '3', '--udp-rate', '20', '--audit-rate', '4', '--report', '1']);
}, 40_000);

afterAll(async () => {
  await demo.remove();
});

/** Scrapes until `ready` holds for the scrape (bounded by WITHIN_MS from now). */
async function scrapeUntil(ready: (metrics: Exposition) => boolean): Promise<Exposition> {
  const deadline = Date.now() + WITHIN_MS;
  for (;;) {
    const { status, metrics } = await scrape(demo.metricsUrl);
    if (status === 200 && ready(metrics)) return metrics;
    if (Date.now() > deadline)
      throw new Error(
        `not seen within ${WITHIN_MS} ms; last scrape:\n${(await scrape(demo.metricsUrl)).body}\n--- output ---\n${demo.output()}`,
      );
    await sleep(250);
  }
}

describe('svc demo', () => {
  it("shows every simulated server's gauges and sessions on the metrics endpoint, labelled with its tags", async () => {
    const metrics = await scrapeUntil(
      (m) =>
        m.series('svc_cpu_total').length === SERVERS.length &&
        m.series('svc_user_session_total').length === SERVERS.length * 2,
    );
    for (const [i, server] of SERVERS.entries()) {
      const [cpu] = metrics.series('svc_cpu_total', { server_name: server });
      expect(cpu?.labels).toMatchObject({ host: '127.0.0.1', site: 'simulator', role: i === 0 ? 'central' : 'rim' });
      expect(cpu?.value).toBeGreaterThanOrEqual(0);
      expect(
        metrics
          .series('svc_user_session_total', { server_name: server })
          .map((s) => s.labels['user_session_virtual_proxy'])
          .sort(),
      ).toEqual(['/', '/hdr']);
      expect(metrics.series('svc_engine_metadata', { server_name: server })).toHaveLength(1);
    }
    expect(metrics.series('svc_polls_failed_total').every((s) => s.value === 0)).toBe(true);
  });

  it("shows the simulated servers on the live status page, from Svc's own memory", async () => {
    const url = `http://127.0.0.1:${demo.ports.web}/status.json`;
    const deadline = Date.now() + WITHIN_MS;
    let states: unknown = [];
    for (;;) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const report: unknown = await res.json();
      const servers =
        typeof report === 'object' && report !== null && 'servers' in report && Array.isArray(report.servers)
          ? (report.servers as unknown[])
          : [];
      states = servers.map((s) =>
        typeof s === 'object' && s !== null && 'name' in s && 'state' in s
          ? `${String(s.name)} ${String(s.state)}`
          : String(s),
      );
      if (JSON.stringify(states) === JSON.stringify(SERVERS.map((name) => `${name} ok`))) break;
      if (Date.now() > deadline) throw new Error(`status page servers: ${JSON.stringify(states)}`);
      await sleep(250);
    }
    expect(demo.output()).toContain(`status page: http://127.0.0.1:${demo.ports.web}/status`);
  });

  it("shows history, log events and the costliest apps from its store on the pages' API", async () => {
    const base = `http://127.0.0.1:${demo.ports.web}`;
    expect(demo.output()).toContain(`history: ${base}/servers, /logs, /users, /performance, /audit`);
    expect(demo.output()).toContain(`alerts: ${base}/alerts (the built-in rules; no channel`);
    const get = async (path: string): Promise<Record<string, unknown[]>> => {
      const res = await fetch(`${base}/api/v1/${path}`);
      expect(res.status, path).toBe(200);
      return (await res.json()) as Record<string, unknown[]>;
    };
    // Every second: the API shares the web view's limit of 300 requests a minute with the other tests.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [servers, logs, top] = [await get('servers'), await get('log-events'), await get('performance/top?by=app')];
      const polled = (servers['servers'] ?? []).filter(
        (s) => typeof s === 'object' && s !== null && 'latest' in s && s.latest !== null,
      );
      if (polled.length === SERVERS.length && (logs['events'] ?? []).length > 0 && (top['rows'] ?? []).length > 0)
        break;
      if (Date.now() > deadline)
        throw new Error(
          `no history within a minute: ${polled.length} servers, ${(logs['events'] ?? []).length} log events, ${(top['rows'] ?? []).length} apps`,
        );
      await sleep(1_000);
    }
  });

  it("receives the simulator's user and log events over UDP and drops none", async () => {
    const processed = (m: Exposition, listener: string) =>
      m.series('svc_udp_datagrams_processed_total', { listener })[0]?.value ?? 0;
    const metrics = await scrapeUntil((m) => processed(m, 'user_events') >= 20 && processed(m, 'log_events') >= 20);
    expect(metrics.series('svc_udp_datagrams_dropped_total').filter((s) => s.value > 0)).toEqual([]);
    expect(metrics.series('svc_udp_datagrams_failed_total').filter((s) => s.value > 0)).toEqual([]);
  });

  it("writes the config it runs, with the simulator's certificates and servers, under ./data/demo", () => {
    const written: unknown = parse(readFileSync(join(demo.cwd, 'data/demo/svc-demo.yaml'), 'utf8'));
    expect(written).toMatchObject({
      Svc: {
        cert: {
          clientCert: join(demo.cwd, 'data/demo/certs/client.pem'),
          clientCertCA: join(demo.cwd, 'data/demo/certs/root.pem'),
        },
        serversToMonitor: {
          pollingInterval: 10000,
          servers: SERVERS.map((serverName): unknown => expect.objectContaining({ serverName })),
        },
        metricsEndpoint: { enable: true, port: demo.ports.metrics },
      },
    });
  });

  it(
    "lands the simulated audit client's events under ./data/demo, each once, and stops cleanly on SIGTERM",
    async () => {
      const parquetDir = join(demo.cwd, 'data/demo/audit-events/parquet');
      const jsonDir = join(demo.cwd, 'data/demo/audit-events/json');
      const deadline = Date.now() + WITHIN_MS;
      while (filesIn(parquetDir, '.parquet').length === 0 || filesIn(jsonDir, '.json').length === 0) {
        if (Date.now() > deadline) throw new Error(`no audit files within ${WITHIN_MS} ms:\n${demo.output()}`);
        await sleep(250);
      }
      expect(await demo.stop()).toBe(0);
      const output = demo.output();
      // The last progress line counts the answers of the audit API: all 202.
      const answered = [...output.matchAll(/audit events (\d+) posted \(([^)]*)\)/g)].at(-1);
      expect(answered?.[2], output).toBe(`${answered?.[1] ?? ''}×202`);
      const sent = Number(/and (\d+) audit events\n/.exec(output)?.[1]);
      expect(sent).toBeGreaterThan(0);
      const ids = await parquetEventIds(parquetDir);
      expect(new Set(ids).size).toBe(ids.length);
      // Every 202 is stored; one more may be the request in flight when the demo stopped.
      expect(ids.length).toBeGreaterThanOrEqual(sent);
      expect(ids.length).toBeLessThanOrEqual(sent + 1);
      expect(output).toMatch(
        /svc demo: stopped; the simulator answered \d+ health, \d+ session and \d+ app-list requests/,
      );
      expect(existsSync(join(demo.cwd, 'data/demo/queue'))).toBe(true);
    },
    WITHIN_MS + 30_000,
  );
});
