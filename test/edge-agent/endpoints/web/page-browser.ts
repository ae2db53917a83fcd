/**
 * Opening the web view's pages in headless Chromium for the browser tests (history-pages.test.ts,
 * alerts-page.test.ts): a page that records its API requests and fails the test on a console error,
 * waiting for history.js's renders, the no-sideways-scroll check and screenshots.
 */
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { pngColours } from '../../../support/chromium.js';
import type { StoreWebView } from './store-web-view.js';

export interface Opened {
  page: Page;
  /** The API requests the page made, as URLs. */
  requests: URL[];
  /** Fails the test on a console error or an uncaught exception (a CSP violation is a console error). */
  noErrors: () => void;
}

/** Opens `path` of the web view in a new browser context, and waits for its first render. */
export async function openPage(
  browser: Browser,
  web: StoreWebView,
  path: string,
  viewport = { width: 1366, height: 768 },
): Promise<Opened> {
  web.nextMinute();
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: URL[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/v1/')) requests.push(url);
  });
  await page.goto(`${web.base}${path}`);
  await loaded(page);
  return { page, requests, noErrors: () => expect(errors, 'errors in the page').toEqual([]) };
}

/** Waits for the page's render after a navigation (history.js counts its renders). */
export async function loaded(page: Page, renders = 1): Promise<void> {
  // Polled with a script text: the test code has no DOM types (tsconfig lib ES2023), and waitForFunction
  // with a text would be an eval, which the page's CSP refuses.
  await expect
    .poll(() => page.evaluate('Number(document.body.dataset.renders ?? 0)'), { timeout: 20_000 })
    .toBeGreaterThanOrEqual(renders);
}

/** Does something that makes the page render again (a navigation inside it, a refresh), and waits for that render. */
export async function navigateBy(page: Page, action: () => Promise<void>): Promise<void> {
  const before = Number(await page.evaluate('document.body.dataset.renders ?? 0'));
  await action();
  await loaded(page, before + 1);
}

/** The last request of `/api/v1/<path>` the page made. */
export function lastRequest(requests: URL[], path: string): URL {
  const found = requests.filter((url) => url.pathname === `/api/v1/${path}`).at(-1);
  if (!found) throw new Error(`no request of /api/v1/${path} among ${requests.map(String).join(', ')}`);
  return found;
}

/** The page's width fits the window: no horizontal scroll of the page itself. */
export async function expectNoSideScroll(page: Page): Promise<void> {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
  const innerWidth = Number(await page.evaluate('window.innerWidth'));
  expect(scrollWidth, 'the page scrolls sideways').toBeLessThanOrEqual(innerWidth);
}

/** A screenshot of the window into `file`, which must fit the window and not be blank. */
export async function screenshot(browser: Browser, opened: Opened, file: string): Promise<void> {
  const png = await opened.page.screenshot({ path: file });
  await expectNoSideScroll(opened.page);
  // Decoded on another page: pngColours leaves the page it is given.
  const scratch = await browser.newPage();
  const colours = await pngColours(scratch, png);
  await scratch.close();
  expect(colours.distinct, `${file}: distinct colours`).toBeGreaterThan(50);
}
