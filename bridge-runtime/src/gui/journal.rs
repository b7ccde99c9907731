//! The in-memory journal: one entry per operation, who made it and what came of it.

use crate::catalog::ActionSpec;
use crate::gui::actor::Actor;
use crate::model::{ErrorCode, REDACTED};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::io;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Default of [`JournalLimits::max_entries`].
pub const DEFAULT_JOURNAL_ENTRIES: usize = 10_000;
/// Default of [`JournalLimits::max_bytes`]: 16 MiB.
pub const DEFAULT_JOURNAL_BYTES: usize = 16 << 20;
/// Default of [`JournalLimits::max_argument_bytes`]: 4 KiB.
pub const DEFAULT_JOURNAL_ARGUMENT_BYTES: usize = 4 << 10;

/// What one entry costs besides its strings and arguments, as the byte bound counts it.
const ENTRY_OVERHEAD: usize = 256;

/// The journal's bounds ([`BridgeBuilder::journal_limits`](crate::gui::BridgeBuilder::journal_limits)).
///
/// | bound | default | past it |
/// | --- | --- | --- |
/// | `max_entries` | [`DEFAULT_JOURNAL_ENTRIES`] = 10,000 | the oldest entry is dropped, [`Journal::dropped`] counts it |
/// | `max_bytes` | [`DEFAULT_JOURNAL_BYTES`] = 16 MiB, as [`JournalEntry::size`] counts | as above |
/// | `max_argument_bytes` | [`DEFAULT_JOURNAL_ARGUMENT_BYTES`] = 4 KiB of a call's masked arguments as compact JSON | the entry keeps the first bytes as a string ([`JournalEntry::arguments`]) and the full size ([`JournalEntry::arguments_bytes`]) |
///
/// So a journal holds at most about `max_bytes` whatever callers send, and a flood of calls
/// cannot push earlier entries out unnoticed: `dropped` says how many went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalLimits {
    /// Most entries kept (at least 1).
    pub max_entries: usize,
    /// Most bytes kept, as [`JournalEntry::size`] counts them (at least one entry is kept).
    pub max_bytes: usize,
    /// Most bytes of a call's masked arguments kept in its entry.
    pub max_argument_bytes: usize,
}

impl Default for JournalLimits {
    fn default() -> Self {
        Self {
            max_entries: DEFAULT_JOURNAL_ENTRIES,
            max_bytes: DEFAULT_JOURNAL_BYTES,
            max_argument_bytes: DEFAULT_JOURNAL_ARGUMENT_BYTES,
        }
    }
}

impl JournalLimits {
    /// With `n` entries at most (at least 1).
    pub fn max_entries(mut self, n: usize) -> Self {
        self.max_entries = n.max(1);
        self
    }

    /// With `bytes` at most.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// With `bytes` of a call's arguments kept at most.
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }
}

/// What an operation was. Serialized `{"kind": "tool", "name": "w-1__submit"}`, `{"kind":
/// "edit"}`, `{"kind": "open"}`, `{"kind": "close"}`, `{"kind": "refresh"}`, `{"kind":
/// "clearFailure"}`, `{"kind": "undo", "tool": "w-1__submit"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Operation {
    /// A tool call, by its name as called (clipped, as error messages quote it).
    Tool {
        /// The tool name.
        name: String,
    },
    /// An edit of a window's (or the app-level) state ([`Ui::edit_as`](crate::gui::Ui::edit_as)).
    Edit,
    /// A window opened by the host ([`Ui::open`](crate::gui::Ui::open)).
    Open,
    /// A window closed by the host ([`Ui::close`](crate::gui::Ui::close)).
    Close,
    /// Every window re-rendered ([`Ui::refresh_all`](crate::gui::Ui::refresh_all)).
    Refresh,
    /// A failure mark cleared ([`Ui::clear_failure`](crate::gui::Ui::clear_failure)).
    ClearFailure,
    /// An agent's change taken back ([`Ui::undo`](crate::gui::Ui::undo)).
    Undo {
        /// The tool whose change was taken back.
        tool: String,
    },
}

/// How an operation ended. Serialized `{"status": "ok"}`, `{"status": "error", "code":
/// "stale_state"}`, `{"status": "panicked"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Outcome {
    /// It took effect.
    Ok,
    /// It was refused or failed with this GB error code (GB-7.4-8).
    Error {
        /// The code.
        code: ErrorCode,
    },
    /// A host edit panicked (its window is marked failed, [`Ui::failure`](crate::gui::Ui::failure)).
    Panicked,
}

/// One journal entry. Serialized in camelCase with `at` as milliseconds since the Unix epoch
/// and `duration` in microseconds: `{"seq": 1, "at": 1764755000000, "actor": {…},
/// "operation": {…}, "windowId": "w-1", "windowTitle": "Order Editor", "arguments": {…},
/// "argumentsBytes": 42, "argumentsTruncated": false, "versionBefore": 3, "versionAfter": 4,
/// "outcome": {…}, "message": "…", "opened": [], "closed": [], "duration": 120, "count": 1}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JournalEntry {
    /// Its number: 1 for the journal's first entry, then one more for each entry appended
    /// (dropped ones included, so a gap never hides).
    pub seq: u64,
    /// When the operation started.
    #[serde(serialize_with = "unix_ms")]
    pub at: SystemTime,
    /// Who made it.
    pub actor: Actor,
    /// What it was.
    pub operation: Operation,
    /// The window it acted on (as the tool name claims, for a call); `None` for app-level
    /// operations and [`Operation::Refresh`].
    pub window_id: Option<String>,
    /// That window's title as it was before the operation (after it, for one it opened); `None`
    /// when no such window was open.
    pub window_title: Option<String>,
    /// A call's arguments with every sensitive parameter's value replaced by `"••••••"`, the
    /// mask sensitive fields show in the snapshot (GB-4.5-2): a parameter is sensitive when its
    /// schema says `"writeOnly": true`, which a `Secret<…>` parameter's does by itself, and a
    /// parameter marked `#[bridge(sensitive)]` does too (a `Secret<…>` field of a
    /// `#[bridge(args)]` struct, of an object parameter, a map's values and an enum variant's
    /// likewise, at any depth). The value of a key the schema does not declare (a misspelled
    /// parameter, refused by validation) is masked too, and so is a value of a JSON type its
    /// schema does not declare (a string sent as `expectedVersion`). When the tool's action is unknown (no
    /// such window or action), every value is masked. Past
    /// [`JournalLimits::max_argument_bytes`] this is a JSON string holding the first bytes of
    /// the masked arguments as compact JSON. `null` for operations other than calls.
    pub arguments: Value,
    /// The size of the call's arguments as compact JSON, as received (before masking); for a
    /// call refused before its turn, as the caps measured it (string escapes not counted).
    pub arguments_bytes: usize,
    /// Whether [`JournalEntry::arguments`] is cut short.
    pub arguments_truncated: bool,
    /// The window's `version` before the operation; `None` without a window.
    pub version_before: Option<i64>,
    /// Its `version` after the operation; `None` when it is not open afterwards.
    pub version_after: Option<i64>,
    /// How it ended.
    pub outcome: Outcome,
    /// The result's `message`, or the error's.
    pub message: Option<String>,
    /// Windows it opened.
    pub opened: Vec<String>,
    /// Windows it closed (modals closed with their owner included).
    pub closed: Vec<String>,
    /// How long it took to run, from its start under the UI's turn to its commit; a call
    /// refused before its turn (over a cap, busy, timed out) counts its time until refused.
    #[serde(serialize_with = "micros")]
    pub duration: Duration,
    /// How many identical rejections this entry stands for: the same actor, operation,
    /// arguments, code and message, one right after another, are one entry with a count
    /// (at least 1).
    pub count: u64,
}

impl JournalEntry {
    /// What the entry counts for against [`JournalLimits::max_bytes`]: a fixed overhead plus
    /// its strings and its arguments as compact JSON.
    pub fn size(&self) -> usize {
        self.size_with(json_len(&self.arguments))
    }

    /// [`JournalEntry::size`], given its arguments' length as compact JSON.
    fn size_with(&self, arguments_len: usize) -> usize {
        let strings = [&self.window_id, &self.window_title, &self.message]
            .iter()
            .map(|s| s.as_ref().map_or(0, String::len))
            .sum::<usize>();
        let operation = match &self.operation {
            Operation::Tool { name } | Operation::Undo { tool: name } => name.len(),
            _ => 0,
        };
        let lists = self.opened.iter().chain(&self.closed).map(String::len).sum::<usize>();
        ENTRY_OVERHEAD + strings + operation + lists + arguments_len + actor_len(&self.actor)
    }

    /// Whether `self` is the same rejection as `other` (see [`JournalEntry::count`]).
    fn same_rejection(&self, other: &JournalEntry) -> bool {
        matches!(self.outcome, Outcome::Error { .. })
            && self.outcome == other.outcome
            && self.actor == other.actor
            && self.operation == other.operation
            && self.window_id == other.window_id
            && self.message == other.message
            && self.arguments == other.arguments
            && self.arguments_bytes == other.arguments_bytes
    }
}

fn unix_ms<S: serde::Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    let ms = at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    s.serialize_u64(u64::try_from(ms).unwrap_or(u64::MAX))
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn actor_len(actor: &Actor) -> usize {
    actor.agent().map_or(0, |a| {
        a.connection.as_ref().map_or(0, |c| c.len())
            + a.token.as_ref().map_or(0, |t| t.len())
            + a.client_info.as_ref().map_or(0, |i| i.name.len() + i.version.len())
    })
}

/// Counts the bytes written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value`'s length as compact JSON, without building the text.
fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// `null`'s length as JSON.
const NULL_LEN: usize = 4;

/// A call's arguments as an entry keeps them.
pub(crate) struct Recorded {
    /// Masked, or cut (a string).
    pub(crate) value: Value,
    /// Their size as received.
    pub(crate) bytes: usize,
    /// Whether `value` is cut short.
    pub(crate) cut: bool,
    /// `value`'s length as compact JSON (what [`JournalEntry::size`] counts for it).
    pub(crate) kept_len: usize,
}

/// A call's arguments as an entry keeps them.
pub(crate) fn record_arguments(args: &Map<String, Value>, spec: Option<&ActionSpec>, max_bytes: usize) -> Recorded {
    let mut changed = false;
    let masked = match spec {
        Some(spec) => mask_object(args, spec.input_schema.as_ref(), &mut changed),
        None => {
            changed = !args.is_empty();
            args.keys().map(|k| (k.clone(), Value::String(REDACTED.to_owned()))).collect()
        }
    };
    let masked = Value::Object(masked);
    let masked_len = json_len(&masked);
    // Nothing masked (the usual case): the copy is the arguments, measured once.
    let bytes = if changed { json_len(args) } else { masked_len };
    if masked_len <= max_bytes {
        return Recorded { value: masked, bytes, cut: false, kept_len: masked_len };
    }
    let value = Value::String(cut_json(&masked, max_bytes));
    Recorded { kept_len: json_len(&value), value, bytes, cut: true }
}

/// The first `max_bytes` of `value` as compact JSON (cut at a character boundary).
fn cut_json(value: &Value, max_bytes: usize) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    let mut cut = max_bytes.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text
}

/// What an entry keeps of the arguments of a call refused before its turn (over a cap, busy,
/// timed out): nothing but their size (nothing read them; they may be huge).
pub(crate) fn unread_arguments(bytes: usize) -> Recorded {
    Recorded { value: Value::Null, bytes, cut: true, kept_len: NULL_LEN }
}

/// Keeps journal entries beyond the in-memory [`Journal`](crate::gui::Journal): an audit trail
/// ([`BridgeBuilder::journal_sink`](crate::gui::BridgeBuilder::journal_sink)).
///
/// **When.** Each entry is handed over *before* the operation's result returns to its caller,
/// under the UI's turn, in `seq` order: an agent that was told "done" can count on the entry
/// having been taken. A bounded queue drained by another thread would cost less per call but
/// loses its tail when the app crashes, and a crash right after an agent's change is exactly
/// when the record is wanted; so the write is synchronous and a slow sink slows every
/// operation (keep [`JournalSink::write`] to one buffered append; a file's `write` costs a few
/// microseconds, see BENCHMARKS.md).
///
/// **Repeats.** A run of identical rejections is one in-memory entry with a `count`; the sink
/// gets that entry again, with the same `seq`, when the count reaches 2, 4, 8, … and when the
/// run ends (the next entry): a flood of one rejection costs a line per doubling. A reader keeps
/// the last record of each `seq`; after a crash mid-run the last count written is a lower bound.
/// Rejections changed nothing.
///
/// **Failures.** When `write` fails (or panics), the entry waits in a backlog (at most
/// [`JournalLimits::max_entries`](crate::gui::JournalLimits::max_entries); past that the oldest
/// rejection is dropped, then the oldest entry, counted in
/// [`Journal::sink_dropped`](crate::gui::Journal::sink_dropped)), the error is logged once and
/// shown by [`Journal::sink_error`](crate::gui::Journal::sink_error),
/// and every **agent** call is refused with `action_not_available` before it runs ("The app
/// cannot record changes now; nothing was done.") until the sink takes the backlog again (each
/// agent call retries it first). The user's and the app's own operations go on and wait in the
/// backlog: the person in front of the app is never locked out by a full disk. The one call
/// during which the sink first fails has already taken effect when its entry is refused: it
/// waits in the backlog (never pushed out by rejections) and reaches the sink when the sink
/// recovers; a crash before then loses it.
///
/// Implemented for closures `FnMut(&JournalEntry) -> io::Result<()>`.
pub trait JournalSink: Send + 'static {
    /// Keeps `entry`, or says why it could not (the entry is offered again later).
    fn write(&mut self, entry: &JournalEntry) -> io::Result<()>;
}

impl<F> JournalSink for F
where
    F: FnMut(&JournalEntry) -> io::Result<()> + Send + 'static,
{
    fn write(&mut self, entry: &JournalEntry) -> io::Result<()> {
        self(entry)
    }
}

/// Deepest schema nesting followed when masking; deeper values are masked whole.
const MASK_DEPTH: usize = 32;

type Schema = Map<String, Value>;

/// `args` masked by the action's input schema `root` (see [`mask_value`]).
/// Sets `changed` when any value was masked.
fn mask_object(args: &Map<String, Value>, root: &Schema, changed: &mut bool) -> Map<String, Value> {
    let mut masker = Masker { root, changed: false };
    let out = match masker.object(args, root) {
        Value::Object(map) => map,
        _ => {
            masker.changed = true;
            args.keys().map(|k| (k.clone(), Value::String(REDACTED.to_owned()))).collect()
        }
    };
    *changed = masker.changed;
    out
}

/// Masks values by the action's input schema `root`, noting whether it masked any.
struct Masker<'a> {
    root: &'a Schema,
    changed: bool,
}

impl Masker<'_> {
    /// The arguments object masked (see [`Masker::value`]).
    fn object(&mut self, args: &Map<String, Value>, root: &Schema) -> Value {
        let parts = self.parts(root);
        if parts.iter().any(|p| write_only(p)) {
            return self.mask();
        }
        self.map(args, &parts, 0)
    }

    fn mask(&mut self) -> Value {
        self.changed = true;
        Value::String(REDACTED.to_owned())
    }

    fn parts<'s>(&self, schema: &'s Schema) -> Vec<&'s Schema>
    where
        Self: 's,
    {
        let mut parts = Vec::new();
        flatten(schema, self.root, 0, &mut parts);
        parts
    }

    /// `value` with every part the schema marks `writeOnly` replaced by the mask, recursively
    /// through objects (`properties`, else `additionalProperties`: a map's values), arrays (`items`)
    /// and the variants of `allOf`/`anyOf`/`oneOf` (an enum's variants, `Option<…>`): a value is
    /// masked when any schema that may describe it is write-only, so a union errs on the side of
    /// the mask. A key the schema does not declare (a misspelled or unknown parameter, refused by
    /// validation but still journaled) is masked too: nothing says it is not a secret. Free-form
    /// values (a schema that declares no properties) are kept as they are.
    fn value(&mut self, value: &Value, schema: &Schema, depth: usize) -> Value {
        // `null` holds nothing: an absent optional secret stays visible as absent.
        if value.is_null() {
            return Value::Null;
        }
        let parts = self.parts(schema);
        if depth > MASK_DEPTH || parts.iter().any(|p| write_only(p)) || of_no_declared_type(value, &parts) {
            return self.mask();
        }
        match value {
            Value::Object(map) => self.map(map, &parts, depth),
            Value::Array(items) => {
                let subs: Vec<&Schema> =
                    parts.iter().filter_map(|p| p.get("items").and_then(Value::as_object)).collect();
                Value::Array(items.iter().map(|item| self.all(item, &subs, depth)).collect())
            }
            // A scalar where the schema expects only a structure (an object parameter sent as a
            // string): nothing says which part of it is secret.
            _ if expects_only_structure(&parts) => self.mask(),
            other => other.clone(),
        }
    }

    /// An object's entries masked by the schemas `parts` that may describe it.
    fn map(&mut self, map: &Map<String, Value>, parts: &[&Schema], depth: usize) -> Value {
        let structured = parts.iter().any(|p| p.contains_key("properties") || p.contains_key("additionalProperties"));
        let masked = map
            .iter()
            .map(|(k, v)| {
                let mut subs: Vec<&Schema> = parts
                    .iter()
                    .filter_map(|p| p.get("properties").and_then(|ps| ps.get(k)).and_then(Value::as_object))
                    .collect();
                if subs.is_empty() {
                    subs =
                        parts.iter().filter_map(|p| p.get("additionalProperties").and_then(Value::as_object)).collect();
                }
                let v = if subs.is_empty() {
                    if structured { self.mask() } else { v.clone() }
                } else {
                    self.all(v, &subs, depth)
                };
                (k.clone(), v)
            })
            .collect();
        Value::Object(masked)
    }

    /// `value` masked by every schema in `subs` in turn.
    fn all(&mut self, value: &Value, subs: &[&Schema], depth: usize) -> Value {
        subs.iter().fold(value.clone(), |v, sub| self.value(&v, sub, depth + 1))
    }
}

/// Whether `value`'s JSON type is none of those the schemas `parts` declare (`type`), when any
/// declares one: a string sent as `expectedVersion` or as a number parameter is refused by
/// validation, but journaled, and nothing says it is not a secret sent in the wrong place.
fn of_no_declared_type(value: &Value, parts: &[&Schema]) -> bool {
    let accepts = |ty: &str| match ty {
        "string" => value.is_string(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    };
    let mut typed = false;
    for ty in parts.iter().filter_map(|p| p.get("type")) {
        typed = true;
        let accepted = match ty {
            Value::String(ty) => accepts(ty),
            Value::Array(tys) => tys.iter().any(|t| t.as_str().is_none_or(accepts)),
            _ => true,
        };
        if accepted {
            return false;
        }
    }
    typed
}

/// Whether the schemas `parts` describe only objects or arrays (properties, additional
/// properties or items) and none of them a scalar (`type` string, number, integer, boolean,
/// `enum`, `const`).
fn expects_only_structure(parts: &[&Schema]) -> bool {
    let structured = |p: &&Schema| ["properties", "additionalProperties", "items"].iter().any(|k| p.contains_key(*k));
    let scalar = |p: &&Schema| {
        p.contains_key("enum")
            || p.contains_key("const")
            || match p.get("type") {
                Some(Value::String(t)) => matches!(t.as_str(), "string" | "number" | "integer" | "boolean"),
                Some(Value::Array(ts)) => {
                    ts.iter().any(|t| matches!(t.as_str(), Some("string" | "number" | "integer" | "boolean")))
                }
                _ => false,
            }
    };
    parts.iter().any(structured) && !parts.iter().any(scalar)
}

/// Whether `schema` says `"writeOnly": true`.
fn write_only(schema: &Schema) -> bool {
    schema.get("writeOnly").and_then(Value::as_bool) == Some(true)
}

/// `schema` (resolved) and, recursively, the schemas it combines with `allOf`/`anyOf`/`oneOf`,
/// into `out` (at most [`MASK_DEPTH`] levels of combinators).
fn flatten<'a>(schema: &'a Schema, root: &'a Schema, depth: usize, out: &mut Vec<&'a Schema>) {
    let schema = resolve(schema, root);
    out.push(schema);
    if depth > MASK_DEPTH {
        return;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for part in schema.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object) {
            flatten(part, root, depth + 1, out);
        }
    }
}

/// `schema` itself, or the `#/$defs/…` (or `#/definitions/…`) schema its `$ref` names.
fn resolve<'a>(schema: &'a Schema, root: &'a Schema) -> &'a Schema {
    let Some(path) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/")) else {
        return schema;
    };
    let mut parts = path.split('/');
    let found = parts.next().and_then(|first| root.get(first)).and_then(|v| parts.try_fold(v, |v, part| v.get(part)));
    found.and_then(Value::as_object).unwrap_or(schema)
}

struct Inner {
    /// Off ([`BridgeBuilder::journal`](crate::gui::BridgeBuilder::journal)): nothing is appended.
    on: bool,
    limits: JournalLimits,
    entries: VecDeque<JournalEntry>,
    /// Each kept entry's [`JournalEntry::size`], measured once when appended.
    sizes: VecDeque<usize>,
    bytes: usize,
    next_seq: u64,
    dropped: u64,
    /// Where entries also go ([`BridgeBuilder::journal_sink`](crate::gui::BridgeBuilder::journal_sink)).
    sink: Option<Box<dyn JournalSink>>,
    /// Entries the sink refused, oldest first, written before the next entry.
    backlog: VecDeque<JournalEntry>,
    /// Entries the backlog's bound dropped before the sink took them.
    sink_dropped: u64,
    /// The sink's last error, while entries wait in the backlog.
    sink_error: Option<String>,
    /// The `count` the sink last got for the newest entry.
    sunk_count: u64,
}

impl Inner {
    /// Hands `entry` to the sink after the backlog; what the sink refuses waits in the backlog
    /// (at most [`JournalLimits::max_entries`] entries; past that the oldest is dropped and
    /// counted). A repeat of the backlog's newest entry (same `seq`) replaces it.
    fn sink(&mut self, entry: &JournalEntry) {
        if self.sink.is_none() {
            return;
        }
        if let Some(last) = self.backlog.back_mut()
            && last.seq == entry.seq
        {
            *last = entry.clone();
        } else {
            self.backlog.push_back(entry.clone());
        }
        self.drain();
    }

    /// Writes the backlog to the sink, oldest first, until it is empty or the sink fails.
    fn drain(&mut self) {
        let Some(sink) = self.sink.as_mut() else { return };
        while let Some(next) = self.backlog.front() {
            // A sink that panics is a sink that failed: the UI goes on (and refuses agents).
            let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.write(next)))
                .unwrap_or_else(|_| Err(io::Error::other("the journal sink panicked")));
            match written {
                Ok(()) => {
                    self.backlog.pop_front();
                }
                Err(e) => {
                    if self.sink_error.is_none() {
                        tracing::error!(error = %e, "the journal sink failed; agent calls are refused until it takes entries again");
                    }
                    self.sink_error = Some(e.to_string());
                    // Full: rejections go first (they changed nothing), so a flood of refused
                    // calls cannot push out the entry of a change that took effect.
                    while self.backlog.len() > self.limits.max_entries {
                        let rejected = self.backlog.iter().position(|e| matches!(e.outcome, Outcome::Error { .. }));
                        match rejected {
                            Some(at) => self.backlog.remove(at),
                            None => self.backlog.pop_front(),
                        };
                        self.sink_dropped += 1;
                    }
                    return;
                }
            }
        }
        if self.sink_error.take().is_some() {
            tracing::info!("the journal sink takes entries again");
        }
    }
}

/// The in-memory journal of every operation on the UI: agent calls (refused ones included),
/// the user's calls and edits, the app's own changes. Append-only: bridge appends, nobody
/// edits or deletes an entry (no method here does, and nothing an agent can call reaches it);
/// only the bounds ([`JournalLimits`]) drop the oldest entries, counted in
/// [`Journal::dropped`]. Companion requests are not journaled.
///
/// **Not an audit trail by itself.** It lives in the app's memory and ends with the process;
/// what it drops is gone. Read it for the app's own display and for tests. For an audit trail
/// set a [`JournalSink`] ([`JsonLinesSink`](crate::gui::JsonLinesSink) writes a file): every entry is handed to it before
/// the operation's result returns.
///
/// A cheap handle (`Clone` shares it): [`Ui::journal`](crate::gui::Ui::journal),
/// [`Bridge::journal`](crate::gui::Bridge::journal). Entries are appended before the
/// operation's result returns to its caller.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Mutex<Inner>>,
    /// Counts appends (new entries and repeats) for [`Journal::watch`].
    appended: Arc<tokio::sync::watch::Sender<u64>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("Journal")
            .field("entries", &inner.entries.len())
            .field("bytes", &inner.bytes)
            .field("dropped", &inner.dropped)
            .finish_non_exhaustive()
    }
}

impl Journal {
    pub(crate) fn new(on: bool, limits: JournalLimits, sink: Option<Box<dyn JournalSink>>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner {
                on: on || sink.is_some(),
                limits,
                entries: VecDeque::new(),
                sizes: VecDeque::new(),
                bytes: 0,
                next_seq: 1,
                dropped: 0,
                sink,
                backlog: VecDeque::new(),
                sink_dropped: 0,
                sink_error: None,
                sunk_count: 0,
            })),
            appended: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// A receiver that wakes after each append: a new entry, or a repeat counted on the newest
    /// one (its `count` grew). The value counts appends since the start. For a display that
    /// follows the journal without polling: on each wake, read [`Journal::since`] the last
    /// `seq` it showed, minus one (the newest entry may have grown). Appends that come faster
    /// than the receiver reads are folded into one wake.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.appended.subscribe()
    }

    /// Wakes [`Journal::watch`]'s receivers (nothing to do without one).
    fn appended(&self) {
        if self.appended.receiver_count() > 0 {
            self.appended.send_modify(|n| *n += 1);
        }
    }

    /// Whether a sink is set ([`BridgeBuilder::journal_sink`](crate::gui::BridgeBuilder::journal_sink)).
    pub fn has_sink(&self) -> bool {
        self.lock().sink.is_some()
    }

    /// The sink's last error while it refuses entries (`None` when it takes them, or there is
    /// none). While it is `Some`, agent calls are refused (see [`JournalSink`]).
    pub fn sink_error(&self) -> Option<String> {
        self.lock().sink_error.clone()
    }

    /// How many entries wait for the sink to take them (at most
    /// [`JournalLimits::max_entries`]).
    pub fn sink_backlog(&self) -> usize {
        self.lock().backlog.len()
    }

    /// How many entries the sink never got: the backlog was full while it failed.
    pub fn sink_dropped(&self) -> u64 {
        self.lock().sink_dropped
    }

    /// Whether agent calls must be refused now: a sink is set and still refuses the backlog
    /// after one more try.
    pub(crate) fn refuses_agents(&self) -> bool {
        let mut inner = self.lock();
        if inner.sink_error.is_none() {
            return false;
        }
        inner.drain();
        inner.sink_error.is_some()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether it records operations (default yes; [`BridgeBuilder::journal`](crate::gui::BridgeBuilder::journal)).
    pub fn is_on(&self) -> bool {
        self.lock().on
    }

    /// The bounds.
    pub fn limits(&self) -> JournalLimits {
        self.lock().limits
    }

    /// Every entry kept, oldest first.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.lock().entries.iter().cloned().collect()
    }

    /// The entries kept whose `seq` is greater than `seq`, oldest first (for a display that
    /// polls: pass the last `seq` it showed).
    pub fn since(&self, seq: u64) -> Vec<JournalEntry> {
        let inner = self.lock();
        let start = inner.entries.partition_point(|e| e.seq <= seq);
        inner.entries.range(start..).cloned().collect()
    }

    /// The newest entry.
    pub fn last(&self) -> Option<JournalEntry> {
        self.lock().entries.back().cloned()
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no entry is kept.
    pub fn is_empty(&self) -> bool {
        self.lock().entries.is_empty()
    }

    /// The bytes the kept entries count for ([`JournalEntry::size`]).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// How many entries the bounds dropped, oldest first, since the journal began.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Appends `entry` (its `seq` and `count` are set here), or counts it on the last entry
    /// when it repeats that rejection; then drops the oldest entries past the bounds.
    pub(crate) fn append(&self, finished: Finished) {
        let Finished { mut entry, size } = finished;
        let mut inner = self.lock();
        if !inner.on {
            return;
        }
        if let Some(last) = inner.entries.back_mut()
            && last.same_rejection(&entry)
        {
            last.count = last.count.saturating_add(1);
            // The sink gets a run's count at 2, 4, 8, … and when the run ends: a flood of one
            // rejection writes a line per doubling, not a line per call.
            let repeat = last.count.is_power_of_two().then(|| last.clone());
            if let Some(repeat) = repeat.filter(|_| inner.sink.is_some()) {
                inner.sink(&repeat);
                inner.sunk_count = repeat.count;
            }
            drop(inner);
            self.appended();
            return;
        }
        if let Some(last) = inner.entries.back()
            && inner.sink.is_some()
            && last.count != inner.sunk_count
        {
            let run = last.clone();
            inner.sink(&run);
        }
        entry.seq = inner.next_seq;
        entry.count = 1;
        inner.next_seq += 1;
        inner.bytes += size;
        inner.sizes.push_back(size);
        inner.sink(&entry);
        inner.sunk_count = 1;
        inner.entries.push_back(entry);
        while inner.entries.len() > 1
            && (inner.entries.len() > inner.limits.max_entries || inner.bytes > inner.limits.max_bytes)
        {
            if inner.entries.pop_front().is_some() {
                inner.bytes -= inner.sizes.pop_front().unwrap_or(0);
                inner.dropped += 1;
            }
        }
        drop(inner);
        self.appended();
    }
}

/// An entry being filled in: what is known when an operation starts.
pub(crate) struct Pending {
    pub(crate) at: SystemTime,
    pub(crate) started: std::time::Instant,
    pub(crate) actor: Actor,
    pub(crate) operation: Operation,
    pub(crate) window_id: Option<String>,
    pub(crate) window_title: Option<String>,
    pub(crate) arguments: Recorded,
    pub(crate) version_before: Option<i64>,
}

impl Pending {
    pub(crate) fn new(actor: Actor, operation: Operation) -> Self {
        Self {
            at: SystemTime::now(),
            started: std::time::Instant::now(),
            actor,
            operation,
            window_id: None,
            window_title: None,
            arguments: Recorded { value: Value::Null, bytes: 0, cut: false, kept_len: NULL_LEN },
            version_before: None,
        }
    }

    /// The entry, with what the operation's end tells.
    pub(crate) fn finish(
        self,
        outcome: Outcome,
        message: Option<String>,
        version_after: Option<i64>,
        opened: Vec<String>,
        closed: Vec<String>,
    ) -> Finished {
        let Recorded { value: arguments, bytes: arguments_bytes, cut: arguments_truncated, kept_len } = self.arguments;
        let entry = JournalEntry {
            seq: 0,
            at: self.at,
            actor: self.actor,
            operation: self.operation,
            window_id: self.window_id,
            window_title: self.window_title,
            arguments,
            arguments_bytes,
            arguments_truncated,
            version_before: self.version_before,
            version_after,
            outcome,
            message,
            opened,
            closed,
            duration: self.started.elapsed(),
            count: 1,
        };
        let size = entry.size_with(kept_len);
        Finished { entry, size }
    }
}

/// A finished entry and its [`JournalEntry::size`], measured once.
pub(crate) struct Finished {
    entry: JournalEntry,
    size: usize,
}
