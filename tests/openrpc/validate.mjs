// Validates generated OpenRPC documents with the OpenRPC reference tooling, a validator nobody on
// this project wrote (CP-8-2; the documents are generated from the registry, CP-2-12/CP-2-13).
//
// Usage: node validate.mjs FILE...
//
// For each file: JSON parse, `validateOpenRPCDocument` (the official meta-schema for the
// document's `openrpc` version), then `parseOpenRPCDocument(doc, {dereference: true, validate:
// true})`, which also fails on any `$ref` that does not resolve.
//
// Exception: @json-schema-tools/dereferencer (1.6.3, used by schema-utils-js 2.2.1) never returns
// on recursive schemas (a `$ref` that leads back into itself, e.g. a tree type) and exhausts the
// heap. For such documents the dereference step is replaced by this script's own check that every
// `$ref` resolves (a JSON pointer into the document), and the line says so.
//
// Prints one line per file and a closing `N passed, M failed`; exits 1 if anything failed, 2
// without arguments.

import { readFile } from "node:fs/promises";
import schemaUtils from "@open-rpc/schema-utils-js";

const { validateOpenRPCDocument, parseOpenRPCDocument } = schemaUtils;

/** Every `{"$ref": "#/..."}` under `node`, as [jsonPointerOfTheRefObject, targetPointer]. */
function refsUnder(node, at, out) {
  if (Array.isArray(node)) {
    node.forEach((child, i) => refsUnder(child, `${at}/${i}`, out));
  } else if (node && typeof node === "object") {
    for (const [key, child] of Object.entries(node)) {
      if (key === "$ref" && typeof child === "string") {
        out.push([at, child]);
      } else {
        refsUnder(child, `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`, out);
      }
    }
  }
  return out;
}

/** The value at `#/a/b` in `doc`, or `undefined`. */
function resolve(doc, ref) {
  if (!ref.startsWith("#")) return undefined;
  let node = doc;
  const pointer = decodeURIComponent(ref.slice(1));
  if (pointer === "") return node;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Refs that do not resolve, and whether following refs can lead back into a schema being expanded. */
function analyseRefs(doc) {
  const dangling = refsUnder(doc, "", []).filter(([, ref]) => resolve(doc, ref) === undefined).map(([, r]) => r);
  const contains = (outer, inner) => inner === outer || inner.startsWith(`${outer}/`);
  const safe = new Set();
  const expands = (target, stack) => {
    if (safe.has(target)) return false;
    const node = resolve(doc, target);
    if (node === undefined) return false;
    for (const [, next] of refsUnder(node, target.slice(1), [])) {
      if ([...stack, target].some((s) => contains(next.slice(1), s.slice(1)))) return true;
      if (expands(next, [...stack, target])) return true;
    }
    safe.add(target);
    return false;
  };
  const roots = refsUnder(doc, "", []).map(([, ref]) => ref).filter((r) => resolve(doc, r) !== undefined);
  const recursive = roots.some((r) => expands(r, []));
  return { dangling, recursive };
}

async function check(path) {
  const doc = JSON.parse(await readFile(path, "utf8"));
  const valid = validateOpenRPCDocument(structuredClone(doc));
  if (valid !== true) {
    throw new Error(`meta-schema validation failed:\n${valid.message ?? JSON.stringify(valid)}`);
  }
  const { dangling, recursive } = analyseRefs(doc);
  if (dangling.length > 0) {
    throw new Error(`dangling $ref: ${dangling.join(", ")}`);
  }
  if (!Array.isArray(doc.methods) || doc.methods.length === 0) {
    throw new Error("the document lists no methods");
  }
  if (recursive) {
    return `${doc.methods.length} methods; recursive schemas: refs checked here, dereferencer skipped`;
  }
  const parsed = await parseOpenRPCDocument(structuredClone(doc), { dereference: true, validate: true });
  return `${parsed.methods.length} methods`;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node validate.mjs openrpc.json...");
  process.exit(2);
}

let passed = 0;
let failed = 0;
for (const file of files) {
  try {
    const note = await check(file);
    passed += 1;
    console.log(`ok   ${file} (${note})`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${file}: ${e?.message ?? e}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
