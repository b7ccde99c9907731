// tauri-plugin-bridge: the page's API, a plain ES module (no bundler).
//
// As a module:   import * as bridge from './bridge.js'      (copy this file next to the page)
// Without one:   with `app.withGlobalTauri: true`, load it with <script type="module"> or use
//                window.__TAURI__.core.invoke('plugin:bridge|…') directly; this module uses the
//                global when it is there.
//
// Every agent-supplied string these return is data: render it as text (textContent), never
// as HTML.

const core = () => {
  if (globalThis.__TAURI__?.core?.invoke) return globalThis.__TAURI__.core;
  if (globalThis.__TAURI_INTERNALS__?.invoke) return globalThis.__TAURI_INTERNALS__;
  throw new Error('tauri-plugin-bridge: no Tauri IPC in this page');
};

const invoke = (cmd, args) => core().invoke(`plugin:bridge|${cmd}`, args ?? {});

/** The `app://windows` JSON, masked: `{operableWindowIds, windows: [...]}`. */
export const windows = () => invoke('windows');

/**
 * Runs tool `name` (`{winId}__{action}` or `app__{action}`) as the user. Resolves with the
 * ToolResult; rejects with the GB error object `{code, message, currentVersion?, fields?}`
 * (e.g. `stale_state`, `validation_failed`).
 */
export const call = (name, args = {}) => invoke('call', { name, arguments: args });

/** `operableWindowIds` now. */
export const operable = () => invoke('operable');

/** `{tool, windowId, action, ok, seq, ageMs}` of the agent's last call, or null. */
export const lastAgentCall = () => invoke('last_agent_call');

/** Journal entries with `seq > since` (all kept entries without it), oldest first. */
export const journal = (since) => invoke('journal', since === undefined ? {} : { since });

/** Takes back the agent's last change of `windowId` as the user: `{tool, version}`. */
export const undo = (windowId) => invoke('undo', { windowId });

/** The change `undo(windowId)` would take back, or a rejection `{code, message}` saying why not. */
export const canUndo = (windowId) => invoke('can_undo', { windowId });

/** `{url, token, tokenSource, tokenFile, mcpServers}`; needs `bridge:allow-mcp-config`. */
export const mcpConfig = () => invoke('mcp_config');

/** The event emitted after each change: `{generation, changed, closed, toolsChanged, operableChanged}`. */
export const CHANGED_EVENT = 'bridge://changed';

/**
 * Calls `handler(payload)` after each change. Resolves with a function that stops listening.
 * Needs the event API (`core:event:default`, in `core:default`).
 */
export const onChanged = async (handler) => {
  const listen = globalThis.__TAURI__?.event?.listen;
  if (listen) return listen(CHANGED_EVENT, (e) => handler(e.payload));
  // Without withGlobalTauri: the plugin:event|listen command, as @tauri-apps/api does it.
  const internals = globalThis.__TAURI_INTERNALS__;
  const id = internals.transformCallback((e) => handler(e.payload));
  const eventId = await internals.invoke('plugin:event|listen', {
    event: CHANGED_EVENT,
    target: { kind: 'Any' },
    handler: id,
  });
  return () => internals.invoke('plugin:event|unlisten', { event: CHANGED_EVENT, eventId });
};
