/** UDP datagram parsing (platform-formats.md §0.1–0.4, §1.2–1.5, §2.2–2.3 step 1). Pure, never throws. */
export * from './common.js';
export * from './layouts.js';
export * from './log-event.js';
export * from './split.js';
export * from './user-event.js';
export * from './validators.js';
