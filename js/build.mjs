// Build the widget bundles: one ES module per widget in ../everyo_lab/static/, by esbuild
// (pinned in package.json and package-lock.json: run `npm ci` here once).
//
// esbuild bundles each widget's module graph into one function; the bundle evaluates it once
// per page and build (kept in globalThis.__everyoModules) and re-exports its default export
// for anywidget. The first line carries a hash of the sources, and `node build.mjs --check`
// exits 1 when the committed build differs from a fresh one.
//
//   node build.mjs           write ../everyo_lab/static/*.js
//   node build.mjs --check   verify they are up to date

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT_DIR = resolve(HERE, "..", "everyo_lab", "static");
const ENTRIES = {
  dashboard: "src/dashboard_widget.js",
  sweep: "src/sweep_widget.js",
};
const IMPL = "__everyo_impl";
const BUNDLE = "__everyo_bundle";
const NO_ESBUILD = 'esbuild is not installed: run "npm ci" in js/ first';

let esbuild = null;
try {
  esbuild = await import("esbuild");
} catch (err) {
  if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
}

/** Whether esbuild is installed (the tests that build skip without it). */
export const HAVE_ESBUILD = esbuild !== null;

function readSource(path) {
  return readFileSync(path, "utf8").replace(/\r\n/g, "\n");
}

/** esbuild's bundle of `entryRel` (one IIFE assigning BUNDLE) and the files it read. */
function esbuildBundle(entryRel) {
  if (esbuild === null) throw new Error(NO_ESBUILD);
  const result = esbuild.buildSync({
    absWorkingDir: HERE,
    entryPoints: [entryRel],
    bundle: true,
    format: "iife",
    globalName: BUNDLE,
    platform: "browser",
    charset: "utf8",
    legalComments: "none",
    // names and syntax as written; without the whitespace, the dashboard keeps within the
    // 108 KB that each saved widget state holds (tests/lab/test_js.py)
    minifyWhitespace: true,
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const inputs = Object.keys(result.metafile.inputs).sort();
  return { code: result.outputFiles[0].text, inputs };
}

/** The bundle text of one widget. */
export function bundle(name, entryRel) {
  const version = JSON.parse(readSource(join(HERE, "package.json"))).version;
  const { code, inputs } = esbuildBundle(entryRel);
  const hash = createHash("sha256");
  for (const file of inputs) hash.update(`${file}\n${readSource(join(HERE, file))}\n`);
  const digest = hash.digest("hex").slice(0, 16);
  return [
    `// everyo-lab ${version} | ${name}.js | sources sha256:${digest} | built by js/build.mjs (esbuild ${esbuild.version}) from js/src: do not edit\n`,
    // One implementation per page and build: anywidget imports the ESM afresh for every
    // widget (a new blob URL each time), so without this every dashboard would run its own
    // cold, never-optimised copy of the code, and hold its own module state.
    `const ${IMPL} = ((globalThis.__everyoModules ??= {})[${JSON.stringify(`${name}:${digest}`)}] ??= (() => {`,
    code.trimEnd(),
    `return ${BUNDLE}.default;`,
    "})());",
    `export default ${IMPL};`,
    "",
  ].join("\n");
}

function main(argv) {
  if (esbuild === null) {
    console.error(NO_ESBUILD);
    return 2;
  }
  const check = argv.includes("--check");
  let stale = 0;
  if (!check) mkdirSync(OUT_DIR, { recursive: true });
  for (const [name, entry] of Object.entries(ENTRIES)) {
    const text = bundle(name, entry);
    const out = join(OUT_DIR, `${name}.js`);
    const rel = relative(process.cwd(), out);
    if (check) {
      if (!existsSync(out) || readSource(out) !== text) {
        stale += 1;
        console.error(`stale: ${rel} (run "npm run build" in js/ and commit the result)`);
      }
    } else {
      writeFileSync(out, text);
      console.log(`wrote ${rel}`);
    }
  }
  if (check && stale === 0) console.log(`build up to date (${Object.keys(ENTRIES).length} bundles)`);
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
