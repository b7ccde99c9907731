// A minimal MCP Apps host page for the browser test (tests/ts/apps.test.mjs), built on the
// official host-side bridge: `AppBridge` + `PostMessageTransport` from
// @modelcontextprotocol/ext-apps/app-bridge, with the TypeScript SDK v2 `Client` and
// `StreamableHTTPClientTransport` (@modelcontextprotocol/client) talking to the bridge server at
// this page's own origin (`/mcp`, same-origin: the server has no CORS).
//
// esbuild bundles this file (and the SDKs) into one script at test time; it never lands in the
// repository. The page is configured by its query string:
//   era=auto|legacy|pin   `versionNegotiation` mode (`pin` pins 2026-07-28)
//   ui=1|0                whether the client declares the io.modelcontextprotocol/ui extension
//   mount=1|0             whether to mount the view (a host without the extension only lists/reads)
//   reads=1|0             whether the host proxies the view's resources/read (serverResources)
//   window=TITLE          the window to show (default "Order Editor")
//   show=ACTION&showArgs=JSON  the agent's call that shows it (default focus, {})
//
// Everything the test needs is on `window`:
//   __host      {phase, era, protocolVersion, tools, uiUri, resource, csp, cspHeader, initialized,
//                appInfo, appCapabilities, focusResult, wire, errors}
//   __hostLog   one entry per `tools/call` the view asked for, with the host's decision
//   __hostReads one entry per `resources/read` the view asked for
//   __consent   (params) => boolean | Promise<boolean>: the host's approval policy (MA-9-7,
//               MA-11-3, MA-11-4, MA-13-12); a refusal is a JSON-RPC error to the view
//   __beforeForward  optional async (params) => void, run after consent and before the call
//                    goes to the server (the test makes competing edits there)
//   __beforeRead     optional async (params) => void, run before a view's read is forwarded
//   __hostApi   {callTool, readResource, readWindows, listTools, addFrame, sendToolResult,
//                setHostContext}

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const UI = 'io.modelcontextprotocol/ui';
const UI_MIME = 'text/html;profile=mcp-app';
const WINDOW_ID_KEY = 'bridge/windowId';

const query = new URLSearchParams(location.search);
const era = query.get('era') ?? 'auto';
const withUi = query.get('ui') !== '0';
const mount = query.get('mount') !== '0' && withUi;
// reads=0: a host that does not proxy the view's resources/read (no serverResources capability).
const proxyReads = query.get('reads') !== '0';
// The window to show (by title) and the agent's call that shows it, with its arguments.
const windowTitle = query.get('window') ?? 'Order Editor';
const showAction = query.get('show') ?? 'focus';
const showArgs = JSON.parse(query.get('showArgs') ?? '{}');

const host = {
  phase: 'starting',
  era,
  withUi,
  protocolVersion: null,
  protocolEra: null,
  serverCapabilities: null,
  tools: [],
  editorId: null,
  tool: null,
  uiUri: null,
  resource: null,
  csp: null,
  cspHeader: null,
  initialized: false,
  appInfo: null,
  appCapabilities: null,
  focusResult: null,
  wire: [],
  errors: [],
};
window.__host = host;
window.__hostLog = [];
window.__hostReads = [];
window.__consent = () => true;
window.__beforeForward = null;
window.__beforeRead = null;

function errorInfo(e) {
  return { name: e?.name, code: e?.code, message: e?.message ?? String(e), data: e?.data };
}

function note(where, e) {
  host.errors.push({ where, ...errorInfo(e) });
}

function clientOptions() {
  const capabilities = withUi ? { extensions: { [UI]: { mimeTypes: [UI_MIME] } } } : {};
  const options = { capabilities };
  if (era === 'auto') options.versionNegotiation = { mode: 'auto' };
  else if (era === 'pin') options.versionNegotiation = { mode: { pin: '2026-07-28' } };
  else if (era !== 'legacy') throw new Error(`unknown era ${era}`);
  return options;
}

async function newClient(name) {
  const client = new Client({ name, version: '0.0.0' }, clientOptions());
  // The token stays with the host (MA-9-10): it is a constant of this script, prepended by the
  // test harness, and goes into request headers only.
  // eslint-disable-next-line no-undef
  const token = typeof BRIDGE_MCP_TOKEN === 'string' ? BRIDGE_MCP_TOKEN : undefined;
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', location.href), { requestInit }));
  return client;
}

/** The CSP the host puts on the view, built from the resource's `_meta.ui.csp` (MA-9-2,
 * MA-9-9, MA-9-14): everything `'none'` unless the server listed an origin; inline script and
 * style only, since the view is one self-contained document (MA-9-3). */
export function cspFor(csp) {
  const list = (xs, base = []) => {
    const all = [...base, ...(xs ?? [])];
    return all.length ? all.join(' ') : "'none'";
  };
  const res = csp?.resourceDomains ?? [];
  return [
    "default-src 'none'",
    `script-src ${list(res, ["'unsafe-inline'"])}`,
    `style-src ${list(res, ["'unsafe-inline'"])}`,
    `img-src ${list(res, ['data:'])}`,
    `font-src ${list(res)}`,
    `media-src ${list(res, ['data:'])}`,
    `connect-src ${list(csp?.connectDomains)}`,
    `frame-src ${list(csp?.frameDomains)}`,
    `base-uri ${list(csp?.baseUriDomains)}`,
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The view's HTML with the CSP meta element as the first thing in <head>. */
function withCsp(html, header) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${header.replace(/"/g, '&quot;')}">`;
  if (/<head[^>]*>/i.test(html)) return html.replace(/<head[^>]*>/i, (m) => `${m}${meta}`);
  return meta + html;
}

/** A PostMessageTransport that records every message (both directions) in `host.wire`. */
function loggingTransport(win) {
  const transport = new PostMessageTransport(win, win);
  let inner;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () =>
      inner &&
      ((message, extra) => {
        host.wire.push({ dir: 'in', at: Date.now(), message });
        inner(message, extra);
      }),
    set: (h) => {
      inner = h;
    },
  });
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    host.wire.push({ dir: 'out', at: Date.now(), message });
    return send(message, options);
  };
  return transport;
}

const hostStyles = {
  variables: {
    '--color-background-primary': '#ffffff',
    '--color-background-secondary': '#f3f4f6',
    '--color-text-primary': '#111827',
    '--color-text-secondary': '#4b5563',
    '--color-border-primary': '#d1d5db',
    '--color-text-danger': '#b91c1c',
    '--font-sans': 'system-ui, sans-serif',
  },
};

async function main() {
  const client = await newClient('bridge-apps-test-host');
  host.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  host.protocolEra = client.getProtocolEra() ?? null;
  host.serverCapabilities = client.getServerCapabilities() ?? null;

  const api = {
    /** A tool call as an agent (not the view) makes it. */
    callTool: async (name, args = {}) => client.callTool({ name, arguments: args }),
    readResource: async (uri) => {
      try {
        return { result: await client.request({ method: 'resources/read', params: { uri } }) };
      } catch (e) {
        return { error: errorInfo(e) };
      }
    },
    readWindows: async () => {
      const r = await client.request({ method: 'resources/read', params: { uri: 'app://windows' } });
      return JSON.parse(r.contents[0].text);
    },
    listTools: async () => (await client.request({ method: 'tools/list', params: {} })).tools,
    /** Adds a sibling iframe to the host page (foreign-message tests). */
    addFrame: (src, attrs = {}) =>
      new Promise((resolve) => {
        const f = document.createElement('iframe');
        for (const [k, v] of Object.entries(attrs)) f.setAttribute(k, v);
        f.addEventListener('load', () => resolve(true), { once: true });
        f.src = src;
        document.getElementById('others').appendChild(f);
      }),
    sendToolResult: async (result) => host.bridge.sendToolResult(result),
    /** Changes the host context (theme, tokens...); AppBridge tells the view what changed. */
    setHostContext: (patch) => host.bridge.setHostContext({ ...host.bridge.getHostContext?.(), ...host.context, ...patch }),
  };
  window.__hostApi = api;

  host.tools = await api.listTools();
  const windows = await api.readWindows();
  host.editorId = windows.windows.find((w) => w.title === windowTitle)?.id ?? null;
  // The editor's tools, found by the window id the server puts on each (never by splitting
  // names, OQ-GB-13).
  const editorTools = host.tools.filter((t) => t._meta?.[WINDOW_ID_KEY] === host.editorId);
  host.tool = editorTools.find((t) => t.name === `${host.editorId}__edit_field`) ?? editorTools[0] ?? null;
  host.uiUri = host.tool?._meta?.ui?.resourceUri ?? null;
  if (!mount) {
    host.phase = 'listed';
    return;
  }
  if (!host.tool || !host.uiUri) throw new Error('no window tool with _meta.ui.resourceUri');
  // The call that shows the view: an agent brings the editor to the front.
  const focusTool = editorTools.find((t) => t.name === `${host.editorId}__${showAction}`);
  if (!focusTool) throw new Error(`no ${host.editorId}__${showAction} tool`);

  const read = await client.request({ method: 'resources/read', params: { uri: host.uiUri } });
  host.resource = read.contents[0];
  if (host.resource.mimeType !== UI_MIME) throw new Error(`view mimeType ${host.resource.mimeType}`);
  host.csp = host.resource._meta?.ui?.csp ?? {};
  host.cspHeader = cspFor(host.csp);

  // The sandbox: scripts only. No allow-same-origin (the view gets an opaque origin and cannot
  // reach this page, its storage or cookies: MA-9-1), no forms, popups or top navigation (MA-9-8).
  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.name = 'view';
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.setAttribute('title', 'App view');
  iframe.style.cssText = 'width: 720px; height: 900px; border: 1px solid #d1d5db;';
  document.getElementById('slot').appendChild(iframe);

  host.context = {
    theme: 'light',
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    platform: 'web',
    locale: 'en-US',
    toolInfo: { tool: focusTool },
    styles: hostStyles,
    containerDimensions: { maxHeight: 900, width: 720 },
  };
  const bridge = new AppBridge(
    client,
    { name: 'bridge-apps-test-host', version: '0.0.0' },
    { serverTools: {}, ...(proxyReads ? { serverResources: {} } : {}), logging: {}, sandbox: { csp: host.csp, permissions: {} } },
    { hostContext: host.context },
  );
  host.bridge = bridge;
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      host.initialized = true;
      host.appInfo = bridge.getAppVersion() ?? null;
      host.appCapabilities = bridge.getAppCapabilities() ?? null;
      resolve();
    };
  });
  // MA-11-6: the view asks for a size; the host applies it within its own caps.
  bridge.onsizechange = (size) => {
    host.lastSize = size;
    if (typeof size?.height === 'number') iframe.style.height = `${Math.max(120, Math.min(900, Math.ceil(size.height)))}px`;
  };
  bridge.onloggingmessage = (m) => {
    (host.viewLogs ??= []).push(m);
  };
  // Connect before the view's document exists, so its first message (ui/initialize) finds the
  // listener. The WindowProxy stays the same when srcdoc loads.
  await bridge.connect(loggingTransport(iframe.contentWindow));

  // Consent stays in the host (MA-9-7, MA-11-3, MA-11-4, MA-13-12): connect() installed a
  // forwarder that sends every view tools/call straight to the server; this replaces it with
  // one that asks the host's policy first and records the decision.
  bridge.oncalltool = async (params) => {
    const entry = { at: Date.now(), name: params.name, arguments: params.arguments ?? {}, decision: null };
    window.__hostLog.push(entry);
    let allowed;
    try {
      allowed = await window.__consent(params);
    } catch (e) {
      allowed = false;
    }
    if (!allowed) {
      entry.decision = 'declined';
      throw new Error(`The host declined ${params.name}: the user did not approve it`);
    }
    entry.decision = 'allowed';
    if (window.__beforeForward) await window.__beforeForward(params);
    try {
      const result = await client.callTool({ name: params.name, arguments: params.arguments ?? {} });
      entry.result = result;
      return result;
    } catch (e) {
      entry.error = errorInfo(e);
      throw e;
    }
  };
  const forwardRead = bridge.onreadresource;
  bridge.onreadresource = async (params, extra) => {
    const entry = { at: Date.now(), uri: params.uri, done: false };
    window.__hostReads.push(entry);
    if (window.__beforeRead) await window.__beforeRead(params);
    try {
      if (!proxyReads) throw new Error('This host does not proxy resources/read');
      return await forwardRead(params, extra);
    } finally {
      entry.done = true;
    }
  };

  iframe.srcdoc = withCsp(host.resource.text, host.cspHeader);
  host.phase = 'mounted';
  await initialized;

  // MA-10-4: only now does the host talk to the view. An agent brings the editor to the front;
  // the host shows the view with that call's input and result, as it would for any tool call.
  const args = showArgs;
  await bridge.sendToolInput({ arguments: args });
  host.focusResult = await client.callTool({ name: focusTool.name, arguments: args });
  await bridge.sendToolResult(host.focusResult);
  host.phase = 'ready';
}

main().catch((e) => {
  note('main', e);
  host.phase = 'error';
});
