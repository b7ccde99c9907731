// The schema_zoo example (examples/schema_zoo/) driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, the client most desktop hosts are built on) over stdio, with the
// SDK's own checks on: `listTools()` parses the listing with Zod and compiles every tool's
// `outputSchema` with Ajv; `callTool()` then validates every result that carries
// `structuredContent` (isError ones included) against it.
//
// Cases: tests/schema_zoo_cases.json, shared with tests/python/test_schema_zoo.py.
// Run: `node --test tests/ts/schema_zoo.test.mjs` after `cargo build --example schema_zoo` and
// `npm ci --prefix tests/ts` (./test.sh does all three). BRIDGE_ZOO_BIN overrides the binary.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { schemaProblems, withoutOptionalNulls } from './schema_rules.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CASES = JSON.parse(readFileSync(path.join(ROOT, 'tests', 'schema_zoo_cases.json'), 'utf8')).tools;

function zooBin() {
  if (process.env.BRIDGE_ZOO_BIN) return process.env.BRIDGE_ZOO_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
  const bin = path.join(target, 'debug', 'examples', 'schema_zoo');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build --example schema_zoo\` (./test.sh does)`);
  return bin;
}

/** One line per problem of an error; a ZodError lists its issues with their paths. */
function describeError(e) {
  if (Array.isArray(e?.issues)) return e.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  return e?.message ?? String(e);
}

/** `expect`: each named key of structuredContent deep-equals the given value; `errorFields`: the
 * `field`s of structuredContent.fields, in order. */
function checkOutcome(body, c) {
  for (const [key, want] of Object.entries(c.expect ?? {})) {
    assert.ok(body !== null && typeof body === 'object' && Object.hasOwn(body, key),
      `structuredContent has no "${key}": ${JSON.stringify(body)}`);
    assert.deepStrictEqual(body[key], want, `structuredContent.${key} of ${JSON.stringify(body)}`);
  }
  if (c.errorFields) {
    assert.deepStrictEqual((body?.fields ?? []).map((f) => f.field), c.errorFields, `fields of ${JSON.stringify(body)}`);
  }
}

describe('schema zoo, MCP TypeScript SDK client over stdio', () => {
  let client;
  /** The listing as sent, read without the SDK's Zod schema so every tool can be checked. */
  let raw = new Map();
  /** Why the SDK's own `listTools()` failed, if it did. */
  let sdkListingError = null;
  const ajv = new AjvJsonSchemaValidator();

  before(async () => {
    client = new Client({ name: 'bridge-schema-zoo-test', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: zooBin(), args: [], stderr: 'inherit' }));
    const page = await client.request({ method: 'tools/list', params: {} }, ResultSchema);
    assert.equal(page.nextCursor, undefined, 'one page: listTools() keeps validators of the last page only');
    for (const t of page.tools) raw.set(t.name, t);
    try {
      const listed = await client.listTools();
      assert.deepStrictEqual(listed.tools.map((t) => t.name), [...raw.keys()]);
    } catch (e) {
      sdkListingError = e;
    }
  });

  after(async () => {
    await client?.close();
  });

  test('the SDK accepts tools/list (Zod) and compiles every outputSchema (Ajv)', () => {
    assert.ok(sdkListingError === null, `listTools() threw: ${describeError(sdkListingError)}`);
  });

  test('every listed tool has cases, and every case names a listed tool', () => {
    const listed = [...raw.keys()].sort();
    const covered = Object.keys(CASES).sort();
    assert.deepStrictEqual(listed.filter((n) => !covered.includes(n)), [], 'listed tools without cases');
    assert.deepStrictEqual(covered.filter((n) => !listed.includes(n)), [], 'cases for tools that are not listed');
    for (const [name, c] of Object.entries(CASES)) {
      assert.ok(c.success?.length > 0 && c.error?.length > 0, `${name} needs a success and an error case`);
      for (const one of [...c.success, ...c.error]) {
        assert.ok(Object.keys(one.expect ?? {}).length > 0, `${name}: case "${one.about}" expects nothing`);
      }
    }
  });

  for (const [name, cases] of Object.entries(CASES)) {
    describe(name, () => {
      test('inputSchema and outputSchema follow the client-safe rules', () => {
        const tool = raw.get(name);
        assert.ok(tool, `${name} is not listed`);
        assert.ok(tool.outputSchema, `${name} has no outputSchema`);
        const problems = [
          ...schemaProblems(tool.inputSchema).map((p) => `inputSchema${p}`),
          ...schemaProblems(tool.outputSchema).map((p) => `outputSchema${p}`),
        ];
        assert.deepStrictEqual(problems, []);
      });

      const run = async (c, isError) => {
        const tool = raw.get(name);
        assert.ok(tool, `${name} is not listed`);
        if (!isError) {
          // What Deserialize accepts must be valid under inputSchema (hosts build arguments from it).
          let validate;
          try {
            validate = ajv.getValidator(tool.inputSchema);
          } catch (e) {
            assert.fail(`inputSchema does not compile (Ajv, as in the SDK): ${describeError(e)}`);
          }
          const valid = validate(withoutOptionalNulls(c.args, tool.inputSchema));
          assert.ok(valid.valid, `the arguments do not match inputSchema: ${valid.errorMessage}`);
        }
        let result;
        try {
          result = await client.callTool({ name, arguments: c.args });
        } catch (e) {
          assert.fail(`the SDK client rejected the call: ${describeError(e)}`);
        }
        assert.equal(result.isError === true, isError,
          `isError ${result.isError}, expected ${isError}: ${JSON.stringify(result.structuredContent)}`);
        checkOutcome(result.structuredContent, c);
        // Without a listing the SDK has no outputSchema to check the result against.
        assert.ok(sdkListingError === null,
          `the SDK did not validate this result against outputSchema: listTools() threw: ${describeError(sdkListingError)}`);
      };
      for (const c of cases.success ?? []) test(`success: ${c.about}`, () => run(c, false));
      for (const c of cases.error ?? []) test(`error: ${c.about}`, () => run(c, true));
    });
  }
});
