/**
 * What the RSS is made of: `node --import ./bench/memory-usage.mjs …` with SVC_MEMORY_USAGE=<file>
 * appends process.memoryUsage() every 100 ms to <file>, one JSON line each ({rss, heapTotal,
 * heapUsed, external, arrayBuffers} in bytes). bench/memory.mjs --load reads it to say whether the
 * peak is JS heap, external memory (Buffers), or native (RSS minus heap and external: the
 * allocator, code, thread stacks, libuv). The timer is unref'd so it never keeps the process up.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.SVC_MEMORY_USAGE;
if (file) {
  setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers })}\n`);
  }, 100).unref();
}
