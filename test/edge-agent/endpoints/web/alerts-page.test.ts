/**
 * The Alerts page (/alerts) in headless Chromium against the real web view, its real alerts API and
 * a real store file holding alert state written by the real SqliteAlertStore: two alerts firing and
 * one pending, one of them covered by a silence, and a history long enough to page. Checks: the
 * alerts shown firing first with their server and link, "silenced by"; a silence made through the
 * form (filled by an alert's "Silence" action) covers the alert and is in the store; "Expire" ends it
 * in the store; the history pages with "Older" and filters by rule; the form's 400 shows the API's
 * message next to the form and keeps the input; an API error is shown as text; alerts off say so
 * and name the settings (and the status page's alerts part says why in one line). Screenshots go to
 * test-output/screenshots/alerts/ (alerts.png, at 1366×768, is docs/images/pages-alerts.png).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertRecord, HistoryEntry } from '../../../../shared/alerts/model.js';
import { openAlertStore, type SqliteAlertStore } from '../../../../shared/alerts/store.js';
import { alertRecord } from '../../../shared/alerts/fixtures.js';
import { attributes, chromiumPath, launchChromium, NO_CHROMIUM, screenshotDir } from '../../../support/chromium.js';
import { observedAlertsOf } from '../../../support/observed-alerts.js';
import { expectNoSideScroll, lastRequest, navigateBy, type Opened, openPage, screenshot } from './page-browser.js';
import { type StoreWebView, startStoreWebView } from './store-web-view.js';

const CHROMIUM = chromiumPath();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** History rows written besides those of the alerts' firing: more than a page of 100. */
const HISTORY_ROWS = 150;
/** In the channels' URLs: never shown. */
const CHANNEL_KEY = 'MARKER-CHANNEL-KEY';
const RULE_ERROR = 'summary: the series have no label {{app}}';
const CHANNEL_ERROR = 'http_5xx: HTTP 502 after 4 tries';

let dir: string;
let now: number;
let path: string;
let store: SqliteAlertStore;
let on: StoreWebView;
let off: StoreWebView;
let browser: Browser;
let silenceOnNode2: string;
/** test-output/screenshots/alerts/. */
let shots: string;

const central = () => alertRecord('sense-central', now - 20 * MINUTE);
const node2 = () => alertRecord('sense-node2', now - 10 * MINUTE);
const node3 = () => alertRecord('sense-node3', now - MINUTE, 'pending');

beforeAll(async () => {
  if (!CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), 'svc-alerts-page-'));
  shots = screenshotDir('alerts');
  now = Date.now();
  path = join(dir, 'svc.db');
  store = openAlertStore(path);
  const firing: AlertRecord[] = [central(), node2()];
  // Older history first: rows of two rules, one every minute back from an hour ago.
  const older: Omit<HistoryEntry, 'id'>[] = Array.from({ length: HISTORY_ROWS }, (_, i) => {
    const rule = i % 3 === 0 ? 'udpDatagramsDropped' : 'serverDown';
    return {
      at: now - HOUR - (HISTORY_ROWS - i) * MINUTE,
      fingerprint: `history-${i % 5}`,
      rule,
      severity: rule === 'serverDown' ? 'critical' : 'warning',
      labels: { alertname: rule, severity: 'critical', server: `sense-node${i % 5}` },
      event: (['fired', 'notified', 'resolved'] as const)[i % 3] ?? 'fired',
      value: i,
      channel: i % 3 === 1 ? 'ops' : null,
      detail: null,
    };
  });
  store.record(older);
  store.applyTransitions({ at: now - 8 * MINUTE, active: [...firing, node3()], fired: firing, resolved: [] });
  silenceOnNode2 = store.addSilence({
    rule: 'serverDown',
    matchers: { server: 'sense-node2' },
    startsAt: now - 5 * MINUTE,
    endsAt: now + HOUR,
    createdBy: 'anna',
    comment: 'patching node2',
  }).id;
  on = await startAlertsWebView(path, true);
  off = await startAlertsWebView(join(dir, 'off.db'), false);
  browser = await launchChromium(CHROMIUM);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await on?.stop();
  await off?.stop();
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The web view with alerts on over the store at `path`, or off. The engine is h-eval's and not under
 * test here: its place is taken by the store's ObservedAlerts (test/support/observed-alerts.ts), with
 * the last evaluations and the channels' counts an engine would report.
 */
function startAlertsWebView(at: string, alertsOn: boolean): Promise<StoreWebView> {
  if (!alertsOn) return startStoreWebView(at);
  return startStoreWebView(at, {
    config: [
      '  alerts:',
      '    enable: true',
      `    channels: [{name: ops, type: webhook, url: "https://hooks.example.com/${CHANNEL_KEY}"}, {name: oncall, type: slack, url: "https://hooks.slack.com/services/${CHANNEL_KEY}"}]`,
    ],
    alerts: (config) => {
      const engine = observedAlertsOf(store, config.alerts);
      return {
        ...engine,
        rules: () =>
          engine.rules().map((rule, i) => ({
            ...rule,
            lastEvaluation: {
              at: Date.now() - 4_000,
              durationMs: 1,
              series: 3,
              pending: rule.name === 'serverDown' ? 1 : 0,
              firing: rule.name === 'serverDown' ? 2 : 0,
              error: i === 1 ? RULE_ERROR : null,
            },
          })),
        channels: () =>
          engine.channels().map((channel, i) => ({
            ...channel,
            sent: 12 - 9 * i,
            failed: 2 * i,
            lastError: i === 1 ? CHANNEL_ERROR : null,
            failing: i === 1,
          })),
      };
    },
  });
}

const open = (web: StoreWebView, at: string): Promise<Opened> => openPage(browser, web, at);

describe.skipIf(!CHROMIUM)(
  `the Alerts page in headless Chromium${CHROMIUM ? '' : ` (skipped: ${NO_CHROMIUM})`}`,
  () => {
    it('lists what fires, then what is pending, with server, link and "silenced by"; marked in the nav; the screenshot', async () => {
      const opened = await open(on, '/alerts');
      const { page } = opened;
      const rows = page.locator('#active tbody tr');
      // Firing first, the most recent first (the API's order), then pending.
      expect(await attributes(rows, 'id')).toEqual([node2(), central(), node3()].map((a) => a.fingerprint));
      expect(await rows.locator('td:nth-child(1)').allTextContents()).toEqual(['firing', 'firing', 'pending']);
      expect(await rows.locator('td:nth-child(4)').allTextContents()).toEqual([
        'sense-node2',
        'sense-central',
        'sense-node3',
      ]);
      expect(await attributes(rows.locator('a', { hasText: 'Show' }), 'href')).toEqual([
        '/servers?server=sense-node2',
        '/servers?server=sense-central',
        '/servers?server=sense-node3',
      ]);
      expect(await rows.nth(0).textContent()).toContain(`silenced by ${silenceOnNode2}`);
      expect(await rows.nth(1).textContent()).not.toContain('silenced by');
      expect(await page.locator('header nav a[aria-current="page"]').textContent()).toBe('Alerts');
      // The silence is listed as active, with who made it and why.
      const silence = page.locator(`#silences tbody tr[data-id="${silenceOnNode2}"]`);
      expect(await silence.textContent()).toContain('patching node2');
      expect(await silence.locator('button', { hasText: 'Expire' }).count()).toBe(1);
      // Each rule with its last evaluation and its error; each channel with its counts, masked.
      const rule = page.locator('#rules tbody tr[data-id="serverDown"]');
      expect(await rule.locator('td').allTextContents()).toEqual(
        expect.arrayContaining(['serverDown', 'built in', '3', '1', '2']),
      );
      expect(await page.locator('#rules tbody').textContent()).toContain(RULE_ERROR);
      const channels = page.locator('#channels tbody tr');
      expect(await attributes(channels, 'data-id')).toEqual(['ops', 'oncall']);
      expect(await channels.nth(1).textContent()).toContain(CHANNEL_ERROR);
      // Whether its last notification went through: ops delivers, oncall's last one failed.
      expect(await channels.locator('td .state').allTextContents()).toEqual(['delivering', 'failing']);
      expect(await page.locator('body').textContent()).not.toContain(CHANNEL_KEY);
      await screenshot(browser, opened, join(shots, 'alerts.png'));
      // The silences, the rules and the channels, below the history.
      await page.locator('#silences').scrollIntoViewIfNeeded();
      await screenshot(browser, opened, join(shots, 'silences-rules-channels.png'));
      await page.locator('#channels').scrollIntoViewIfNeeded();
      await screenshot(browser, opened, join(shots, 'channels.png'));
      opened.noErrors();
    }, 60_000);

    it('the "Silence" action fills the form; the silence made covers the alert and is in the store; "Expire" ends it', async () => {
      const opened = await open(on, '/alerts');
      const { page } = opened;
      const row = page.locator(`#active tbody tr[id="${central().fingerprint}"]`);
      await row.locator('button', { hasText: 'Silence' }).click();
      const form = page.locator('#silence-form');
      expect(await form.locator('input[name="rule"]').inputValue()).toBe('serverDown');
      expect(await form.locator('input[name="matchers"]').inputValue()).toBe('server=sense-central');
      await form.locator('input[name="duration"]').fill('90m');
      await form.locator('input[name="comment"]').fill('moving the central node');
      await form.locator('input[name="createdBy"]').fill('bob');
      await navigateBy(page, () => form.locator('button[type="submit"]').click());
      const made = store
        .activeSilences(Date.now())
        .find((s) => s.createdBy === 'bob' && s.comment === 'moving the central node');
      if (!made) throw new Error('the store holds no silence made by the form');
      expect(made).toMatchObject({ rule: 'serverDown', matchers: { server: 'sense-central' }, expiredAt: null });
      expect(made.endsAt - made.startsAt).toBe(90 * MINUTE);
      expect(await page.locator('#silence-message').textContent()).toContain(`Silence ${made.id} made`);
      expect(await row.textContent()).toContain(`silenced by ${made.id}`);
      // The form is emptied for the next one but keeps the name.
      expect(await form.locator('input[name="comment"]').inputValue()).toBe('');
      expect(await form.locator('input[name="createdBy"]').inputValue()).toBe('bob');

      // What is typed in the form stays through a refresh (here the one that follows "Expire").
      await form.locator('input[name="comment"]').fill('half typed');
      await navigateBy(page, () =>
        page.locator(`#silences tbody tr[data-id="${made.id}"] button`, { hasText: 'Expire' }).click(),
      );
      const expired = store.silences(Date.now(), HOUR).find((s) => s.id === made.id);
      expect(expired?.expiredAt).not.toBeNull();
      expect(store.activeSilences(Date.now()).map((s) => s.id)).not.toContain(made.id);
      expect(await row.textContent()).not.toContain('silenced by');
      expect(await page.locator(`#silences tbody tr[data-id="${made.id}"]`).textContent()).toContain('expired');
      expect(await form.locator('input[name="comment"]').inputValue()).toBe('half typed');
      opened.noErrors();
    }, 60_000);

    it('a silence the API refuses: its message next to the form, the input kept, nothing stored', async () => {
      const opened = await open(on, '/alerts');
      const { page } = opened;
      const form = page.locator('#silence-form');
      const before = store.silences(Date.now(), HOUR).length;
      await form.locator('input[name="rule"]').fill('serverDown');
      await form.locator('input[name="duration"]').fill('soon');
      await form.locator('button[type="submit"]').click();
      const message = page.locator('#silence-message');
      await expect.poll(() => message.isVisible()).toBe(true);
      expect(await message.getAttribute('class')).toContain('bad');
      expect(await message.textContent()).toContain('duration');
      expect(await form.locator('input[name="duration"]').inputValue()).toBe('soon');
      expect(store.silences(Date.now(), HOUR).length).toBe(before);
      // Labels that are not key=value are refused before anything is sent.
      await form.locator('input[name="duration"]').fill('1h');
      await form.locator('input[name="matchers"]').fill('sense-node2');
      await form.locator('button[type="submit"]').click();
      expect(await message.textContent()).toContain('"sense-node2" is not key=value');
      // No noErrors(): Chromium logs the refused POST's 400 as a console error.
    }, 60_000);

    it("a notification's link, /alerts#<fingerprint>, marks its alert, or its history once it is not active", async () => {
      const firing = await open(on, `/alerts#${central().fingerprint}`);
      expect(await attributes(firing.page.locator('#active tr.target'), 'id')).toEqual([central().fingerprint]);
      firing.noErrors();
      const gone = await open(on, '/alerts#history-1');
      const marked = await attributes(gone.page.locator('#history tr.target'), 'data-id');
      const expected = store
        .history({ from: now - 24 * HOUR, to: Date.now(), limit: 100 })
        .filter((entry) => entry.fingerprint === 'history-1')
        .map((entry) => String(entry.id));
      expect(expected.length).toBeGreaterThan(0);
      expect(marked).toEqual(expected);
      gone.noErrors();
    }, 60_000);

    it('the history: newest first, 100 then "Older", a rule filter in the URL and the request', async () => {
      const opened = await open(on, '/alerts?range=24h');
      const { page, requests } = opened;
      const rows = page.locator('#history tbody tr');
      const all = store.history({ from: now - 24 * HOUR, to: Date.now(), limit: 1000 }).map((e) => String(e.id));
      expect(all.length).toBe(HISTORY_ROWS + 2);
      expect(await attributes(rows, 'data-id')).toEqual(all.slice(0, 100));
      await page.locator('#history button.older').click();
      await expect.poll(() => rows.count()).toBe(all.length);
      expect(await attributes(rows, 'data-id')).toEqual(all);
      expect(await page.locator('#history button.older').isHidden()).toBe(true);

      await page.locator('#filters input[name="rule"]').fill('udpDatagramsDropped');
      await navigateBy(page, () => page.locator('#filters button[type="submit"]').click());
      expect(new URL(page.url()).searchParams.get('rule')).toBe('udpDatagramsDropped');
      expect(lastRequest(requests, 'alerts/history').searchParams.get('rule')).toBe('udpDatagramsDropped');
      expect(new Set(await rows.locator('td:nth-child(3)').allTextContents())).toEqual(
        new Set(['udpDatagramsDropped']),
      );
      expect(await rows.count()).toBe(HISTORY_ROWS / 3);
      opened.noErrors();
    }, 60_000);

    it('an API error is shown as text, naming the parameter', async () => {
      const opened = await open(on, `/alerts?from=2001-01-01T00:00:00Z&to=${new Date(now).toISOString()}`);
      const error = opened.page.locator('#error');
      expect(await error.isVisible()).toBe(true);
      expect(await error.textContent()).toMatch(/^alerts\/history: .*\(parameter (from|to)\)/);
    }, 60_000);

    it('alerts off: the page says so and names Svc.alerts.enable and Svc.store.enable', async () => {
      const opened = await open(off, '/alerts');
      const { page } = opened;
      const notice = page.locator('#disabled');
      expect(await notice.isVisible()).toBe(true);
      const text = (await notice.textContent()) ?? '';
      expect(text).toContain('Alerts are off.');
      for (const setting of ['Svc.alerts.enable', 'Svc.store.enable']) expect(text).toContain(setting);
      for (const id of ['active', 'history', 'silences', 'rules', 'channels'])
        expect(await page.locator(`#${id}`).isHidden(), id).toBe(true);
      await page.screenshot({ path: join(shots, 'off.png') });
      opened.noErrors();

      // The store off: the whole API answers 404 saying so, and the page says why alerts are off.
      const noStore = await startStoreWebView(join(dir, 'no-store.db'), { storeEnable: false });
      try {
        const without = await open(noStore, '/alerts');
        const why = (await without.page.locator('#disabled').textContent()) ?? '';
        expect(why).toContain('Alerts are off.');
        expect(why).toContain('(alerts: the store is off (Svc.store.enable: false)');
        expect(await without.page.locator('#error').isHidden()).toBe(true);
        // The status page's alerts part says the same in one line, not as an error.
        const status = await open(noStore, '/status');
        expect(await status.page.locator('#alerts').textContent()).toBe(
          'alerts are off: they keep their state in the embedded store, and Svc.store.enable is false',
        );
        expect(await status.page.locator('#alerts .empty').count()).toBe(1);
        status.noErrors();
      } finally {
        await noStore.stop();
      }
    }, 60_000);

    it('fits a 1280×720 screen: the wide tables scroll inside their box, not the page', async () => {
      const opened = await openPage(browser, on, '/alerts', { width: 1280, height: 720 });
      await expectNoSideScroll(opened.page);
      opened.noErrors();
    }, 60_000);
  },
);
