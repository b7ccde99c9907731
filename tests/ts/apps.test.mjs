// MCP Apps (spec MA, issue #8) end to end in a real browser: the order_editor example over
// streamable HTTP, a host page built on the official host-side bridge (AppBridge +
// PostMessageTransport from @modelcontextprotocol/ext-apps, the TypeScript SDK v2 Client; see
// apps/host.mjs), the server's built-in window view in a sandboxed iframe under the CSP the host
// derives from `_meta.ui.csp`, and Debian's Chromium driven by playwright-core.
//
// What it checks, in both protocol eras (2026-07-28 via versionNegotiation 'auto', and legacy
// 2025-11-25; the later steps on 2026-07-28 only):
// - tools carry `_meta.ui.resourceUri`; the view reads as text/html;profile=mcp-app with the four
//   CSP lists (MA-4-1, MA-6-5..7); the Apps handshake ui/initialize → reply →
//   ui/notifications/initialized, AppBridge's oninitialized (MA-10-2..4), in
//   <iframe sandbox="allow-scripts"> under a CSP with connect-src 'none' (MA-9-1, MA-9-2);
// - the Order Editor renders, the payment password masked, the secret nowhere (GB-4.5-2);
// - the view's Edit field form goes to the host as tools/call with the shown expectedVersion, and
//   the view shows the result (MA-9-7, MA-13-12); a competing edit first gives stale_state and a
//   re-read (GB-7.1); an edit by another MCP client appears by itself (live refresh);
// - forged messages from another origin and from a same-origin sibling frame are ignored, while
//   the same message from the host is followed (MA-9-5, MA-9-6, MA-13-7);
// - the host's consent: a declined submit changes nothing, an allowed one opens "Confirm order"
//   and the view follows to it (MA-9-7, MA-11-3, MA-11-4, MA-13-12);
// - a host without the extension: no `_meta.ui`, the view read is -32021 (MA-12-2..4, MA-13-8).
//
// Run: `node --test tests/ts/apps.test.mjs` after `cargo build --example order_editor` and
// `npm ci --prefix tests/ts` (./test.sh does all of it when /usr/bin/chromium exists).
// BRIDGE_ORDER_EDITOR_BIN overrides the server binary, BRIDGE_CHROMIUM the browser.
// Screenshots: <target>/tmp/apps/*.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AUTHED,
  CHROMIUM,
  WAIT_MS,
  bundleHost,
  freePort,
  launchChromium,
  openHost,
  outDir,
  startOrderEditor,
  startSchemaZoo,
  until,
} from './apps/harness.mjs';

const UI = 'io.modelcontextprotocol/ui';
const UI_MIME = 'text/html;profile=mcp-app';
const WINDOW_ID_KEY = 'bridge/windowId';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const SECRET = 'hunter2';
const MASK = '••••••';
const TEST_TIMEOUT = WAIT_MS * 6;

if (!existsSync(CHROMIUM)) {
  throw new Error(`${CHROMIUM} is missing (apt-get install chromium); ./test.sh skips this file then`);
}

let bundle;
let browser;
before(async () => {
  bundle = await bundleHost();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

/** An MCP client outside the browser (a second agent or the user's other tool). */
async function directClient(server) {
  const client = new Client({ name: 'bridge-apps-test-direct', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), AUTHED));
  return client;
}

async function readWindows(client) {
  const r = await client.request({ method: 'resources/read', params: { uri: 'app://windows' } });
  return JSON.parse(r.contents[0].text);
}

function editorOf(snapshot, id) {
  const w = snapshot.windows.find((x) => x.id === id);
  assert.ok(w, `window ${id} in ${JSON.stringify(snapshot.windows.map((x) => x.id))}`);
  return w;
}

function fieldValue(win, label) {
  for (const b of win.blocks) {
    if (b.type !== 'fields') continue;
    const item = b.items.find((i) => i.label === label || i.key === label);
    if (item) return item.value;
  }
  return undefined;
}

/** The browser side of one host page: the page, its view frame and diagnostics. */
class HostPage {
  constructor(server, opened) {
    this.server = server;
    this.context = opened.context;
    this.page = opened.page;
    this.logs = opened.logs;
  }

  static async open(server, query, extraRoutes) {
    return new HostPage(server, await openHost(browser, server, bundle, query, extraRoutes));
  }

  host() {
    return this.page.evaluate(() => {
      const h = window.__host;
      return JSON.parse(JSON.stringify({ ...h, bridge: undefined }));
    });
  }

  hostLog() {
    return this.page.evaluate(() => JSON.parse(JSON.stringify(window.__hostLog)));
  }

  /** The view's frame (the sandboxed iframe named "view"). */
  frame() {
    const f = this.page.frame({ name: 'view' });
    assert.ok(f, 'the view frame exists');
    return f;
  }

  view() {
    return this.page.frameLocator('#view');
  }

  /** What the view shows now, read from its DOM contract. */
  state() {
    return this.frame().evaluate(() => {
      const app = document.querySelector('main#app');
      const status = document.querySelector('#status');
      const fields = {};
      for (const f of document.querySelectorAll('section.block[data-block-type="fields"] div.field')) {
        const dd = f.querySelector('dd');
        fields[f.querySelector('dt')?.textContent.trim()] = {
          text: dd?.textContent.trim(),
          sensitive: dd?.getAttribute('data-sensitive'),
        };
      }
      return {
        state: app?.getAttribute('data-state'),
        windowId: app?.getAttribute('data-window-id'),
        version: app?.hasAttribute('data-version') ? Number(app.getAttribute('data-version')) : null,
        summary: document.querySelector('h1#summary')?.textContent.trim(),
        title: document.querySelector('#window-title')?.textContent.trim(),
        status: { kind: status?.getAttribute('data-kind') ?? null, text: status?.textContent.trim() ?? '' },
        fields,
        actions: [...document.querySelectorAll('section#actions form.action')].map((f) => ({
          action: f.getAttribute('data-action'),
          tool: f.getAttribute('data-tool'),
          button: f.querySelector('button[type="submit"]')?.textContent.trim(),
          inputs: [...f.querySelectorAll('[name]')].map((i) => i.getAttribute('name')),
        })),
        actionsHidden: document.querySelector('section#actions')?.hidden ?? null,
        userOnly: [...document.querySelectorAll('section#actions p.user-only')].map((p) => ({
          action: p.getAttribute('data-action'),
          text: p.textContent.trim(),
        })),
      };
    });
  }

  async diagnostics() {
    const hints = [];
    if (this.logs.some((l) => l.includes("'allow-forms' permission is not set"))) {
      hints.push(
        "HINT: the view waited for a form 'submit' event. In <iframe sandbox=\"allow-scripts\"> (no allow-forms) the browser " +
          'blocks form submission before any submit event fires, so the view must act on the submit button\'s click ' +
          '(event.preventDefault()) instead; Enter in a field still works, as implicit submission clicks the default button.',
      );
    }
    let h = {};
    try {
      h = await this.host();
    } catch (e) {
      h = { error: e.message };
    }
    let s = {};
    try {
      s = await this.state();
    } catch (e) {
      s = { error: e.message };
    }
    return [
      ...hints,
      `host phase=${h.phase} errors=${JSON.stringify(h.errors)}`,
      `view state=${JSON.stringify(s)}`,
      `host log=${JSON.stringify(await this.hostLog().catch(() => []))}`,
      // (debug chatter and the CSP refusals of the handshake test's own fetch probe left out)
      `browser console (last 25):\n  ${this.logs
        .filter((l) => !l.startsWith('[console.debug]') && !/connect-src 'none'|Refused to connect because it violates/.test(l))
        .slice(-25)
        .join('\n  ')}`,
      `server stderr (last 1500 chars): ${this.server.stderr().slice(-1500)}`,
    ].join('\n');
  }

  /** Waits until the view's state satisfies `pred`. */
  untilView(pred, what, timeout) {
    return until(async () => {
      const s = await this.state();
      return pred(s) ? s : null;
    }, what, { timeout, detail: () => this.diagnostics() });
  }

  /** Fills the inputs of the view's action form and presses its button, as a user would. */
  async runAction(action, values = {}) {
    const form = this.view().locator(`section#actions form.action[data-action="${action}"]`);
    await form.waitFor({ state: 'visible' });
    for (const [name, value] of Object.entries(values)) {
      const input = form.locator(`[name="${name}"]`);
      const tag = await input.evaluate((n) => n.tagName.toLowerCase());
      if (tag === 'select') await input.selectOption({ label: value });
      else await input.fill(value);
    }
    await form.locator('button[type="submit"]').click();
  }

  /** Waits for the n-th (0-based) host log entry for tool `name` to be settled: declined, or
   * forwarded and answered. */
  untilLogged(name, n = 0) {
    const settled = (e) => e && (e.decision === 'declined' || e.result !== undefined || e.error !== undefined);
    return until(async () => {
      const e = (await this.hostLog()).filter((x) => x.name === name)[n];
      return settled(e) ? e : null;
    }, `the host to log and settle tools/call ${name} #${n + 1}`, {
      detail: () => this.diagnostics(),
    });
  }

  close() {
    return this.context.close();
  }
}

function checkToolsWithUi(tools) {
  // MA-4-1, MA-4-4, MA-13-6: every window tool names its ui:// view in the nested form; app
  // tools have none.
  const windowTools = tools.filter((t) => typeof t._meta?.[WINDOW_ID_KEY] === 'string');
  assert.ok(windowTools.length >= 4, `window tools: ${tools.map((t) => t.name)}`);
  for (const t of tools) {
    if (t.name.startsWith('app__')) {
      assert.equal(t._meta?.ui, undefined, `${t.name} has no view`);
      continue;
    }
    const uri = t._meta?.ui?.resourceUri;
    assert.ok(typeof uri === 'string' && uri.startsWith('ui://'), `${t.name}: _meta.ui.resourceUri = ${uri}`);
  }
}

for (const era of ['auto', 'legacy']) {
  const full = era === 'auto';
  describe(`MCP Apps in Chromium, ${era === 'auto' ? '2026-07-28 (versionNegotiation auto)' : 'legacy 2025-11-25'} era`, () => {
    let server;
    let hp;
    let direct;
    const editor = 'w-A';

    before(async () => {
      server = await startOrderEditor();
      hp = await HostPage.open(server, { era, ui: '1' });
      direct = await directClient(server);
    }, { timeout: TEST_TIMEOUT });

    after(async () => {
      await direct?.close().catch(() => {});
      await hp?.close().catch(() => {});
      await server?.stop();
    });

    test('the host connects in the expected era; tools carry their ui:// view, read as an MCP App resource', { timeout: TEST_TIMEOUT }, async () => {
      const h = await hp.host();
      assert.equal(h.phase, 'ready', await hp.diagnostics());
      // MA-1-1, MA-3-1: auto negotiation finds the 2026-07-28 server/discover; legacy initializes.
      if (era === 'auto') {
        assert.equal(h.protocolEra, 'modern');
        assert.equal(h.protocolVersion, '2026-07-28');
      } else {
        assert.equal(h.protocolEra, 'legacy');
        assert.equal(h.protocolVersion, '2025-11-25');
      }
      // MA-3-1, MA-2-2
      assert.deepEqual(h.serverCapabilities.extensions, { [UI]: {} });
      checkToolsWithUi(h.tools);
      // MA-6-5, MA-6-6, MA-6-7: one text/html;profile=mcp-app content with the four CSP lists
      // (all empty: the view is self-contained, MA-9-2, MA-9-3) and no permissions (MA-9-4).
      assert.equal(h.resource.uri, h.uiUri);
      assert.equal(h.resource.mimeType, UI_MIME);
      assert.match(h.resource.text, /^<!doctype html>/i);
      assert.deepEqual(h.resource._meta.ui, {
        csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
        permissions: {},
      });
      assert.ok(!h.resource.text.includes(SECRET), 'the view HTML holds no secret');
      // MA-13-4: tool results carry the server identity; window tool results their window.
      assert.equal(h.focusResult._meta?.[WINDOW_ID_KEY], editor);
      assert.equal(h.focusResult._meta?.[SERVER_INFO_KEY]?.name, 'order-editor');
    });

    test('the view completes the Apps handshake in the sandboxed iframe', { timeout: TEST_TIMEOUT }, async () => {
      const h = await hp.host();
      assert.equal(h.initialized, true, 'AppBridge oninitialized fired');
      const wire = h.wire;
      const firstIn = wire.find((w) => w.dir === 'in');
      // MA-1-7, MA-10-1, MA-10-2: the Apps bridge is its own JSON-RPC dialect over postMessage;
      // the view opens it with ui/initialize, carrying appInfo and appCapabilities.
      assert.equal(firstIn?.message.method, 'ui/initialize', JSON.stringify(wire.slice(0, 4)));
      assert.equal(typeof firstIn.message.params.appInfo?.name, 'string');
      assert.equal(typeof firstIn.message.params.appCapabilities, 'object');
      const replyAt = wire.findIndex((w) => w.dir === 'out' && w.message.id === firstIn.message.id && 'result' in w.message);
      assert.ok(replyAt >= 0, 'the host replied to ui/initialize');
      assert.ok(wire[replyAt].message.result.hostCapabilities.serverTools, 'the reply carries host capabilities');
      assert.equal(wire[replyAt].message.result.hostContext.theme, 'light', 'and the host context');
      // The view asks for an Apps protocol version the official host supports (so it gets it back).
      assert.equal(wire[replyAt].message.result.protocolVersion, firstIn.message.params.protocolVersion);
      // MA-10-3: ui/notifications/initialized only after that reply.
      const initAt = wire.findIndex((w) => w.dir === 'in' && w.message.method === 'ui/notifications/initialized');
      assert.ok(initAt > replyAt, `initialized (${initAt}) after the reply (${replyAt})`);
      // MA-10-4: the host sent nothing but the reply before it.
      assert.deepEqual(wire.slice(0, initAt).filter((w) => w.dir === 'out').map((w) => w.message.id), [firstIn.message.id]);
      // MA-10-6, MA-10-5: the core initialize does not cross the bridge.
      assert.ok(!wire.some((w) => w.message.method === 'initialize' || w.message.method === 'notifications/initialized'));
      // The sandbox: an opaque origin, no access to the host page (MA-9-1); the CSP is in force
      // (connect-src 'none': the view cannot reach the server itself, MA-9-9).
      const probe = await hp.frame().evaluate(async ([mcpUrl, token]) => {
        let parentDom;
        try {
          parentDom = typeof window.parent.document;
        } catch (e) {
          parentDom = `blocked: ${e.name}`;
        }
        let fetched;
        try {
          await fetch(mcpUrl, { method: 'POST', body: '{}' });
          fetched = 'reached';
        } catch (e) {
          fetched = `blocked: ${e.name}`;
        }
        const csp = document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content');
        // MA-9-10: nothing the view can see holds the host's bearer token.
        const seen = [document.documentElement.outerHTML, location.href, document.referrer, JSON.stringify(Object.keys(window))];
        const tokenSeen = seen.some((text) => text.includes(token));
        return { origin: window.origin, parentDom, fetched, csp, tokenSeen };
      }, [server.url, server.token]);
      assert.equal(probe.origin, 'null');
      assert.match(probe.parentDom, /^blocked/);
      assert.match(probe.fetched, /^blocked/);
      assert.equal(probe.csp, h.cspHeader);
      assert.equal(probe.tokenSeen, false, 'the view never sees the bearer token (MA-9-10)');
      assert.ok(!JSON.stringify(wire).includes(server.token), 'no message to or from the view carries the token');
      assert.match(h.cspHeader, /default-src 'none'/);
      assert.match(h.cspHeader, /connect-src 'none'/);
      assert.equal(await hp.page.locator('#view').getAttribute('sandbox'), 'allow-scripts');
    });

    test('the Order Editor renders; the payment password is masked and the secret is nowhere', { timeout: TEST_TIMEOUT }, async () => {
      const s = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the view to show the editor');
      assert.equal(s.title, 'Order Editor');
      assert.match(s.summary, /order #12345/);
      const server = editorOf(await readWindows(direct), editor);
      assert.equal(s.version, server.version, 'data-version is the window version');
      assert.deepEqual(Object.keys(s.fields), ['Recipient', 'Amount', 'Payment password']);
      assert.equal(s.fields.Amount.text, '$100.00');
      // GB-4.5-2: the server sends the mask; the view shows it and marks it.
      assert.equal(s.fields['Payment password'].sensitive, 'true');
      assert.ok(s.fields['Payment password'].text.includes(MASK), s.fields['Payment password'].text);
      const blocks = await hp.frame().evaluate(() =>
        [...document.querySelectorAll('section.block')].map((b) => `${b.getAttribute('data-block-type')}:${b.getAttribute('data-block-id')}`));
      assert.ok(blocks.includes('fields:order') && blocks.includes('table:products'), blocks.join(', '));
      const dom = await hp.frame().evaluate(() => document.documentElement.outerHTML + document.body.innerText);
      assert.ok(!dom.includes(SECRET), 'no secret in the view DOM or text');
      const wire = JSON.stringify((await hp.host()).wire);
      assert.ok(!wire.includes(SECRET), 'no secret on the bridge');
      const actions = s.actions.map((a) => a.action);
      for (const a of ['edit_field', 'submit', 'close', 'focus']) assert.ok(actions.includes(a), `action ${a} in ${actions}`);
      const edit = s.actions.find((a) => a.action === 'edit_field');
      assert.equal(edit.tool, `${editor}__edit_field`);
      assert.equal(edit.button, 'Edit field');
      assert.ok(edit.inputs.includes('field') && edit.inputs.includes('value'), edit.inputs.join(','));
      // MA-11-7: what a screen reader finds, by role and accessible name.
      const v = hp.view();
      assert.match(await v.getByRole('heading', { level: 1 }).textContent(), /order #12345/);
      assert.equal(await v.getByRole('button', { name: 'Edit field', exact: true }).count(), 1);
      assert.equal(await v.getByLabel('Field', { exact: false }).first().getAttribute('name'), 'field');
      assert.equal(await v.getByRole('status').count(), 1);
      assert.deepEqual(await v.getByRole('table').getByRole('columnheader').allTextContents(), ['Product', 'Quantity', 'Unit price']);
      if (full) {
        // MA-13 (exercise the view): what a person sees.
        const file = path.join(outDir(), 'order-editor-view.png');
        await hp.page.locator('#view').screenshot({ path: file });
        assert.ok(existsSync(file));
      }
    });

    test("the view's Edit field form sends tools/call through the host, with the shown version", { timeout: TEST_TIMEOUT }, async () => {
      const before = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      await hp.runAction('edit_field', { field: 'recipient', value: 'Ada Lovelace' });
      // MA-9-7, MA-11-4, MA-13-12: the button press is a request to the host, which runs it;
      // tools/call crosses the bridge as a proxied core method (MA-10-1).
      const entry = await hp.untilLogged(`${editor}__edit_field`);
      assert.equal(entry.decision, 'allowed');
      assert.equal(entry.arguments.field, 'recipient');
      assert.equal(entry.arguments.value, 'Ada Lovelace');
      assert.equal(entry.arguments.expectedVersion, before.version, 'expectedVersion is the version the view showed');
      const after = await hp.untilView((v) => v.fields.Recipient?.text === 'Ada Lovelace' && /for Ada Lovelace/.test(v.summary ?? ''),
        'the view to show the new recipient and summary');
      assert.ok(after.version > before.version, `version ${before.version} → ${after.version}`);
      assert.equal(after.status.kind, 'success', JSON.stringify(after.status));
      const server = editorOf(await readWindows(direct), editor);
      assert.equal(fieldValue(server, 'Recipient'), 'Ada Lovelace');
    });

    if (!full) return;

    test('a stale view: a competing edit lands first, the server answers stale_state, the view re-reads', { timeout: TEST_TIMEOUT }, async () => {
      const before = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      // The host's hook makes a competing edit (another agent) just before it forwards the view's call.
      await hp.page.evaluate((id) => {
        window.__beforeForward = async () => {
          window.__beforeForward = null;
          window.__competing = await window.__hostApi.callTool(`${id}__edit_field`, { field: 'amount', value: '$250.00' });
        };
      }, editor);
      await hp.runAction('edit_field', { field: 'recipient', value: 'Grace Hopper' });
      const entry = await hp.untilLogged(`${editor}__edit_field`, 1);
      assert.equal(entry.arguments.expectedVersion, before.version);
      const logged = entry.result;
      assert.ok(logged, JSON.stringify(entry));
      // GB-7.1: rejected, nothing overwritten.
      assert.equal(logged.isError, true);
      assert.equal(logged.structuredContent.code, 'stale_state');
      const s = await hp.untilView((v) => v.status.kind === 'stale' && v.fields.Amount?.text === '$250.00' && v.version > before.version,
        'the view to say the window changed and show the newer version');
      assert.ok(s.status.text.length > 0);
      assert.equal(s.fields.Recipient.text, 'Ada Lovelace', 'the stale edit was not applied');
      const server = editorOf(await readWindows(direct), editor);
      assert.equal(fieldValue(server, 'Recipient'), 'Ada Lovelace');
      assert.equal(fieldValue(server, 'Amount'), '$250.00');
      assert.equal(s.version, server.version);
    });

    test('live refresh: an edit by another MCP client shows up in the view', { timeout: TEST_TIMEOUT }, async () => {
      await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      const r = await direct.callTool({ name: `${editor}__edit_field`, arguments: { field: 'recipient', value: 'Katherine Johnson' } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const server = editorOf(await readWindows(direct), editor);
      const s = await hp.untilView((v) => v.fields.Recipient?.text === 'Katherine Johnson', 'the view to show the direct edit', 15_000);
      assert.equal(s.version, server.version);
      assert.match(s.summary, /Katherine Johnson/);
    });

    test('messages from another origin, or from a sibling frame of the host origin, are ignored', { timeout: TEST_TIMEOUT }, async () => {
      // MA-9-5, MA-9-6, MA-13-7
      const before = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      // Record, inside the view, whether the injected marker ever shows.
      await hp.frame().evaluate(() => {
        window.__sawForeign = false;
        const check = () => {
          if (document.documentElement.textContent.includes('X-FORGED-7f3a')) window.__sawForeign = true;
        };
        new MutationObserver(check).observe(document.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
        window.__startTheme = document.documentElement.getAttribute('data-theme');
        window.__startBg = document.documentElement.style.getPropertyValue('--color-background-primary');
      });
      // Hold the view's next read in the host, so a forged response has a pending request to
      // answer while the real one waits.
      await hp.page.evaluate(() => {
        window.__held = [];
        window.__beforeRead = () => new Promise((release) => window.__held.push(release));
      });
      await until(() => hp.page.evaluate(() => window.__held.length > 0), 'the view to ask for a read', { detail: () => hp.diagnostics() });

      const port2 = await freePort();
      const evilUrl = `http://evil.localhost:${port2}/evil.html`;
      const siblingUrl = `${server.origin}/sibling.html`;
      const forger = forgerPage(editor);
      await hp.page.route((u) => u.href === evilUrl, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: forger }));
      await hp.page.route((u) => u.href === siblingUrl, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: forger }));
      await hp.page.evaluate(([a, b]) => Promise.all([window.__hostApi.addFrame(a, { name: 'evil' }), window.__hostApi.addFrame(b, { name: 'sibling' })]), [evilUrl, siblingUrl]);
      for (const name of ['evil', 'sibling']) {
        await until(() => hp.page.frame({ name })?.evaluate(() => window.__sent === true), `the ${name} frame to post its forgeries`, { detail: () => hp.diagnostics() });
      }
      const origins = await Promise.all(['evil', 'sibling'].map((name) => hp.page.frame({ name }).evaluate(() => window.origin)));
      assert.deepEqual(origins, [`http://evil.localhost:${port2}`, server.origin]);
      // Let the view's held read through, and wait for a read after it to complete too.
      const readsBefore = await hp.page.evaluate(() => window.__hostReads.length);
      await hp.page.evaluate(() => {
        window.__beforeRead = null;
        for (const release of window.__held) release();
      });
      await until(() => hp.page.evaluate((n) => window.__hostReads.slice(n).some((r) => r.done), readsBefore),
        'a later read of the view to complete', { detail: () => hp.diagnostics() });
      const s = await hp.state();
      const seen = await hp.frame().evaluate(() => ({
        sawForeign: window.__sawForeign,
        theme: document.documentElement.getAttribute('data-theme'),
        bg: document.documentElement.style.getPropertyValue('--color-background-primary'),
        startTheme: window.__startTheme,
        startBg: window.__startBg,
      }));
      assert.equal(seen.sawForeign, false, 'no forged content was ever shown');
      assert.equal(s.windowId, editor, 'a forged tool-result did not switch the window');
      assert.equal(s.state, 'ready');
      assert.ok(!/X-FORGED-7f3a/.test(JSON.stringify(s)));
      assert.ok(s.version >= before.version);
      assert.equal(seen.theme, seen.startTheme, 'a forged host-context-changed did not change the theme');
      assert.equal(seen.bg, seen.startBg);
      // The host's side: forged requests posted to the host page are not the view's (AppBridge
      // checks event.source), so nothing was called.
      const log = await hp.hostLog();
      assert.ok(!log.some((e) => e.name === `${editor}__close`), JSON.stringify(log));
      const snapshot = await readWindows(direct);
      assert.ok(snapshot.windows.some((w) => w.id === editor), 'the editor is still open');

      // The control: the same kind of message from the real host is followed. The agent brings
      // the report to the front, then the editor back.
      await hp.page.evaluate(async () => {
        const r = await window.__hostApi.callTool('w-C__focus', {});
        await window.__hostApi.sendToolResult(r);
      });
      await hp.untilView((v) => v.windowId === 'w-C' && v.title === 'Report Details', 'the view to follow a real tool-result to w-C');
      await hp.page.evaluate(async (id) => {
        const r = await window.__hostApi.callTool(`${id}__focus`, {});
        await window.__hostApi.sendToolResult(r);
      }, editor);
      await hp.untilView((v) => v.windowId === editor && v.state === 'ready', 'the view to follow back to the editor');
    });

    test('a read-only action shows what it returned, and keeps its inputs', { timeout: TEST_TIMEOUT }, async () => {
      // The agent brings the report to the front; the view follows the result's window.
      await hp.page.evaluate(async () => window.__hostApi.sendToolResult(await window.__hostApi.callTool('w-C__focus', {})));
      await hp.untilView((v) => v.windowId === 'w-C' && v.actions.some((a) => a.action === 'load_rows'), 'the report');
      await hp.runAction('load_rows', { offset: '50', limit: '3' });
      const entry = await hp.untilLogged('w-C__load_rows');
      assert.deepEqual(entry.arguments, { offset: 50, limit: 3 }, 'numbers, not strings; no expectedVersion on a read-only tool');
      const shown = await until(() => hp.frame().evaluate(() => {
        const r = document.querySelector('form.action[data-action="load_rows"] .result');
        return r ? { text: r.textContent, rows: r.querySelectorAll('tr').length, offset: document.querySelector('[name="offset"]').value } : null;
      }), 'the result under the form', { detail: () => hp.diagnostics() });
      assert.match(shown.text, /10050/);
      assert.match(shown.text, /10052/);
      assert.ok(!/10053/.test(shown.text.replace(/\b3 rows\b/, '')), shown.text);
      assert.equal(shown.offset, '50', 'a read-only action keeps its inputs');
      // A number outside the schema's bounds is caught in the view, before the host is asked.
      await hp.runAction('load_rows', { offset: '-1', limit: '3' });
      const s = await hp.untilView((v) => v.status.kind === 'error', 'the view to flag the field');
      assert.match(s.status.text, /highlighted/);
      assert.equal((await hp.hostLog()).filter((e) => e.name === 'w-C__load_rows').length, 1, 'nothing sent');
      // Back to the editor for the next tests.
      await hp.page.evaluate(async (id) => window.__hostApi.sendToolResult(await window.__hostApi.callTool(`${id}__focus`, {})), editor);
      await hp.untilView((v) => v.windowId === editor, 'the editor again');
    });

    test('a tool result naming a window that does not exist leaves the view where it is', { timeout: TEST_TIMEOUT }, async () => {
      const before = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      await hp.page.evaluate(() => window.__hostApi.sendToolResult({
        content: [{ type: 'text', text: 'Done' }], structuredContent: {}, _meta: { 'bridge/windowId': 'w-NOPE' },
      }));
      // Wait for the read that follows the result, then check nothing claims a closed window.
      const reads = await hp.page.evaluate(() => window.__hostReads.length);
      await until(() => hp.page.evaluate((n) => window.__hostReads.slice(n).some((r) => r.done), reads), 'a read after the result',
        { detail: () => hp.diagnostics() });
      const s = await hp.state();
      assert.equal(s.state, 'ready');
      assert.equal(s.windowId, before.windowId);
    });

    test('reads that fail are retried; the view says its state may be out of date, then recovers', { timeout: TEST_TIMEOUT }, async () => {
      await hp.untilView((v) => v.state === 'ready' && v.windowId === editor, 'the editor');
      await hp.page.evaluate(() => {
        window.__failReads = 2;
        window.__beforeRead = async () => {
          if (window.__failReads > 0) {
            window.__failReads -= 1;
            throw new Error('transient trouble');
          }
        };
      });
      await until(() => hp.frame().evaluate(() => document.querySelector('main#app').getAttribute('data-stale') === 'true'
        && !document.querySelector('#freshness').hidden && /out of date/.test(document.querySelector('#freshness').textContent)),
      'the view to flag its state as possibly out of date', { detail: () => hp.diagnostics() });
      const r = await direct.callTool({ name: `${editor}__edit_field`, arguments: { field: 'amount', value: '$77.00' } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const s = await hp.untilView((v) => v.fields.Amount?.text === '$77.00', 'the view to recover and show the edit', 30_000);
      assert.equal(await hp.frame().evaluate(() => document.querySelector('main#app').hasAttribute('data-stale')), false);
      assert.equal(s.state, 'ready');
      await hp.page.evaluate(() => { window.__beforeRead = null; });
    });

    test('consent stays in the host: a declined submit changes nothing; an allowed one opens the dialog', { timeout: TEST_TIMEOUT }, async () => {
      // MA-9-7, MA-11-3, MA-11-4, MA-13-12
      // A valid form, whatever the earlier tests managed to do.
      if (!fieldValue(editorOf(await readWindows(direct), editor), 'Recipient')) {
        await direct.callTool({ name: `${editor}__edit_field`, arguments: { field: 'recipient', value: 'Katherine Johnson' } });
      }
      const serverBefore = editorOf(await readWindows(direct), editor);
      const before = await hp.untilView((v) => v.state === 'ready' && v.windowId === editor && v.version === serverBefore.version,
        'the editor at the current version');
      // The host's policy: destructive tools need the user's approval, which the user withholds.
      await hp.page.evaluate(() => {
        window.__consent = (p) => !window.__host.tools.find((t) => t.name === p.name)?.annotations?.destructiveHint;
      });
      await hp.runAction('submit');
      const declined = await hp.untilLogged(`${editor}__submit`);
      assert.equal(declined.decision, 'declined');
      const s = await hp.untilView((v) => v.status.kind === 'declined', 'the view to say the host declined');
      assert.ok(s.status.text.length > 0);
      assert.equal(s.windowId, editor);
      const serverMid = await readWindows(direct);
      assert.equal(editorOf(serverMid, editor).version, serverBefore.version, 'nothing changed');
      assert.ok(!serverMid.windows.some((w) => w.title === 'Confirm order'), 'no dialog opened');
      assert.ok(serverMid.operableWindowIds.includes(editor));
      assert.equal(s.version, before.version);

      // Now the user approves.
      await hp.page.evaluate(() => {
        window.__consent = () => true;
      });
      await hp.runAction('submit');
      const allowed = await hp.untilLogged(`${editor}__submit`, 1);
      assert.equal(allowed.decision, 'allowed');
      const serverAfter = await readWindows(direct);
      const dialog = serverAfter.windows.find((w) => w.title === 'Confirm order');
      assert.ok(dialog, 'the dialog opened');
      assert.equal(dialog.modal, true);
      assert.equal(dialog.ownerId, editor);
      assert.ok(!serverAfter.operableWindowIds.includes(editor), 'the dialog blocks the editor');
      // The view follows to the dialog and offers its actions.
      const d = await hp.untilView((v) => v.windowId === dialog.id && v.title === 'Confirm order' && v.actions.length >= 2,
        'the view to show the Confirm order dialog with its actions');
      assert.deepEqual(d.actions.map((a) => a.button).sort(), ['Cancel', 'Confirm']);
      assert.deepEqual(d.actions.map((a) => a.tool).sort(), [`${dialog.id}__cancel`, `${dialog.id}__confirm`]);
      await hp.page.locator('#view').screenshot({ path: path.join(outDir(), 'confirm-order-view.png') });

      // MA-11-7: keyboard only. Tab to the dialog's Confirm button and press Enter: the host gets
      // the call, the dialog closes, and the view hands back to the editor it belonged to.
      const confirm = hp.view().locator(`form.action[data-action="confirm"] button`);
      await confirm.focus();
      assert.equal(await hp.frame().evaluate(() => document.activeElement?.textContent.trim()), 'Confirm');
      await hp.page.keyboard.press('Enter');
      const confirmed = await hp.untilLogged(`${dialog.id}__confirm`);
      assert.equal(confirmed.result?.isError, false, JSON.stringify(confirmed));
      const back = await hp.untilView((v) => v.windowId === editor && /was placed/.test(v.summary ?? ''),
        'the view to hand back to the editor once the dialog closed');
      assert.match(back.status.text, /Order placed/);
      assert.ok((await readWindows(direct)).operableWindowIds.includes(editor));
    });

    test('the view follows the host context: theme and tokens (MA-11-5), reduced motion (MA-11-7)', { timeout: TEST_TIMEOUT }, async () => {
      await hp.untilView((v) => v.state === 'ready', 'the view');
      const before = await hp.frame().evaluate(() => getComputedStyle(document.body).backgroundColor);
      await hp.page.evaluate(() => window.__hostApi.setHostContext({
        theme: 'dark',
        styles: { variables: { '--color-background-primary': 'rgb(17, 24, 39)', '--color-text-primary': 'rgb(243, 244, 246)' } },
      }));
      await until(() => hp.frame().evaluate(() => document.documentElement.getAttribute('data-theme') === 'dark'),
        'the view to take the dark theme', { detail: () => hp.diagnostics() });
      const look = await hp.frame().evaluate(() => ({
        bg: getComputedStyle(document.body).backgroundColor,
        fg: getComputedStyle(document.body).color,
        scheme: getComputedStyle(document.documentElement).colorScheme,
      }));
      assert.equal(look.bg, 'rgb(17, 24, 39)', `was ${before}`);
      assert.equal(look.fg, 'rgb(243, 244, 246)');
      assert.equal(look.scheme, 'dark');
      // Highlights of changed blocks animate, except under prefers-reduced-motion.
      const animation = () => hp.frame().evaluate(() => {
        const probe = document.createElement('div');
        probe.className = 'changed';
        document.body.append(probe);
        const name = getComputedStyle(probe).animationName;
        probe.remove();
        return name;
      });
      await hp.page.emulateMedia({ reducedMotion: 'no-preference' });
      assert.equal(await animation(), 'changed');
      await hp.page.emulateMedia({ reducedMotion: 'reduce' });
      assert.equal(await animation(), 'none');
      await hp.page.emulateMedia({ reducedMotion: null });
    });
  });
}

/** A page that forges Apps messages into the host page's first frame (the view) and into the
 * host page itself. Every forged text carries X-FORGED-7f3a. */
function forgerPage(editor) {
  const fakeWindows = JSON.stringify({
    operableWindowIds: ['w-C'],
    windows: [{ id: editor, title: 'X-FORGED-7f3a', summary: 'X-FORGED-7f3a summary', modal: false, ownerId: null, version: 999, blocks: [] }],
  });
  return `<!doctype html><meta charset="utf-8"><title>forger</title><script>
    const view = parent.frames[0];
    const fakeWindows = ${JSON.stringify(fakeWindows)};
    const forged = [
      { jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: {
        content: [{ type: 'text', text: 'X-FORGED-7f3a result' }], structuredContent: { message: 'X-FORGED-7f3a result' },
        _meta: { 'bridge/windowId': 'w-C' } } },
      { jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { field: 'recipient', value: 'X-FORGED-7f3a' } } },
      { jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: {
        theme: 'dark', styles: { variables: { '--color-background-primary': 'rgb(255, 0, 0)' } } } },
    ];
    for (let id = 0; id <= 200; id++) {
      forged.push({ jsonrpc: '2.0', id, result: { contents: [{ uri: 'app://windows', mimeType: 'application/json', text: fakeWindows }],
        structuredContent: { message: 'X-FORGED-7f3a call' }, content: [{ type: 'text', text: 'X-FORGED-7f3a call' }] } });
    }
    for (const m of forged) view.postMessage(m, '*');
    // And at the host: a tools/call as if from the view.
    parent.postMessage({ jsonrpc: '2.0', id: 7001, method: 'tools/call', params: { name: '${editor}__close', arguments: {} } }, '*');
    window.__sent = true;
  </script>`;
}

describe('your own parameter types as forms (the schema zoo)', () => {
  let server;
  let hp;
  before(async () => {
    server = await startSchemaZoo();
    hp = await HostPage.open(server, { era: 'auto', ui: '1', window: 'Schema zoo', show: 'tag', showArgs: JSON.stringify({ priority: 'urgent' }) });
  }, { timeout: TEST_TIMEOUT });
  after(async () => {
    await hp?.close().catch(() => {});
    await server?.stop();
  });

  test('a struct parameter is a group of inputs, sent as one object; enums are choices', { timeout: TEST_TIMEOUT }, async () => {
    await hp.untilView((v) => v.state === 'ready' && v.windowId === 'zoo', 'the zoo window', WAIT_MS);
    const names = await hp.frame().evaluate(() =>
      [...document.querySelectorAll('form.action[data-action="save_profile"] [name]')].map((n) => `${n.tagName.toLowerCase()}:${n.getAttribute('name')}`));
    for (const want of ['input:profile.id', 'input:profile.displayName', 'input:profile.email', 'select:profile.newsletter']) {
      assert.ok(names.includes(want), `${want} in ${names}`);
    }
    // The profile's own doc comments label its parts.
    const legend = await hp.frame().evaluate(() => document.querySelector('form.action[data-action="save_profile"] fieldset.object legend')?.textContent);
    assert.match(legend, /Profile/);
    await hp.runAction('save_profile', {
      'profile.id': '67e55044-10b1-426f-9247-bb680e5fe0c8',
      'profile.displayName': '  Ada  ',
      'profile.email': 'ADA@Example.com',
    });
    const entry = await hp.untilLogged('zoo__save_profile');
    assert.equal(entry.result?.isError, false, JSON.stringify(entry.result));
    assert.equal(entry.arguments.profile.displayName, '  Ada  ');
    assert.equal(entry.arguments.profile.email, 'ADA@Example.com');
    assert.equal(entry.arguments.profile.newsletter, true, 'the default is preselected');
    assert.ok(!('language' in entry.arguments.profile), 'an empty optional field is left out');
    // What came back (the stored profile) is shown as label/value pairs.
    const result = await until(() => hp.frame().evaluate(() =>
      document.querySelector('form.action[data-action="save_profile"] .result')?.textContent ?? null), 'the stored profile', { detail: () => hp.diagnostics() });
    assert.match(result, /ada@example\.com/);
    // The form starts over with its defaults (newsletter: true).
    const newsletter = await hp.frame().evaluate(() => document.querySelector('[name="profile.newsletter"]').value);
    assert.equal(newsletter, 'true');
    // An enum parameter is a <select> of its values.
    const options = await hp.frame().evaluate(() =>
      [...document.querySelectorAll('form.action[data-action="tag"] select[name="priority"] option')].map((o) => o.textContent));
    assert.deepEqual(options, ['low', 'normal', 'urgent']);
    await hp.page.locator('#view').screenshot({ path: path.join(outDir(), 'schema-zoo-view.png') });
  });
});

describe('an approval only the user gives (issue #20 item 4, MA-11-4)', () => {
  let server;
  let hp;
  let direct;
  before(async () => {
    server = await startOrderEditor({ args: ['--rows', '100', '--user-confirms'] });
    hp = await HostPage.open(server, { era: 'auto', ui: '1' });
    direct = await directClient(server);
  }, { timeout: TEST_TIMEOUT });
  after(async () => {
    await direct?.close().catch(() => {});
    await hp?.close().catch(() => {});
    await server?.stop();
  });

  test('the dialog offers no Confirm button: the view says to confirm in the app, and the agent is refused', { timeout: TEST_TIMEOUT }, async () => {
    await direct.callTool({ name: 'w-A__edit_field', arguments: { field: 'recipient', value: 'Mary Jackson' } });
    await hp.untilView((v) => v.state === 'ready' && v.windowId === 'w-A' && v.fields.Recipient?.text === 'Mary Jackson',
      'the editor with the recipient');
    await hp.page.evaluate(() => {
      window.__consent = () => true;
    });
    await hp.runAction('submit');
    await hp.untilLogged('w-A__submit');
    const dialog = (await readWindows(direct)).windows.find((w) => w.title === 'Confirm order');
    assert.ok(dialog, 'the dialog opened');
    assert.match(dialog.summary, /^Waiting for the user to confirm/);
    const d = await hp.untilView((v) => v.windowId === dialog.id && v.userOnly.length === 1,
      'the view to show the dialog with its user-only action');
    assert.deepEqual(d.actions.map((a) => a.action), ['cancel'], 'no Confirm form: only Cancel is a tool');
    assert.deepEqual(d.userOnly, [{ action: 'confirm', text: 'Confirm: confirm this in the app.' }]);
    await hp.page.locator('#view').screenshot({ path: path.join(outDir(), 'user-only-view.png') });
    // The tool is not listed, and calling it by name is refused (GB-7.4-8: no new code).
    const tools = (await direct.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.includes(`${dialog.id}__confirm`), JSON.stringify(tools));
    const refused = await direct.callTool({ name: `${dialog.id}__confirm`, arguments: {} });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent?.code, 'action_not_available', JSON.stringify(refused));
    assert.ok((await readWindows(direct)).windows.some((w) => w.id === dialog.id), 'the dialog is still open');
  });
});

describe('a host that does not proxy resources/read', () => {
  let server;
  let hp;
  before(async () => {
    server = await startOrderEditor();
    hp = await HostPage.open(server, { era: 'auto', ui: '1', reads: '0' });
  }, { timeout: TEST_TIMEOUT });
  after(async () => {
    await hp?.close().catch(() => {});
    await server?.stop();
  });

  test('the view shows the window each result carries and still runs its actions', { timeout: TEST_TIMEOUT }, async () => {
    const h = await hp.host();
    assert.equal(h.phase, 'ready', await hp.diagnostics());
    // MA-11-2: the view uses only what the host advertised (here no serverResources, so no
    // reads); the agent's focus result carries the editor's state (`_meta["bridge/window"]`).
    const s = await hp.untilView((v) => v.state === 'ready' && v.windowId === 'w-A', 'the editor from the tool result');
    assert.equal(s.fields['Payment password'].sensitive, 'true');
    assert.ok(s.actions.some((a) => a.action === 'edit_field'), JSON.stringify(s.actions));
    assert.equal((await hp.page.evaluate(() => window.__hostReads.filter((r) => r.uri === 'app://windows').length)) > 0, false,
      'the view did not ask for reads the host does not offer');
    await hp.runAction('edit_field', { field: 'recipient', value: 'Dorothy Vaughan' });
    const entry = await hp.untilLogged('w-A__edit_field');
    assert.equal(entry.arguments.expectedVersion, s.version);
    const after = await hp.untilView((v) => v.fields.Recipient?.text === 'Dorothy Vaughan', 'the new state from the call result');
    assert.ok(after.version > s.version);
  });
});

describe('a host without the UI extension (MA-12)', () => {
  let server;
  let uiUri;
  const pages = [];
  before(async () => {
    server = await startOrderEditor();
    const hp = await HostPage.open(server, { era: 'auto', ui: '1', mount: '0' });
    pages.push(hp);
    uiUri = (await hp.host()).uiUri;
    assert.match(uiUri ?? '', /^ui:\/\//);
  }, { timeout: TEST_TIMEOUT });
  after(async () => {
    for (const p of pages) await p.close().catch(() => {});
    await server?.stop();
  });

  for (const era of ['auto', 'legacy']) {
    test(`${era}: the same tools without _meta.ui; reading the view is -32021; calls still answer in text`, { timeout: TEST_TIMEOUT }, async () => {
      const hp = await HostPage.open(server, { era, ui: '0' });
      pages.push(hp);
      const h = await hp.host();
      assert.equal(h.phase, 'listed', await hp.diagnostics());
      assert.equal(h.protocolVersion, era === 'auto' ? '2026-07-28' : '2025-11-25');
      // MA-12-2, MA-13-8: every tool is still there, none has _meta.ui.
      const withUi = (pages[0] && (await pages[0].host()).tools) ?? [];
      assert.deepEqual(h.tools.map((t) => t.name), withUi.map((t) => t.name));
      for (const t of h.tools) assert.equal(t._meta?.ui, undefined, `${t.name} has no _meta.ui`);
      // MA-12-4, OQ-MA-4: the view is refused with the missing-capability error.
      const read = await hp.page.evaluate((uri) => window.__hostApi.readResource(uri), uiUri);
      assert.equal(read.result, undefined, JSON.stringify(read));
      assert.equal(read.error.code, -32021, JSON.stringify(read));
      assert.deepEqual(read.error.data?.requiredCapabilities?.extensions?.[UI], { mimeTypes: [UI_MIME] }, JSON.stringify(read.error));
      // MA-12-3, MA-12-5: a call still gives a useful text result.
      const r = await hp.page.evaluate(() => window.__hostApi.callTool('w-A__focus', {}));
      assert.notEqual(r.isError, true);
      assert.ok(r.content.some((c) => c.type === 'text' && c.text.length > 0), JSON.stringify(r.content));
      // No iframe was mounted.
      assert.equal(await hp.page.locator('iframe').count(), 0);
    });
  }
});
