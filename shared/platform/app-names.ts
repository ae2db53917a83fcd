/**
 * The AppNameLookup port (platform-formats.md §1.4, §2.2): app id → app name from the platform's app
 * list. The app-name poller fills it; until a list is loaded (or when extraction is off) every
 * name is unknown.
 */
export interface AppNameLookup {
  /** The app's name, or undefined when the id is not in the loaded list or no list is loaded. */
  nameOf(appId: string): string | undefined;
}

/** §1.4: what a user event's `appName` is when the list does not know the id. */
export const UNKNOWN_APP_NAME = '<unknown app name>';

/** A lookup that knows no app: used until the app list is loaded, and when extraction is off. */
export const NO_APP_NAMES: AppNameLookup = { nameOf: () => undefined };

/** A lookup over a loaded list; `replace` swaps the list atomically (the poller's refresh). */
export class AppNameList implements AppNameLookup {
  private names = new Map<string, string>();
  private everLoaded = false;

  replace(apps: Iterable<{ id: string; name: string }>): void {
    const next = new Map<string, string>();
    for (const app of apps) next.set(app.id.toLowerCase(), app.name);
    this.names = next;
    this.everLoaded = true;
  }

  /** Whether a list has been loaded (a platform without apps loads an empty one). */
  get loaded(): boolean {
    return this.everLoaded;
  }

  get size(): number {
    return this.names.size;
  }

  nameOf(appId: string): string | undefined {
    return this.names.get(appId.toLowerCase());
  }
}
