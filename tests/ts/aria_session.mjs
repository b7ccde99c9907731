// The accessibility-tree agent of the token benchmark (examples/token_budget, BENCHMARKS.md
// "Tokens an agent reads"): the GB Appendix A steps, each followed by one ARIA snapshot of the
// acted-on window as the built-in MCP Apps view renders it in Chromium, read the way
// playwright-mcp reads a page (`locator.ariaSnapshot()`, without its element refs). No tool
// definitions and no app://windows on its side: that agent only reads snapshots.
//
// Run (after `cargo build --examples` and `npm ci --prefix tests/ts --include=dev`):
//   node tests/ts/aria_session.mjs > /tmp/aria.json
//   cargo run --example token_budget -- --aria /tmp/aria.json
// Writes {"steps": [{"step", "window", "snapshot"}]} to stdout; the Rust side counts the tokens
// with the same tokenizer as everything else. The host is tests/ts/apps/host.mjs (the official
// ext-apps AppBridge) in Debian's Chromium, legacy 2025-11-25 era; the server runs with its
// default 10,000 report rows, as in the Rust session.

import { bundleHost, launchChromium, openHost, startOrderEditor, until } from './apps/harness.mjs';

const server = await startOrderEditor({ args: [] });
const browser = await launchChromium();
const out = { steps: [] };
try {
  const bundle = await bundleHost();
  const { context, page } = await openHost(browser, server, bundle, { era: 'legacy', ui: '1' });
  const api = (fn, ...args) => page.evaluate(fn, args);
  const view = page.frameLocator('#view');
  const frame = () => page.frame({ name: 'view' });

  /** The window the view shows (its id, `data-window-id`) once it has settled, preferably on
   * `expect`; whatever it shows after 10 s otherwise. */
  async function shown(expect) {
    const now = () =>
      frame().evaluate(() => {
        const app = document.querySelector('main#app');
        return { id: app?.getAttribute('data-window-id'), state: app?.getAttribute('data-state') };
      });
    const settled = await until(
      async () => {
        const s = await now();
        return s.id && (!expect || s.id === expect) && s.state !== 'loading' ? s.id : null;
      },
      `the view to show ${expect ?? 'a window'}`,
      { timeout: 10_000 },
    ).catch(() => null);
    return settled ?? (await now()).id ?? '?';
  }

  /** The agent's one read of the step: the view's ARIA snapshot, as playwright-mcp returns it. */
  async function snapshot(step, expect) {
    await new Promise((r) => setTimeout(r, 300));
    const id = await shown(expect);
    const text = await view.locator('body').ariaSnapshot();
    out.steps.push({ step, window: id, snapshot: text });
  }

  /** Brings window `title` into the view as a user would: the blocked window's "Show “…”" button. */
  async function showInView(title) {
    await view.getByRole('button', { name: `Show “${title}”` }).first().click();
  }

  const windows = () => api(() => window.__hostApi.readWindows());
  const version = async (id) => (await windows()).windows.find((w) => w.id === id)?.version ?? 0;
  /** The agent's action: the call, and its result handed to the view (as a host shows a tool's result). */
  async function act(name, args) {
    const result = await api(([n, a]) => window.__hostApi.callTool(n, a), name, args);
    await api(([r]) => window.__hostApi.sendToolResult(r), result);
    return result.structuredContent ?? {};
  }

  await snapshot('connect, subscribe, read the windows and the tools', 'w-A');
  await act('w-A__submit', {});
  await snapshot('submit the empty order', 'w-A');
  await act('w-A__edit_field', { field: 'Recipient', value: 'Alice Zhang', expectedVersion: await version('w-A') });
  await snapshot('fill in the recipient', 'w-A');
  // The user's edit happens in the GUI this agent looks at; it acts on what it sees (no version).
  await act('w-A__edit_field', { field: 'amount', value: '$250.00', expectedVersion: await version('w-A') });
  await snapshot('write again (the user edited meanwhile)', 'w-A');
  await act('w-A__edit_field', { field: 'amount', value: '$250.00', expectedVersion: await version('w-A') });
  await snapshot('re-read the windows and retry', 'w-A');
  const opened = await act('w-A__submit', { expectedVersion: await version('w-A') });
  const dialog = opened.openedWindowIds?.[0];
  await snapshot('submit: a window-level modal opens', 'w-A');
  await act('w-A__focus', {});
  await snapshot('the blocked Order Editor refuses a call', 'w-A');
  // The dialog is shown (the blocked editor's button), answered, and read once.
  await showInView('Confirm order');
  await shown(dialog);
  await act(`${dialog}__confirm`, {});
  await snapshot('confirm in the dialog', dialog);
  await act('w-C__load_rows', { offset: 9_998, limit: 2 });
  await snapshot("page through the report's rows", 'w-C');
  const report = (await act('app__new_report', {})).openedWindowIds?.[0];
  await act(`${report}__focus`, {});
  await snapshot('open another report (app-level action)', report);
  const lock = (await act('app__lock', {})).openedWindowIds?.[0];
  await showInView('Session locked');
  await snapshot('lock the session (app-level modal)', lock);
  await act(`${lock}__unlock`, {});
  await snapshot('unlock', lock);
  await context.close();
} finally {
  await browser.close();
  await server.stop();
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
