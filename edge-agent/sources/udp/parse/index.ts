/**
 * UDP datagram parsing (platform-formats.md §0.3–0.4, §1.2–1.5, §2.2–2.3 step 1). Pure, never throws.
 * Sanitising (§0.1) and the validators (§0.2) are the shared rules of ../../common/.
 */
export * from './common.js';
export * from './layouts.js';
export * from './log-event.js';
export * from './split.js';
export * from './user-event.js';
