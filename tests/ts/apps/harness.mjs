// Shared pieces of the MCP Apps browser test (tests/ts/apps.test.mjs): the order_editor server
// over streamable HTTP, the esbuild bundle of the host page (apps/host.mjs), Debian's Chromium
// driven by playwright-core, and the host page served at the server's own origin.

import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..', '..');
export const CHROMIUM = process.env.BRIDGE_CHROMIUM ?? '/usr/bin/chromium';
/** Generous: the machine is shared and slow. */
/** The access token the servers started here require (handed over in BRIDGE_MCP_TOKEN, as a
 * launcher would). Only the host page and direct clients hold it, never a view (MA-9-10). */
export const HTTP_TOKEN = 'ts-test-token-0123456789abcdef';
/** `requestInit` for an MCP SDK `StreamableHTTPClientTransport` that sends the token. */
export const AUTHED = { requestInit: { headers: { Authorization: `Bearer ${HTTP_TOKEN}` } } };

export const WAIT_MS = Number(process.env.BRIDGE_APPS_WAIT_MS ?? 30_000);

let targetDirCache;
/** Cargo's target directory: CARGO_TARGET_DIR, else `cargo metadata`, else ./target. */
export function targetDir() {
  if (targetDirCache) return targetDirCache;
  if (process.env.CARGO_TARGET_DIR) return (targetDirCache = path.resolve(process.env.CARGO_TARGET_DIR));
  try {
    const out = execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    });
    targetDirCache = JSON.parse(out).target_directory;
  } catch {
    targetDirCache = path.join(ROOT, 'target');
  }
  return targetDirCache;
}

/** `<target>/tmp/apps`, created: the bundle and the screenshots go there. */
export function outDir() {
  const dir = path.join(targetDir(), 'tmp', 'apps');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function orderEditorBin() {
  return exampleBin('order_editor', process.env.BRIDGE_ORDER_EDITOR_BIN);
}

function exampleBin(name, override) {
  if (override) return override;
  const bin = path.join(targetDir(), 'debug', 'examples', name);
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build --example ${name}\` (./test.sh does)`);
  return bin;
}

/** A port that was free a moment ago on 127.0.0.1 (the server cannot report a port 0 bind). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts `order_editor --http 127.0.0.1:PORT --rows 100`; resolves once it says it serves.
 * `options.args` replaces `--rows 100`. */
export function startOrderEditor(options = {}) {
  return startExample(orderEditorBin(), options.args ?? ['--rows', '100'], options);
}

/** Starts `schema_zoo --http 127.0.0.1:PORT` (the window `zoo`, ordinary Rust parameter types). */
export function startSchemaZoo(options) {
  return startExample(exampleBin('schema_zoo', process.env.BRIDGE_ZOO_BIN), [], options);
}

async function startExample(bin, args, { attempts = 3 } = {}) {
  let lastError;
  for (let i = 0; i < attempts; i++) {
    const port = await freePort();
    try {
      return await startOn(bin, args, port);
    } catch (e) {
      lastError = e; // the port was taken in between: try another
    }
  }
  throw lastError;
}

/** Servers still running, stopped if the test process exits without stopping them. */
const running = new Set();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

function startOn(bin, args, port) {
  const name = path.basename(bin);
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, ['--http', `127.0.0.1:${port}`, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, BRIDGE_MCP_TOKEN: HTTP_TOKEN },
    });
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    let stderr = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${name} did not start on port ${port} in ${WAIT_MS} ms; stderr:\n${stderr}`));
    }, WAIT_MS);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
      if (/serving MCP at http:\/\//.test(stderr)) {
        clearTimeout(timer);
        resolve({
          port,
          origin: `http://127.0.0.1:${port}`,
          url: `http://127.0.0.1:${port}/mcp`,
          token: HTTP_TOKEN,
          proc,
          stderr: () => stderr,
          stop: () =>
            new Promise((done) => {
              if (proc.exitCode !== null || proc.signalCode !== null) return done();
              proc.once('exit', () => done());
              proc.kill('SIGTERM');
            }),
        });
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before serving on ${port}; stderr:\n${stderr}`));
    });
  });
}

/** Bundles apps/host.mjs and the SDKs into one browser script; returns its text. */
export async function bundleHost() {
  const esbuild = await import('esbuild');
  const outfile = path.join(outDir(), 'host.js');
  await esbuild.build({
    entryPoints: [path.join(HERE, 'host.mjs')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    outfile,
    logLevel: 'warning',
    legalComments: 'none',
  });
  return readFileSync(outfile, 'utf8');
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

/** Debian's Chromium through playwright-core (never a downloaded browser); Playwright gives it a
 * fresh temporary user-data-dir. */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: WAIT_MS * 2 });
}

const HOST_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bridge MCP Apps test host</title>
<style>body { font: 14px system-ui, sans-serif; margin: 8px; } #others iframe { width: 200px; height: 40px; }</style>
</head><body><div id="slot"></div><div id="others"></div><script src="/host.js"></script></body></html>`;

/**
 * Opens the host page at the server's origin (`/host.html` and `/host.js` fulfilled by
 * Playwright, every other request, `/mcp` included, goes to the real server) in a new
 * context. `extraRoutes`: `{url: html}` for other pages (foreign frames). Returns
 * `{context, page, logs}`; `logs` collects console messages and page errors of every frame.
 */
export async function openHost(browser, server, bundle, query, extraRoutes = {}) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 1100 } });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`[console.${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`[pageerror] ${e.message}`));
  await page.route(
    (url) => url.origin === server.origin && url.pathname === '/host.html',
    (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: HOST_HTML }),
  );
  await page.route(
    (url) => url.origin === server.origin && url.pathname === '/host.js',
    // The host script alone gets the token (a constant in its own script, never in the page's
    // URL, the DOM or anything sent to a view: MA-9-10).
    (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/javascript; charset=utf-8',
        body: `const BRIDGE_MCP_TOKEN = ${JSON.stringify(server.token)};\n${bundle}`,
      }),
  );
  for (const [href, body] of Object.entries(extraRoutes)) {
    await page.route(
      (url) => url.href === href,
      (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body }),
    );
  }
  const qs = new URLSearchParams(query).toString();
  await page.goto(`${server.origin}/host.html?${qs}`);
  await page.waitForFunction(() => ['ready', 'listed', 'error'].includes(window.__host?.phase), null, {
    timeout: WAIT_MS * 2,
  });
  return { context, page, logs };
}

/** Polls `fn` until it returns a truthy value; fails with `what` and `detail()` after `timeout`. */
export async function until(fn, what, { timeout = WAIT_MS, interval = 100, detail } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      const extra = detail ? `\n${await detail()}` : '';
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last?.message ?? JSON.stringify(last)})${extra}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
