// The permission probe (`--probe-window`, tests only): a page in a window no capability
// names asks the bridge for the windows and for a user call; both must be refused.
import * as bridge from './bridge.js';

const show = (id, promise) =>
  promise.then(
    (value) => { document.getElementById(id).textContent = `allowed: ${JSON.stringify(value)}`; },
    (error) => { document.getElementById(id).textContent = `refused: ${String(error?.message ?? error)}`; },
  );

show('probe-windows', Promise.resolve().then(() => bridge.windows()));
show('probe-call', Promise.resolve().then(() =>
  bridge.call('w-A__edit_field', { field: 'Recipient', value: 'probe was here' })));
