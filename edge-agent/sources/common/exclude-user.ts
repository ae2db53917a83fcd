/**
 * User exclusion (platform-formats.md §0.5): `Svc.userEvents.excludeUser[]` and
 * `Svc.userSessions.excludeUser[]`. Pure: no I/O.
 */

/**
 * One `{directory, userId}` item. Structural, so both `SvcConfig['userEvents']['excludeUser']` and
 * `SvcConfig['userSessions']['excludeUser']` are accepted as they are.
 */
export interface ExcludedUser {
  directory: string;
  userId: string;
}

const fold = (text: string): string => text.toLowerCase();

/**
 * True when an item's directory and user id both equal the given ones, compared case-insensitively
 * (`toLowerCase`, locale-independent). An empty directory or user id never matches: list items are
 * non-empty.
 */
export function isExcluded(directory: string, userId: string, list: readonly ExcludedUser[]): boolean {
  if (directory === '' || userId === '') return false;
  const dir = fold(directory);
  const id = fold(userId);
  return list.some((item) => fold(item.directory) === dir && fold(item.userId) === id);
}

/**
 * The same test with the list folded once (for the hot path of a listener); equal to
 * `(d, u) => isExcluded(d, u, list)`.
 */
export function exclusionMatcher(list: readonly ExcludedUser[]): (directory: string, userId: string) => boolean {
  const keys = new Set(list.map((item) => JSON.stringify([fold(item.directory), fold(item.userId)])));
  return (directory, userId) =>
    directory !== '' && userId !== '' && keys.has(JSON.stringify([fold(directory), fold(userId)]));
}
