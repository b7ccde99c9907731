// The page's module against a stand-in for Tauri's IPC: every function invokes the plugin's
// command by its name with the argument names the Rust commands take (camelCase, as Tauri maps
// them), and passes the answer or the rejection through.
// Run: node --test bridge-runtime/tauri/guest-js/index.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const calls = [];
globalThis.__TAURI_INTERNALS__ = {
  invoke: async (cmd, args) => {
    calls.push([cmd, args]);
    if (cmd === 'plugin:bridge|call' && args.name === 'w-Z__x') throw { code: 'window_not_found', message: 'no' };
    if (cmd === 'plugin:event|listen') return 42;
    return { cmd };
  },
  transformCallback: (f) => ((globalThis.__handler = f), 7),
};
const bridge = await import('./index.js');

test('each function invokes its command with the Rust argument names', async () => {
  calls.length = 0;
  await bridge.windows();
  await bridge.scope();
  await bridge.call('w-A__edit_field', { field: 'amount', value: '1' });
  await bridge.operable();
  await bridge.lastAgentCall();
  await bridge.journal();
  await bridge.journal(4);
  await bridge.undo('w-A');
  await bridge.canUndo('w-A');
  await bridge.mcpConfig();
  assert.deepEqual(calls, [
    ['plugin:bridge|windows', {}],
    ['plugin:bridge|scope', {}],
    ['plugin:bridge|call', { name: 'w-A__edit_field', arguments: { field: 'amount', value: '1' } }],
    ['plugin:bridge|operable', {}],
    ['plugin:bridge|last_agent_call', {}],
    ['plugin:bridge|journal', {}],
    ['plugin:bridge|journal', { since: 4 }],
    ['plugin:bridge|undo', { windowId: 'w-A' }],
    ['plugin:bridge|can_undo', { windowId: 'w-A' }],
    ['plugin:bridge|mcp_config', {}],
  ]);
});

test('the commands it invokes are exactly the plugin commands build.rs declares', async () => {
  const declared = [...readFileSync(new URL('../build.rs', import.meta.url), 'utf8').matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
  const invoked = new Set(calls.map(([cmd]) => cmd.replace('plugin:bridge|', '')));
  assert.deepEqual([...invoked].sort(), [...declared].sort());
});

test('a refused call rejects with the coded error', async () => {
  await assert.rejects(bridge.call('w-Z__x'), { code: 'window_not_found' });
});

test('onChanged listens to bridge://changed and hands over the payload', async () => {
  calls.length = 0;
  const seen = [];
  const stop = await bridge.onChanged((p) => seen.push(p));
  assert.deepEqual(calls[0], ['plugin:event|listen', { event: 'bridge://changed', target: { kind: 'Any' }, handler: 7 }]);
  globalThis.__handler({ event: 'bridge://changed', payload: { changed: ['w-A'] } });
  assert.deepEqual(seen, [{ changed: ['w-A'] }]);
  const dropped = [];
  globalThis.__TAURI_EVENT_PLUGIN_INTERNALS__ = { unregisterListener: (event, id) => dropped.push([event, id]) };
  await stop();
  assert.equal(calls[1][0], 'plugin:event|unlisten');
  // As @tauri-apps/api's unlisten: the page's own listener is dropped before the core is told.
  assert.deepEqual(calls[1], ['plugin:event|unlisten', { event: 'bridge://changed', eventId: 42 }]);
  assert.deepEqual(dropped, [['bridge://changed', 42]]);
  delete globalThis.__TAURI_EVENT_PLUGIN_INTERNALS__;
});

test('onAgentCall listens to bridge://agent-call', async () => {
  calls.length = 0;
  const seen = [];
  await bridge.onAgentCall((p) => seen.push(p));
  assert.deepEqual(calls[0], ['plugin:event|listen', { event: 'bridge://agent-call', target: { kind: 'Any' }, handler: 7 }]);
  globalThis.__handler({ event: 'bridge://agent-call', payload: { action: 'focus', seq: 3 } });
  assert.deepEqual(seen, [{ action: 'focus', seq: 3 }]);
});

test('onJournal listens to bridge://journal', async () => {
  calls.length = 0;
  const seen = [];
  await bridge.onJournal((p) => seen.push(p));
  assert.deepEqual(calls[0], ['plugin:event|listen', { event: 'bridge://journal', target: { kind: 'Any' }, handler: 7 }]);
  globalThis.__handler({ event: 'bridge://journal', payload: { seq: 9 } });
  assert.deepEqual(seen, [{ seq: 9 }]);
});
