/**
 * Headless Chromium for browser tests, driven by playwright-core (no browser download: the system's
 * Chromium, which scripts/ensure-system-packages.sh installs). CHROMIUM_PATH names another one.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { REPO_ROOT } from './build.js';
import { findExecutable } from './ports.js';

/** The Chromium executable, or null when none is installed (the test is then skipped with the reason). */
export function chromiumPath(): string | null {
  const fromEnv = process.env['CHROMIUM_PATH'];
  if (fromEnv) return fromEnv;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    try {
      return findExecutable(name, ['/usr/bin', '/usr/local/bin', '/snap/bin']);
    } catch {
      // try the next name
    }
  }
  return null;
}

export const NO_CHROMIUM =
  'no Chromium found (install the Debian package `chromium`: scripts/ensure-system-packages.sh, or set CHROMIUM_PATH)';

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** The folder for screenshots (gitignored): test-output/screenshots/<name>/. */
export function screenshotDir(name: string): string {
  const dir = join(REPO_ROOT, 'test-output', 'screenshots', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const ColoursSchema = Type.Object({
  distinct: Type.Integer(),
  topShare: Type.Number(),
  width: Type.Integer(),
  height: Type.Integer(),
});
type Colours = Static<typeof ColoursSchema>;

/**
 * The distinct colours of a PNG and the share of its most common colour, decoded by the browser
 * (a canvas on a blank page): a blank or single-colour screenshot has one colour and a share near 1.
 */
export async function pngColours(page: Page, png: Buffer): Promise<Colours> {
  await page.goto('about:blank');
  // A script text: the test code has no DOM types (tsconfig lib ES2023); the answer is checked below.
  const answer: unknown = await page.evaluate(`(async () => {
    const image = new Image();
    image.src = 'data:image/png;base64,${png.toString('base64')}';
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const counts = new Map();
    for (let i = 0; i < pixels.length; i += 4) {
      const colour = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
      counts.set(colour, (counts.get(colour) ?? 0) + 1);
    }
    let top = 0;
    for (const n of counts.values()) top = Math.max(top, n);
    return { distinct: counts.size, topShare: top / (pixels.length / 4), width: canvas.width, height: canvas.height };
  })()`);
  if (!Value.Check(ColoursSchema, answer))
    throw new Error(`unexpected answer from the browser: ${JSON.stringify(answer)}`);
  return answer;
}

/** What the test reads of an element in the browser (the test code has no DOM types). */
interface Attributed {
  getAttribute(name: string): string | null;
}

/** An attribute of every element a locator finds, in order. */
export function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return locator.evaluateAll(
    (elements: Attributed[], attribute: string) => elements.map((e) => e.getAttribute(attribute)),
    name,
  );
}
