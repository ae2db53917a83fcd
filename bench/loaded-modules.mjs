/**
 * Records which modules a Node process loads: `node --import ./bench/loaded-modules.mjs …` with
 * SVC_LOADED_MODULES=<file> appends the URL of every module loaded to <file>, one a line:
 * `<url> <url of the importing module>` (the second is empty for the entry). Used by bench/memory.mjs (which packages a start loads) and by
 * test/edge-agent/runtime/lazy-loading.test.ts (a package a feature needs is not loaded without it).
 *
 * Two hooks, because a module can be loaded two ways:
 * - the ESM resolve hook sees every `import` (static or dynamic), also of a CommonJS package (the
 *   AWS SDK) from ESM. Its hooks run on the loader thread (Node 20), which may write the file
 *   synchronously;
 * - `require` (CommonJS packages' own requires, and Svc's `createRequire` loads: the config
 *   validator generated at build, bowser at the first user agent) goes through the CommonJS
 *   loader's `_resolveFilename`, wrapped here on the main thread. Built-in modules are not recorded.
 */
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';

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

  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, ...rest) {
    const filename = resolveFilename.call(this, request, parent, ...rest);
    if (isAbsolute(filename))
      appendFileSync(
        file,
        `${pathToFileURL(filename).href} ${parent?.filename ? pathToFileURL(parent.filename).href : ''}\n`,
      );
    return filename;
  };
}
