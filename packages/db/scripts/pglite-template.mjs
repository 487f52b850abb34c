// Writes dist/pglite-template.tar.gz: a PGlite data dir just after initdb, as PGlite dumps it.
// A first start on the embedded database then loads this (~1 s) instead of running initdb in
// WebAssembly (~5 s of a 2-core machine, most of a first start: issue 40, budget B7). It holds no
// data and nothing secret: initdb writes the catalogue and the configuration files, which are
// the same for every install. pglite-create.ts falls back to initdb when it is missing or does
// not load (another PGlite build, a damaged file).
//   node scripts/pglite-template.mjs
import { mkdir, rename, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";

const target = fileURLToPath(new URL("../dist/pglite-template.tar.gz", import.meta.url));
const db = await PGlite.create();
const dump = await db.dumpDataDir("gzip");
await db.close();
await mkdir(fileURLToPath(new URL("../dist/", import.meta.url)), { recursive: true });
// Written whole or not at all: a half-written template would only cost the fallback, but say why.
await writeFile(`${target}.tmp`, Buffer.from(await dump.arrayBuffer()));
await rename(`${target}.tmp`, target);
