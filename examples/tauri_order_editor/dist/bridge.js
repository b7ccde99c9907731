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

/**
 * The bridge window this page is scoped to, `{windowId}`, when it is that window's own Tauri
 * window (its `call` and `undo` act on that window only); `null` in the app's other pages.
 */
export const scope = () => invoke('scope');

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

/** The event emitted after each journal append: `{seq}`, the newest entry's. */
export const JOURNAL_EVENT = 'bridge://journal';

/** The event emitted after each agent call, changed anything or not: `{tool, windowId, action, ok, seq, ageMs}`. */
export const AGENT_CALL_EVENT = 'bridge://agent-call';

// Listens to `event`; resolves with a function that stops listening.
const listen = async (event, handler) => {
  const global = globalThis.__TAURI__?.event?.listen;
  if (global) return global(event, (e) => handler(e.payload));
  // Without withGlobalTauri: the plugin:event commands, as @tauri-apps/api does it (the stop
  // function drops the page's own listener too, then tells the core).
  const internals = globalThis.__TAURI_INTERNALS__;
  const id = internals.transformCallback((e) => handler(e.payload));
  const eventId = await internals.invoke('plugin:event|listen', { event, target: { kind: 'Any' }, handler: id });
  return async () => {
    globalThis.__TAURI_EVENT_PLUGIN_INTERNALS__?.unregisterListener?.(event, eventId);
    await internals.invoke('plugin:event|unlisten', { event, eventId });
  };
};

/**
 * Calls `handler(payload)` after each change. Resolves with a function that stops listening.
 * Needs the event API (`core:event:default`, in `core:default`).
 */
export const onChanged = (handler) => listen(CHANGED_EVENT, handler);

/**
 * Calls `handler(payload)` after each agent call (for the highlight), including calls that
 * changed nothing, such as a `focus`. Resolves with a function that stops listening.
 */
export const onAgentCall = (handler) => listen(AGENT_CALL_EVENT, handler);

/**
 * Calls `handler({seq})` after each journal append (for a journal panel: re-read
 * `journal(lastSeq - 1)`). Resolves with a function that stops listening.
 */
export const onJournal = (handler) => listen(JOURNAL_EVENT, handler);
