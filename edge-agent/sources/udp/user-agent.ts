/**
 * §1.5 user-agent attributes, parsed with bowser. Browsers repeat the same few user agents, so the
 * results are cached (bounded): parsing is the most expensive step of a user event.
 *
 * bowser (≈ 1 MB resident as an ES module) is loaded at the first user agent parsed, not at start:
 * only a user-events listener that receives events needs it. `require` (its CommonJS build, the
 * same version and parsers) because a datagram is parsed synchronously, within its batch.
 */
import { createRequire } from 'node:module';
import type Bowser from 'bowser';
import type { UserActivity } from '../../../shared/platform/events.js';

const require = createRequire(import.meta.url);
let bowser: typeof Bowser | undefined;
const loadBowser = (): typeof Bowser => (bowser ??= require('bowser') as typeof Bowser);

export type UaAttributes = Pick<UserActivity, 'uaBrowserName' | 'uaBrowserMajorVersion' | 'uaOsName' | 'uaOsVersion'>;

function parse(ua: string): UaAttributes {
  const parser = loadBowser().getParser(ua);
  const browser = parser.getBrowser();
  const os = parser.getOS();
  const out: UaAttributes = {};
  if (browser.name) out.uaBrowserName = browser.name;
  const major = /^\d+/.exec(browser.version ?? '')?.[0];
  if (major) out.uaBrowserMajorVersion = major;
  if (os.name) out.uaOsName = os.name;
  if (os.version) out.uaOsVersion = os.version;
  return out;
}

export class UserAgentParser {
  private readonly cache = new Map<string, UaAttributes>();

  constructor(private readonly maxEntries = 1000) {}

  /** The attributes of a non-empty user-agent text (§1.5); empty values are absent. */
  attributes(ua: string): UaAttributes {
    const hit = this.cache.get(ua);
    if (hit !== undefined) return hit;
    let result: UaAttributes;
    try {
      result = parse(ua);
    } catch {
      result = {};
    }
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(ua, result);
    return result;
  }
}
