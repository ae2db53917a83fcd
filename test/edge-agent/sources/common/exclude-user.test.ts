/** User exclusion (platform-formats.md §0.5). */
import { describe, expect, it } from 'vitest';
import { type ExcludedUser, exclusionMatcher, isExcluded } from '../../../../edge-agent/sources/common/exclude-user.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';

const list: ExcludedUser[] = [
  { directory: 'INTERNAL', userId: 'sa_scheduler' },
  { directory: 'LAB', userId: 'Göran' },
];

const cases: [string, string, boolean][] = [
  ['INTERNAL', 'sa_scheduler', true],
  ['internal', 'SA_SCHEDULER', true],
  ['Internal', 'Sa_Scheduler', true],
  ['LAB', 'göran', true],
  ['lab', 'GÖRAN', true],
  ['INTERNAL', 'sa_repository', false],
  ['LAB', 'sa_scheduler', false],
  ['INTERNAL', 'Göran', false],
  ['INTERNAL ', 'sa_scheduler', false],
  ['INTERNAL', 'sa_schedule', false],
  ['', 'sa_scheduler', false],
  ['INTERNAL', '', false],
  ['', '', false],
];

describe('isExcluded', () => {
  it.each(cases)('(%j, %j) → %s', (directory, userId, expected) => {
    expect(isExcluded(directory, userId, list)).toBe(expected);
  });

  it('needs directory and user id of the same item', () => {
    expect(isExcluded('LAB', 'sa_scheduler', list)).toBe(false);
    expect(isExcluded('INTERNAL', 'göran', list)).toBe(false);
  });

  it('an empty list excludes nobody', () => {
    expect(isExcluded('INTERNAL', 'sa_scheduler', [])).toBe(false);
  });

  it('does not confuse a backslash in a value with the dir\\id separator', () => {
    expect(isExcluded('A\\B', 'C', [{ directory: 'A', userId: 'B\\C' }])).toBe(false);
    expect(exclusionMatcher([{ directory: 'A', userId: 'B\\C' }])('A\\B', 'C')).toBe(false);
  });

  it('takes both config lists as they are', () => {
    const userEvents: SvcConfig['userEvents']['excludeUser'] = [{ directory: 'INTERNAL', userId: 'sa_scheduler' }];
    const userSessions: SvcConfig['userSessions']['excludeUser'] = [{ directory: 'INTERNAL', userId: 'sa_repository' }];
    expect(isExcluded('internal', 'SA_SCHEDULER', userEvents)).toBe(true);
    expect(isExcluded('internal', 'SA_REPOSITORY', userSessions)).toBe(true);
  });
});

describe('exclusionMatcher', () => {
  const matcher = exclusionMatcher(list);

  it.each(cases)('(%j, %j) → %s, like isExcluded', (directory, userId, expected) => {
    expect(matcher(directory, userId)).toBe(expected);
  });

  it('an empty list excludes nobody', () => {
    expect(exclusionMatcher([])('INTERNAL', 'sa_scheduler')).toBe(false);
  });
});
