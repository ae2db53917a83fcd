/**
 * What the RSS is made of: `node --import ./bench/memory-usage.mjs …` with SVC_MEMORY_USAGE=<file>
 * appends a sample every 100 ms to <file>, one JSON line each, in bytes: process.memoryUsage()
 * ({rss, heapTotal, heapUsed, external, arrayBuffers}), V8's heap by space (`spaces`: each space's
 * committed size and what is used of it, from v8.getHeapSpaceStatistics(): new_space is the young
 * generation, old_space what survived two scavenges) and the RSS split as the kernel counts it
 * (`rssFile`: file pages, i.e. the node binary's code and data and mapped files; `rssAnon`:
 * anonymous memory, i.e. V8's heap, array buffers and malloc). bench/memory.mjs --load reads it to
 * say what the peak is made of. The timer is unref'd so it never keeps the process up.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.SVC_MEMORY_USAGE;
if (file) {
  const kb = (status, name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  setInterval(() => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
    );
    const status = readFileSync('/proc/self/status', 'utf8');
    appendFileSync(
      file,
      `${JSON.stringify({ rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, spaces, rssFile: kb(status, 'RssFile'), rssAnon: kb(status, 'RssAnon') })}\n`,
    );
  }, 100).unref();
}
