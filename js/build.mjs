// Build the widget bundles: one ES module per widget in ../everyo_lab/static/.
//
// A deliberately small, deterministic bundler (no npm dependencies, so CI needs no install):
// each relative import is inlined once as a module-scoped closure, and the whole is evaluated
// once per page and build (kept in globalThis.__everyoModules), its default export re-exported
// for anywidget; whole-line comments are left out of the bundle. The first line carries a hash
// of the sources, and `node build.mjs --check` exits 1 when the committed build differs from a
// fresh one.
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

const IMPORT_RE = /^import\s+(.+?)\s+from\s+["']([^"']+)["'];?[ \t]*$/gm;
const EXPORT_DECL_RE = /^export\s+((?:async\s+)?function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm;

function readSource(path) {
  return readFileSync(path, "utf8").replace(/\r\n/g, "\n");
}

/** Parse `import {a, b as c} from "./x.js"` clauses of one module. */
function parseImports(source, file) {
  const imports = [];
  for (const match of source.matchAll(IMPORT_RE)) {
    const [statement, clause, spec] = match;
    if (!spec.startsWith(".")) {
      throw new Error(`${file}: "${spec}" is not a relative import; the lab front end has no npm dependencies`);
    }
    const target = resolve(dirname(file), spec);
    const named = clause.match(/^\{([^}]*)\}$/);
    const star = clause.match(/^\*\s+as\s+([A-Za-z_$][\w$]*)$/);
    if (named) {
      const bindings = named[1].split(",").map((s) => s.trim()).filter(Boolean).map((s) => {
        const [imported, local] = s.split(/\s+as\s+/);
        return local ? `${imported}: ${local}` : imported;
      });
      imports.push({ statement, target, binding: `{ ${bindings.join(", ")} }` });
    } else if (star) {
      imports.push({ statement, target, binding: star[1] });
    } else {
      throw new Error(`${file}: unsupported import form "${statement}" (use named imports)`);
    }
  }
  return imports;
}

/** Modules reachable from `entry`, dependencies before dependants (deterministic DFS). */
function collect(entry) {
  const order = [];
  const seen = new Set();
  const visit = (file, stack) => {
    if (stack.includes(file)) throw new Error(`import cycle: ${[...stack, file].join(" -> ")}`);
    if (seen.has(file)) return;
    const source = readSource(file);
    const imports = parseImports(source, file);
    for (const imp of imports) visit(imp.target, [...stack, file]);
    seen.add(file);
    order.push({ file, source, imports });
  };
  visit(entry, []);
  return order;
}

/**
 * The source without its whole-line comments (`// ...` lines and `/* ... *\/` blocks that
 * start a line), which are about a fifth of the bundle, and without leading indentation (a
 * twelfth); the sources keep both. Lines inside a template literal (an odd number of backticks
 * opened it) are never touched.
 */
export function stripComments(source) {
  const out = [];
  let inTemplate = false;
  let inBlock = false;
  for (const line of source.split("\n")) {
    const text = line.trim();
    if (inBlock) {
      inBlock = !text.endsWith("*/");
      continue;
    }
    if (!inTemplate && text.startsWith("//")) continue;
    if (!inTemplate && text.startsWith("/*")) {
      inBlock = !text.endsWith("*/");
      continue;
    }
    out.push(inTemplate ? line : line.trimStart());
    const ticks = (line.replace(/\\./g, "").match(/`/g) || []).length;
    if (ticks % 2 === 1) inTemplate = !inTemplate;
  }
  return out.join("\n");
}

function moduleVar(file) {
  return `__everyo_${relative(HERE, file).replace(/[^A-Za-z0-9]/g, "_")}`;
}

function replaceImports(mod) {
  let body = stripComments(mod.source);
  for (const imp of mod.imports) {
    body = body.replace(imp.statement, `const ${imp.binding} = ${moduleVar(imp.target)};`);
  }
  return body;
}

function wrapDependency(mod) {
  const names = [...mod.source.matchAll(EXPORT_DECL_RE)].map((m) => m[2]);
  if (/^export\s+(default|\{)/m.test(mod.source)) {
    throw new Error(`${mod.file}: dependencies may only export declarations (export function/const ...)`);
  }
  const body = replaceImports(mod).replace(/^export\s+/gm, "").trimEnd();
  const rel = relative(HERE, mod.file);
  return `// ---- ${rel}\nconst ${moduleVar(mod.file)} = (() => {\n${body}\nreturn { ${names.join(", ")} };\n})();\n`;
}

/** The bundle text of one widget. */
export function bundle(name, entryRel) {
  const version = JSON.parse(readSource(join(HERE, "package.json"))).version;
  const modules = collect(resolve(HERE, entryRel));
  const hash = createHash("sha256");
  for (const mod of modules) hash.update(`${relative(HERE, mod.file)}\n${mod.source}\n`);
  const digest = hash.digest("hex").slice(0, 16);
  const entry = modules[modules.length - 1];
  const parts = [
    `// everyo-lab ${version} | ${name}.js | sources sha256:${digest} | built by js/build.mjs from js/src: do not edit\n`,
    // One implementation per page and build: anywidget imports the ESM afresh for every
    // widget (a new blob URL each time), so without this every dashboard would run its own
    // cold, never-optimised copy of the code, and hold its own module state.
    `const ${IMPL} = ((globalThis.__everyoModules ??= {})[${JSON.stringify(`${name}:${digest}`)}] ??= (() => {\n`,
    ...modules.slice(0, -1).map(wrapDependency),
    `// ---- ${relative(HERE, entry.file)} (entry)\n${entryBody(entry)}\n})());\n`,
    `export default ${IMPL};\n`,
  ];
  return parts.join("\n");
}

const IMPL = "__everyo_impl";

/** The entry module's code, its `export default X;` turned into `return X;` (the only export). */
function entryBody(entry) {
  const body = replaceImports(entry).trimEnd();
  const exports = body.match(/^export\s.*$/gm) || [];
  if (exports.length !== 1 || !/^export default [^;]+;$/.test(exports[0]) || !body.endsWith(exports[0])) {
    throw new Error(`${entry.file}: an entry module ends with its one export, "export default ...;"`);
  }
  return `${body.slice(0, -exports[0].length)}return ${exports[0].slice("export default ".length)}`;
}

function main(argv) {
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
