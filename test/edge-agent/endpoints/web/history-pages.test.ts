/**
 * The history pages (/servers, /logs, /users, /performance, /audit) in headless Chromium against the
 * real web view and its real read API (/api/v1/) on a store file filled by the history generator
 * (edge-agent/simulate/history.ts: 3 days of 3 servers ending at the run's now), and on a store that
 * does not exist yet. Per page: the charts draw (uPlot canvases, the series count), the table rows are
 * the store's rows (read here with node:sqlite), filters narrow the rows and go into the URL and the
 * requests, a row opens its whole event, the range buttons change the requests, links carry the
 * range, an API error is shown as text, "no data yet" on the empty store, no console error (a CSP
 * violation is one) and no horizontal scroll at 1366×768 and 1280×720. Screenshots go to
 * test-output/screenshots/history/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateHistory, historyServerName } from '../../../../edge-agent/simulate/history.js';
import { attributes, chromiumPath, launchChromium, NO_CHROMIUM, screenshotDir } from '../../../support/chromium.js';
import {
  expectNoSideScroll,
  lastRequest,
  loaded,
  navigateBy,
  type Opened,
  openPage,
  screenshot as screenshotTo,
} from './page-browser.js';
import { type StoreWebView, startStoreWebView } from './store-web-view.js';

const CHROMIUM = chromiumPath();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SERVERS = 3;

let dir: string;
let now: number;
let full: StoreWebView;
let empty: StoreWebView;
let store: DatabaseSync;
let browser: Browser;
let shots: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), 'svc-history-pages-'));
  shots = screenshotDir('history');
  now = Date.now();
  const path = join(dir, 'full.db');
  generateHistory({ path, now, days: 3, servers: SERVERS, seed: 11 });
  store = new DatabaseSync(path, { readOnly: true });
  full = await startStoreWebView(path);
  // A store file that does not exist yet: Svc has just started.
  empty = await startStoreWebView(join(dir, 'missing', 'svc.db'));
  browser = await launchChromium(CHROMIUM);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await full?.stop();
  await empty?.stop();
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function open(web: StoreWebView, path: string, viewport = { width: 1366, height: 768 }): Promise<Opened> {
  return openPage(browser, web, path, viewport);
}

function screenshot(opened: Opened, name: string): Promise<void> {
  return screenshotTo(browser, opened, join(shots, `${name}.png`));
}

/** Follows a link (a new page load), and waits for the new page's first render. */
async function follow(page: Page, action: () => Promise<void>): Promise<void> {
  const before = page.url();
  await action();
  await page.waitForURL((url) => url.toString() !== before);
  await loaded(page);
}

function param(url: URL, name: string): string | null {
  return url.searchParams.get(name);
}

function rows<T>(sql: string, ...params: (string | number)[]): T[] {
  // node:sqlite answers plain objects; each caller names the columns it selects.
  return store.prepare(sql).all(...params) as T[];
}

/**
 * The ids of the newest 100 events of `table` whose `column` is `value`, within the range `request`
 * asked for (the page's now, not the test's).
 */
function newestIn(
  request: URL,
  table: 'user_events' | 'log_events',
  column: 'user_full' | 'app_id',
  value: string,
): string[] {
  return rows<{ id: string }>(
    `SELECT CAST(time_ns AS TEXT) AS id FROM ${table} WHERE ${column} = ? AND time_ns >= ? AND time_ns <= ? ORDER BY time_ns DESC LIMIT 100`,
    value,
    Date.parse(param(request, 'from') ?? '') * 1_000_000,
    (Date.parse(param(request, 'to') ?? '') + 1) * 1_000_000,
  ).map((r) => r.id);
}

describe.skipIf(!CHROMIUM)(`history pages in headless Chromium${CHROMIUM ? '' : ` (skipped: ${NO_CHROMIUM})`}`, () => {
  it('Servers: the latest values of every server, six charts with a line per server, zoom puts the range into the URL, links carry it', async () => {
    const opened = await open(full, '/servers?range=24h');
    const { page, requests } = opened;
    const names = Array.from({ length: SERVERS }, (_, i) => historyServerName(i));
    expect(await attributes(page.locator('#latest tbody tr'), 'data-id')).toEqual(names);
    expect(await page.locator('#charts .uplot canvas').count()).toBe(6);
    expect(await attributes(page.locator('#charts .chart'), 'data-series')).toEqual(Array(6).fill(String(SERVERS)));
    for (const name of names) expect(String(lastRequest(requests, `servers/${name}/health`))).toContain('from=');
    const health = lastRequest(requests, `servers/${names[0]}/health`);
    expect(Date.parse(param(health, 'to') ?? '') - Date.parse(param(health, 'from') ?? '')).toBe(DAY);
    await screenshot(opened, 'servers');

    const link = page.locator('#latest tbody tr[data-id="node1"] a', { hasText: 'log events' });
    expect(await link.getAttribute('href')).toBe('/logs?range=24h&server=node1');

    // Drag across the CPU chart: the page shows that range, from the URL.
    const over = page.locator('#charts .uplot .u-over').first();
    const box = await over.boundingBox();
    if (!box) throw new Error('the chart has no box');
    await navigateBy(page, async () => {
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
    });
    const url = new URL(page.url());
    const [from, to] = [Date.parse(url.searchParams.get('from') ?? ''), Date.parse(url.searchParams.get('to') ?? '')];
    expect(url.searchParams.get('range')).toBeNull();
    expect(to - from).toBeGreaterThan(3 * HOUR);
    expect(to - from).toBeLessThan(9 * HOUR);
    const zoomed = lastRequest(requests, `servers/${names[0]}/health`);
    expect(Date.parse(param(zoomed, 'from') ?? '')).toBe(from);
    expect(await page.locator('#range button[aria-pressed="true"]').textContent()).toBe('Show');
    expect(
      await page.locator('#latest tbody tr[data-id="node1"] a', { hasText: 'sessions' }).getAttribute('href'),
    ).toBe(
      `/users?from=${encodeURIComponent(url.searchParams.get('from') ?? '')}&to=${encodeURIComponent(url.searchParams.get('to') ?? '')}&server=node1`,
    );
    opened.noErrors();
  }, 60_000);

  it('Log events: the rows are the store’s newest, a level filter narrows them (URL and request), a row opens its event, Older pages on, counts link to a level', async () => {
    const opened = await open(full, '/logs');
    const { page, requests } = opened;
    const from = now - DAY;
    const newest = rows<{ id: string }>(
      'SELECT CAST(time_ns AS TEXT) AS id FROM log_events WHERE time_ns >= ? ORDER BY time_ns DESC LIMIT 100',
      from * 1_000_000,
    ).map((r) => r.id);
    expect(newest.length).toBe(100);
    const shown = () => attributes(page.locator('#events tbody tr'), 'data-id');
    expect(await shown()).toEqual(newest);
    expect(await page.locator('#counts .uplot canvas').count()).toBe(2);
    await screenshot(opened, 'logs');

    // The whole event of the first row.
    // On its time: other cells hold links.
    await page.locator('#events tbody tr td').first().click();
    const dialog = page.locator('dialog#details');
    await dialog.waitFor({ state: 'visible' });
    const [message] = rows<{ message: string }>('SELECT message FROM log_events WHERE time_ns = ?', newest[0] ?? '');
    const keys = await dialog.locator('dt').allTextContents();
    expect(keys).toContain('message');
    expect(await dialog.locator('dd').allTextContents()).toContain(message?.message);
    await dialog.locator('button.close').click();
    await dialog.waitFor({ state: 'hidden' });

    // Older: the next 100, after the first.
    await page.locator('#events button.older').click();
    await expect.poll(() => page.locator('#events tbody tr').count()).toBe(200);
    const older = rows<{ id: string }>(
      'SELECT CAST(time_ns AS TEXT) AS id FROM log_events WHERE time_ns >= ? ORDER BY time_ns DESC LIMIT 100 OFFSET 100',
      from * 1_000_000,
    ).map((r) => r.id);
    expect((await shown()).slice(100)).toEqual(older);

    // Level ERROR: the URL, the request and the rows.
    await page.locator('#filters select[name="level"]').selectOption('ERROR');
    await navigateBy(page, () => page.locator('#filters button[type="submit"]').click());
    expect(new URL(page.url()).searchParams.get('level')).toBe('ERROR');
    expect(param(lastRequest(requests, 'log-events'), 'level')).toBe('ERROR');
    const errors = rows<{ id: string }>(
      "SELECT CAST(time_ns AS TEXT) AS id FROM log_events WHERE time_ns >= ? AND level = 'ERROR' ORDER BY time_ns DESC LIMIT 100",
      from * 1_000_000,
    ).map((r) => r.id);
    expect(errors.length).toBeGreaterThan(0);
    expect(await shown()).toEqual(errors);
    expect(new Set(await page.locator('#events tbody td .level').allTextContents())).toEqual(new Set(['ERROR']));

    // The level totals link to the log events of that level, with the range.
    expect(await page.locator('#counts .totals a', { hasText: 'ERROR' }).getAttribute('href')).toBe(
      '/logs?level=ERROR',
    );
    opened.noErrors();
  }, 60_000);

  it('Log events: the range buttons change the requests, free text finds by a word, a bad parameter is shown as the API’s message', async () => {
    const opened = await open(full, '/logs?range=1h');
    const { page, requests } = opened;
    const first = lastRequest(requests, 'log-events');
    expect(Date.parse(param(first, 'to') ?? '') - Date.parse(param(first, 'from') ?? '')).toBe(HOUR);
    await navigateBy(page, () => page.locator('#range button[data-range="7d"]').click());
    expect(new URL(page.url()).searchParams.get('range')).toBe('7d');
    const week = lastRequest(requests, 'log-events');
    expect(Date.parse(param(week, 'to') ?? '') - Date.parse(param(week, 'from') ?? '')).toBe(7 * DAY);
    for (const by of ['level', 'category'])
      expect(
        param(requests.filter((u) => u.pathname.endsWith('/counts') && param(u, 'by') === by).at(-1) ?? week, 'from'),
      ).toBe(param(week, 'from'));

    // Back returns to the last hour; a custom range (the browser's local time) goes into the URL and the request.
    await navigateBy(page, async () => {
      await page.goBack();
    });
    expect(new URL(page.url()).searchParams.get('range')).toBe('1h');
    const back = lastRequest(requests, 'log-events');
    expect(Date.parse(param(back, 'to') ?? '') - Date.parse(param(back, 'from') ?? '')).toBe(HOUR);
    const minute = 60_000;
    const [from, to] = [now - 3 * DAY, now - 2 * DAY].map((ms) => Math.floor(ms / minute) * minute);
    // A datetime-local field's text: local time to the minute (the browser runs on this machine's time zone).
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * minute).toISOString().slice(0, 16);
    await page.locator('#range input[name="from"]').fill(local(from ?? 0));
    await page.locator('#range input[name="to"]').fill(local(to ?? 0));
    await navigateBy(page, () => page.locator('#custom-apply').click());
    const custom = lastRequest(requests, 'log-events');
    expect([param(custom, 'from'), param(custom, 'to')]).toEqual([
      new Date(from ?? 0).toISOString(),
      new Date(to ?? 0).toISOString(),
    ]);
    expect(new URL(page.url()).searchParams.get('from')).toBe(param(custom, 'from'));
    expect(await page.locator('#shown').textContent()).toContain('not live');

    // A word of the newest message: every row shown has it.
    const [newest] = rows<{ message: string }>('SELECT message FROM log_events ORDER BY time_ns DESC LIMIT 1');
    const word = (newest?.message ?? '').split(/\W+/).find((w) => w.length > 4) ?? '';
    expect(word).not.toBe('');
    await page.locator('#filters input[name="q"]').fill(word);
    await navigateBy(page, () => page.locator('#filters button[type="submit"]').click());
    expect(param(lastRequest(requests, 'log-events'), 'q')).toBe(word);
    // Every row shown has the word in its message or its exception (the store's, by the row's id).
    const ids = await attributes(page.locator('#events tbody tr'), 'data-id');
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) {
      const [text] = rows<{ text: string }>(
        "SELECT message || ' ' || exception AS text FROM log_events WHERE time_ns = ?",
        id ?? '',
      );
      expect(text?.text.toLowerCase(), `event ${id}`).toContain(word.toLowerCase());
    }
    opened.noErrors();

    // A source the API does not know: its 400 is shown, naming the parameter.
    const bad = await open(full, '/logs?source=mainframe');
    const error = bad.page.locator('#error');
    expect(await error.isVisible()).toBe(true);
    expect(await error.textContent()).toContain('source');
  }, 60_000);

  it('Users: sessions per virtual proxy, who was on when, and a user’s session starts and stops', async () => {
    const opened = await open(full, '/users?range=24h');
    const { page, requests } = opened;
    expect(await page.locator('#sessions .uplot canvas').count()).toBe(1);
    expect(await page.locator('#sessions .chart').getAttribute('data-series')).toBe(String(SERVERS * 2));
    const users = await attributes(page.locator('#presence .timeline-row[data-user]'), 'data-user');
    expect(users.length).toBeGreaterThan(0);
    expect(await page.locator('#presence .run').count()).toBeGreaterThanOrEqual(users.length);
    await screenshot(opened, 'users');

    const user = users[0] ?? '';
    await follow(page, () => page.locator('#presence .timeline-row[data-user] a').first().click());
    expect(new URL(page.url()).searchParams.get('user')).toBe(user);
    expect(new URL(page.url()).searchParams.get('range')).toBe('24h');
    const request = lastRequest(requests, 'user-events');
    expect(param(request, 'user')).toBe(user);
    const expected = newestIn(request, 'user_events', 'user_full', user);
    expect(expected.length).toBeGreaterThan(0);
    expect(await attributes(page.locator('#user-events tbody tr'), 'data-id')).toEqual(expected);
    expect(new Set(await page.locator('#user-events tbody td:nth-child(3)').allTextContents())).toEqual(
      new Set(['Start session', 'Stop session']),
    );
    opened.noErrors();
  }, 60_000);

  it('Performance: the top apps by total are the store’s, the by and order switches change the request, an app links to its log and audit events', async () => {
    const opened = await open(full, '/performance?range=7d');
    const { page, requests } = opened;
    const top = rows<{ app: string }>(
      'SELECT app_id AS app FROM perf_hourly WHERE hour_ms >= ? GROUP BY app_id ORDER BY SUM(total_ms) DESC',
      now - 7 * DAY - HOUR,
    ).map((r) => r.app);
    const shown = await attributes(page.locator('#top tbody tr'), 'data-id');
    expect(shown.slice(0, 3)).toEqual(top.slice(0, 3));
    expect(await page.locator('#top tbody tr').first().locator('.users a').count()).toBeGreaterThan(0);
    await screenshot(opened, 'performance');
    expect(
      await page.locator('#top tbody tr').first().locator('a', { hasText: 'log events' }).getAttribute('href'),
    ).toBe(`/logs?range=7d&app=${encodeURIComponent(top[0] ?? '')}`);

    await navigateBy(page, () => page.locator('#top button[data-by="object"]').click());
    await navigateBy(page, () => page.locator('#top button[data-order="p95"]').click());
    const request = lastRequest(requests, 'performance/top');
    expect([param(request, 'by'), param(request, 'order')]).toEqual(['object', 'p95']);
    expect(new URL(page.url()).search).toBe('?range=7d&by=object&order=p95');
    expect(await page.locator('#top thead th').allTextContents()).toContain('object');
    opened.noErrors();
  }, 60_000);

  it('Performance → Log events: an app’s link shows the log events of that app over the same range', async () => {
    const opened = await open(full, '/performance?range=7d');
    const { page, requests } = opened;
    const app = (await attributes(page.locator('#top tbody tr'), 'data-id'))[0] ?? '';
    await follow(page, () => page.locator('#top tbody tr').first().locator('a', { hasText: 'log events' }).click());
    expect(new URL(page.url()).pathname).toBe('/logs');
    const request = lastRequest(requests, 'log-events');
    expect([
      param(request, 'app'),
      Date.parse(param(request, 'to') ?? '') - Date.parse(param(request, 'from') ?? ''),
    ]).toEqual([app, 7 * DAY]);
    const expected = newestIn(request, 'log_events', 'app_id', app);
    expect(expected.length).toBeGreaterThan(0);
    expect(await attributes(page.locator('#events tbody tr'), 'data-id')).toEqual(expected);
    expect(await page.locator('#filters input[name="app"]').inputValue()).toBe(app);
    expect(await page.locator('#error').isVisible()).toBe(false);
    opened.noErrors();
  }, 60_000);

  it('Audit: four count charts and the events table of the store; a row opens its envelope; a filter narrows', async () => {
    const opened = await open(full, '/audit?range=24h');
    const { page, requests } = opened;
    expect(await page.locator('#counts .uplot canvas').count()).toBe(4);
    const newest = rows<{ id: string; type: string }>(
      'SELECT id, type FROM audit_events WHERE time_ms >= ? ORDER BY time_ms DESC, id DESC LIMIT 100',
      now - DAY,
    );
    const shown = () => attributes(page.locator('#events tbody tr'), 'data-id');
    expect(new Set(await shown())).toEqual(new Set(newest.map((r) => r.id)));
    await screenshot(opened, 'audit');

    // On its time: other cells hold links.
    await page.locator('#events tbody tr td').first().click();
    await page.locator('dialog#details').waitFor({ state: 'visible' });
    expect((await page.locator('dialog#details dt').allTextContents()).length).toBeGreaterThan(2);
    await page.locator('dialog#details button.close').click();

    const type = newest[0]?.type ?? '';
    await page.locator('#filters input[name="type"]').fill(type);
    await navigateBy(page, () => page.locator('#filters button[type="submit"]').click());
    expect(param(lastRequest(requests, 'audit-events'), 'type')).toBe(type);
    expect(new Set(await page.locator('#events tbody td:nth-child(2)').allTextContents())).toEqual(new Set([type]));
    opened.noErrors();
  }, 60_000);

  it('says "no data yet" on every page while the store is empty, with no chart and no table', async () => {
    for (const name of ['servers', 'logs', 'users', 'performance', 'audit']) {
      const opened = await open(empty, `/${name}`);
      expect(await opened.page.locator('.no-data').count(), name).toBeGreaterThan(0);
      expect(await opened.page.locator('canvas').count(), name).toBe(0);
      expect(await opened.page.locator('table').count(), name).toBe(0);
      expect(await opened.page.locator('#error').isVisible(), name).toBe(false);
      if (name === 'logs') await screenshot(opened, 'logs-empty');
      opened.noErrors();
    }
  }, 60_000);

  it('fits a 1280×720 screen: wide tables scroll inside their box, not the page', async () => {
    for (const name of ['servers', 'logs', 'users', 'performance', 'audit']) {
      const opened = await open(full, `/${name}?range=30d`, { width: 1280, height: 720 });
      await expectNoSideScroll(opened.page);
      if (name === 'logs') await screenshot(opened, 'logs-1280x720');
      opened.noErrors();
    }
  }, 60_000);

  it('refreshes while the range ends at now, keeping the scroll and an open event', async () => {
    const opened = await open(full, '/logs?range=24h');
    const { page } = opened;
    await page.evaluate('window.scrollTo(0, 400)');
    await page.locator('#events tbody tr').nth(5).locator('td').first().click();
    await loaded(page, 2);
    expect(await page.evaluate('window.scrollY')).toBe(400);
    expect(await page.locator('dialog#details').isVisible()).toBe(true);
    // A past range is not live: no second render.
    const past = await open(
      full,
      `/logs?from=${new Date(now - 2 * DAY).toISOString()}&to=${new Date(now - DAY).toISOString()}`,
    );
    expect(await past.page.locator('#shown').textContent()).toContain('not live');
    opened.noErrors();
  }, 60_000);
});
