/**
 * Records which modules a Node process loads: `node --import ./bench/loaded-modules.mjs …` with
 * SVC_LOADED_MODULES=<file> appends the URL of every module the ESM loader resolves to <file>, one
 * a line: `<url> <url of the importing module>` (the second is empty for the entry). Used by bench/memory.mjs (which packages a start loads) and by
 * test/edge-agent/runtime/lazy-loading.test.ts (a package a feature needs is not loaded without it).
 *
 * Why the ESM resolve hook: Svc's code is ESM, so each package it imports is resolved here once,
 * also a CommonJS package (the AWS SDK): the import from ESM goes through this resolver before the
 * CommonJS loader takes over that package's own require() calls. Those inner require() calls are
 * not recorded, which is what a "was package X loaded" check needs (the entry is recorded).
 * The hooks run on the loader thread (Node 20), which may write the file synchronously.
 */
import { register } from 'node:module';

const file = process.env.SVC_LOADED_MODULES;
if (file) {
  const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(file)}, result.url + ' ' + (context.parentURL ?? '') + '\\n');
  return result;
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
