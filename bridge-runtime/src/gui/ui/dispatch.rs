//! The one dispatcher every tool call goes through, the agent's and the user's: the tool is
//! resolved in the published table, checked by one GB-7.2 chain for app and window tools alike,
//! run, and its effects applied.

use super::Ui;
use super::undo::{Ran, Taken, UndoCopy};
use crate::catalog::schema::EXPECTED_VERSION;
use crate::catalog::{ActionSpec, ArgumentLimits, Capped, ToolName, WINDOW_TOOL_SHAPE, claimed};
use crate::gui::actor::{Actor, AgentActor};
use crate::gui::context::{ActionContext, Op, UserOnly};
use crate::gui::journal::{Operation, Outcome, Pending, record_arguments};
use crate::gui::published::ToolEntry;
use crate::gui::window::AnyActions;
use crate::model::quote::clip;
use crate::model::{ActionError, ErrorCode, FieldError, ToolError, ToolResult};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The last tool an agent called through the bridge, for a GUI to show which window the agent
/// works on (e.g. highlight it for a few seconds). Calls by the user or the app do not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCall {
    /// The tool name, `{winId}__{action}` or `app__{action}`.
    pub tool: String,
    /// The window it acted on; `None` for app-level tools.
    pub window_id: Option<String>,
    /// The action's name.
    pub action: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// When it ran.
    pub at: std::time::Instant,
    /// Counts every agent call, so a GUI can tell a new call from the one it already showed.
    pub seq: u64,
}

/// The refusal of an agent's call while the journal's sink fails ([`crate::gui::JournalSink`]).
const JOURNAL_DOWN: &str = "The app cannot record changes now; nothing was done.";

/// What a call acts on once found: the app's action set, or the open window at this index.
#[derive(Clone, Copy)]
enum Subject {
    App,
    Window(usize),
}

/// A subject as the GB-7.2 checks see it.
struct Checked<'a> {
    /// The window's id; `None` for the app.
    id: Option<&'a str>,
    /// Who the action belongs to in messages: the window's title, or "the app".
    owner: &'a str,
    operable: bool,
    actions: &'a [Arc<ActionSpec>],
    live: &'a dyn AnyActions,
    /// The window's `version`; `None` for the app, which has none (OQ-GB-12).
    version: Option<i64>,
    /// Why it is marked failed ([`Ui::failure`]), if it is.
    failed: Option<&'a str>,
    /// Its actions that are the user's alone beyond the catalog's; `None` for the app.
    user_only: Option<&'a UserOnly>,
}

impl Ui {
    /// Runs tool `name` with `args` as an agent would (`by_user = false`) or as the human user
    /// (`by_user = true`): the GB-7.2 runtime checks in OQ-GB-21 order (`window_not_found` →
    /// `blocked_by_modal` → `action_not_available` → `stale_state` → `validation_failed`), then
    /// the action, then its effects, then one commit. A rejected call leaves windows unopened
    /// and unclosed. The arguments' caps ([`ArgumentLimits`], set on the builder) are checked
    /// where `validation_failed` stands in that order.
    ///
    /// `by_user = false` is the in-process agent ([`AgentActor::in_process`]), `true` the user
    /// ([`Actor::User`]); [`Ui::call_tool_as`] takes any [`Actor`].
    pub fn call_tool(&mut self, name: &str, args: Map<String, Value>, by_user: bool) -> Result<ToolResult, ToolError> {
        let actor = if by_user { Actor::User } else { Actor::Agent(AgentActor::in_process()) };
        self.call_tool_as(actor, name, args)
    }

    /// [`Ui::call_tool`] on the account of `actor`: an agent is held to what agents may do (a
    /// window marked failed refuses it, [`Ui::failure`]), the user and the app are not; the
    /// action sees `actor` as [`ActionContext::actor`].
    pub fn call_tool_as(
        &mut self,
        actor: Actor,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<ToolResult, ToolError> {
        self.call_named(actor, name, args, false)
    }

    /// [`Ui::call_tool_as`] of a tool an adapter already found in a published table (perhaps
    /// an older one: the checks run against the windows as they are now), whose arguments the
    /// [`Bridge`](crate::gui::Bridge) already checked against the caps.
    pub(crate) fn call_listed(
        &mut self,
        actor: Actor,
        tool: &ToolEntry,
        args: Map<String, Value>,
    ) -> Result<ToolResult, ToolError> {
        self.call(Some(tool), &tool.name, args, actor, true)
    }

    /// [`Ui::call_tool_as`], arguments already checked against the caps.
    pub(crate) fn call_prechecked(
        &mut self,
        actor: Actor,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<ToolResult, ToolError> {
        self.call_named(actor, name, args, true)
    }

    /// A call of tool `name` as the current table lists it (or claims it, unlisted).
    fn call_named(
        &mut self,
        actor: Actor,
        name: &str,
        args: Map<String, Value>,
        prechecked: bool,
    ) -> Result<ToolResult, ToolError> {
        let current = self.current.clone();
        self.call(current.tool(name), name, args, actor, prechecked)
    }

    /// The caps on a call's arguments.
    pub fn argument_limits(&self) -> ArgumentLimits {
        self.limits
    }

    fn call(
        &mut self,
        listed: Option<&ToolEntry>,
        name: &str,
        args: Map<String, Value>,
        actor: Actor,
        prechecked: bool,
    ) -> Result<ToolResult, ToolError> {
        let agent = actor.is_agent();
        // Not listed: what the name claims decides which check it fails (GB-7.2-1).
        let claimed_tool = if listed.is_none() { claimed(name) } else { None };
        let tool = listed.map(|entry| &entry.tool).or(claimed_tool.as_ref());
        let pending = self.begin_call(&actor, name, tool, listed, &args);
        let out = match tool {
            // The journal's sink refuses entries: an agent's change could not be recorded.
            _ if agent && self.journal_sink && self.journal.refuses_agents() => {
                Err(ToolError::new(ErrorCode::ActionNotAvailable, JOURNAL_DOWN))
            }
            Some(tool) => self.dispatch(tool, args, actor, prechecked),
            None => Err(no_such_tool(name)),
        };
        self.commit();
        if let Some(taken) = self.undo_taken.take() {
            self.settle_undo(taken);
        }
        if let Some(pending) = pending {
            let (outcome, message) = match &out {
                Ok(result) => (Outcome::Ok, result.message.clone()),
                Err(e) => (Outcome::Error { code: e.code }, Some(e.message.clone())),
            };
            self.end(pending, outcome, message);
        }
        if let Some(entry) = listed.filter(|_| agent) {
            let seq = self.last_agent_call.as_ref().map_or(1, |c| c.seq + 1);
            let call = AgentCall {
                tool: entry.name.clone(),
                window_id: entry.window_id.clone(),
                action: entry.action.name.clone(),
                ok: out.is_ok(),
                at: std::time::Instant::now(),
                seq,
            };
            // A copy for the watchers only when someone watches (a GUI that polls pays nothing).
            if self.agent_calls.receiver_count() > 0 {
                self.agent_calls.send_replace(Some(call.clone()));
            }
            self.last_agent_call = Some(call);
        }
        out
    }

    /// The journal entry of a call of `name` (`tool` as listed or claimed) by `actor`, begun
    /// (`None` when the journal is off): its window as the name claims it, its arguments
    /// masked by the action's schema (every value masked when the action is unknown).
    fn begin_call(
        &mut self,
        actor: &Actor,
        name: &str,
        tool: Option<&ToolName>,
        listed: Option<&ToolEntry>,
        args: &Map<String, Value>,
    ) -> Option<Pending> {
        if !self.journal_on {
            return None;
        }
        let window = match tool {
            Some(ToolName::Window { id, .. }) => Some(id.as_str()),
            _ => None,
        };
        let mut pending = self.begin(actor.clone(), Operation::Tool { name: clip(name).into_owned() }, window)?;
        let spec = match (listed, tool) {
            (Some(entry), _) => Some(entry.action.clone()),
            (None, Some(ToolName::Window { id, action })) => {
                self.index_of(id).and_then(|i| self.windows[i].spec.actions.iter().find(|a| a.name == *action).cloned())
            }
            (None, Some(ToolName::App { action })) => {
                self.app.as_ref().and_then(|slot| slot.spec.actions.iter().find(|a| a.name == *action).cloned())
            }
            _ => None,
        };
        pending.arguments = record_arguments(args, spec.as_deref(), self.journal_limits.max_argument_bytes);
        Some(pending)
    }

    /// Checks, runs and applies one call of `tool`.
    fn dispatch(
        &mut self,
        tool: &ToolName,
        mut args: Map<String, Value>,
        actor: Actor,
        prechecked: bool,
    ) -> Result<ToolResult, ToolError> {
        let by_user = !actor.is_agent();
        let (subject, action) = match tool {
            ToolName::App { action } if self.app.is_some() => (Subject::App, action.as_str()),
            ToolName::App { .. } => {
                return Err(ToolError::new(ErrorCode::WindowNotFound, "This app has no app-level actions"));
            }
            ToolName::Window { id, action } => match self.index_of(id) {
                Some(i) => (Subject::Window(i), action.as_str()),
                None => {
                    let why = if self.ids.ever_used(id) { "was closed" } else { "does not exist" };
                    return Err(ToolError::new(ErrorCode::WindowNotFound, format!("Window '{}' {why}", clip(id))));
                }
            },
            ToolName::Companion { .. } => return Err(no_such_tool(&tool.to_string())),
        };
        let limits = self.limits;
        self.checked(subject).check(
            action,
            &mut args,
            by_user,
            (!prechecked).then_some(&limits),
            limits.max_problems,
        )?;

        let window_id = match subject {
            Subject::App => None,
            Subject::Window(i) => Some(self.windows[i].handle.clone()),
        };
        // An undoable window is copied before an agent's call on it (kept if the call changed
        // it); a read-only action changes nothing, so it costs no copy.
        let read_only = match subject {
            Subject::Window(i) => self.windows[i].spec.action(action).is_some_and(|a| a.hints.read_only),
            Subject::App => true,
        };
        let (copy, version_before) = match subject {
            Subject::Window(i) => {
                let e = &self.windows[i];
                let copy = (!by_user && e.undoable && self.undo_depth > 0 && !read_only)
                    .then(|| e.window.as_ref().and_then(|w| w.undo_copy()))
                    .flatten()
                    .map(|value| UndoCopy {
                        value,
                        actor: actor.clone(),
                        tool: tool.to_string(),
                        at: std::time::SystemTime::now(),
                    });
                (copy, e.published.state.version)
            }
            Subject::App => (None, 0),
        };
        let mut cx = ActionContext::new(&mut self.ids, window_id.clone(), actor);
        let outcome = match subject {
            Subject::App => {
                self.app_dirty = true;
                let slot = self.app.as_mut().expect("checked: the app has actions");
                guarded(action, || slot.actions.invoke(action, args, &mut cx))
            }
            Subject::Window(i) => {
                let entry = &mut self.windows[i];
                // Whatever the outcome, the action may have changed its window: re-render it.
                entry.dirty = true;
                let window = entry.window.as_mut().expect("window present outside invoke");
                guarded(action, || window.invoke(action, args, &mut cx))
            }
        };
        let (ops, opened, message) = (std::mem::take(&mut cx.ops), std::mem::take(&mut cx.opened), cx.message.take());
        // What the call may have done to its window, settled after the commit (undo's record).
        if let (Subject::Window(_), Some(window)) = (subject, window_id) {
            let ran = match &outcome {
                Some(Ok(_)) => Ran::Ok,
                Some(Err(_)) => Ran::Err,
                None => Ran::Panicked,
            };
            let side_effects = matches!(ran, Ran::Ok)
                && (!opened.is_empty() || ops.iter().any(|op| !matches!(op, Op::Update { id, .. } if *id == window)));
            self.undo_taken = Some(Taken { window, version_before, read_only, ran, side_effects, copy });
        }
        let Some(outcome) = outcome else {
            // The windows it asked to open or close are left alone; what it changed in its own
            // value stays, so its window is marked failed and re-rendered with a notice.
            let owner = match subject {
                Subject::App => "the app-level actions".to_owned(),
                Subject::Window(i) => format!("window '{}'", self.windows[i].handle),
            };
            self.mark_failed(
                match subject {
                    Subject::App => None,
                    Subject::Window(i) => Some(i),
                },
                format!(
                    "'{action}' failed inside the app and may have partly applied. Agents cannot operate {owner} \
                     until the user has reviewed it"
                ),
            );
            return Err(ToolError::new(
                ErrorCode::ActionNotAvailable,
                format!(
                    "'{action}' failed inside the app and may have partly applied: what it changed before failing \
                     stays. Do not retry it: {owner} is marked failed and refuses agent calls until the user has \
                     reviewed it; re-read app://windows"
                ),
            ));
        };
        let result = outcome.map_err(ToolError::from)?;
        Ok(self.finish(ops, opened, message, result))
    }

    /// `subject` as the checks see it.
    fn checked(&self, subject: Subject) -> Checked<'_> {
        match subject {
            Subject::App => {
                let slot = self.app.as_ref().expect("the app has actions");
                Checked {
                    id: None,
                    owner: "the app",
                    operable: !self.app_modal,
                    actions: &slot.spec.actions,
                    live: slot.actions.as_ref(),
                    version: None,
                    failed: self.app_failed.as_deref(),
                    user_only: None,
                }
            }
            Subject::Window(i) => {
                let e = &self.windows[i];
                Checked {
                    id: Some(&e.handle),
                    owner: &e.published.state.title,
                    operable: e.operable,
                    actions: &e.spec.actions,
                    live: e.window.as_deref().expect("window present outside invoke"),
                    version: Some(e.published.state.version),
                    failed: e.failed.as_deref(),
                    user_only: Some(&e.user_only),
                }
            }
        }
    }

    fn finish(
        &mut self,
        ops: Vec<Op>,
        opened: Vec<String>,
        message: Option<String>,
        result: Option<Value>,
    ) -> ToolResult {
        self.apply(ops);
        let opened: Vec<String> = opened.into_iter().filter(|id| self.index_of(id).is_some()).collect();
        ToolResult { message, opened_window_ids: (!opened.is_empty()).then_some(opened), result }
    }
}

impl Checked<'_> {
    /// The GB-7.2 checks after the subject was found, in OQ-GB-21 order: `blocked_by_modal` →
    /// `action_not_available` (unknown, then unavailable) → `stale_state` → `validation_failed`.
    /// Leaves `args` as the action reads them: nulls for optional parameters dropped, and a
    /// window's `expectedVersion` removed. A subject marked failed ([`Ui::failure`]) makes every
    /// action unavailable to the agent (not to the user, `by_user`). `caps`, when the caller did
    /// not check them already, are checked just before the schema; at most `max_problems`
    /// problems are listed.
    fn check(
        &self,
        action: &str,
        args: &mut Map<String, Value>,
        by_user: bool,
        caps: Option<&ArgumentLimits>,
        max_problems: usize,
    ) -> Result<(), ToolError> {
        if !self.operable {
            let message = match self.id {
                Some(id) => {
                    format!("Window '{id}' is blocked by a modal dialog; operate the windows in operableWindowIds")
                }
                None => "An app-level modal blocks the app; operate the windows in operableWindowIds".to_owned(),
            };
            return Err(ToolError::new(ErrorCode::BlockedByModal, message));
        }
        let owner = self.owner;
        let Some(spec) = self.actions.iter().find(|a| a.name == action) else {
            return Err(ToolError::new(
                ErrorCode::ActionNotAvailable,
                format!("'{owner}' has no action '{}'", clip(action)),
            ));
        };
        // Only the user takes a user-only action (issue #20 item 4); an agent learns no more
        // than that (GB-7.4-8: no new code).
        if !by_user && (spec.user_only || self.user_only.is_some_and(|u| u.covers(spec))) {
            return Err(ToolError::new(
                ErrorCode::ActionNotAvailable,
                format!("Only the user can do '{action}', in the app: ask them to"),
            ));
        }
        if let Some(why) = self.failed.filter(|_| !by_user) {
            return Err(ToolError::new(ErrorCode::ActionNotAvailable, format!("'{action}' is not available: {why}")));
        }
        if !self.live.available(action) {
            let message = match self.id {
                Some(_) => format!("'{action}' is not available in '{owner}' right now"),
                None => format!("'{action}' is not available right now"),
            };
            return Err(ToolError::new(ErrorCode::ActionNotAvailable, message));
        }
        if let Some(version) = self.version
            && spec.takes_expected_version()
            && let Some(expected) = args.get(EXPECTED_VERSION)
        {
            check_expected_version(expected, version)?;
        }
        if let Some(limits) = caps {
            let capped = limits.check(args, spec.declared());
            if !capped.is_within() {
                return Err(capped_error(limits, capped));
            }
        }
        check_args(spec, args, max_problems)?;
        if self.version.is_some() {
            args.remove(EXPECTED_VERSION);
        }
        Ok(())
    }
}

/// A name that is neither listed nor spelled as a tool name.
fn no_such_tool(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::WindowNotFound,
        format!("No tool named '{}': tool names are {WINDOW_TOOL_SHAPE}", clip(name)),
    )
}

/// `expectedVersion` present on a tool that declares it (GB-7.1-2; GB-B-3, GB-4.2-8: an int64):
/// a JSON integer in int64 range, in any JSON form (`5`, `5.0`), other than the window's
/// version is `stale_state`, checked before argument validation (OQ-GB-21); `0` and negative
/// numbers included, since no window ever has such a version. An integer beyond int64 is
/// `validation_failed` here; a fraction or another JSON type is left to the schema (`"type":
/// "integer"`), which answers `validation_failed` with the other arguments' problems; `null` is
/// absent (GB-7.1-3), dropped there with the other nulls.
fn check_expected_version(expected: &Value, current: i64) -> Result<(), ToolError> {
    let Value::Number(number) = expected else { return Ok(()) };
    // `5.0` is the integer 5 to JSON Schema too: it must not slip past the version check.
    let whole = number.as_f64().filter(|f| f.fract() == 0.0);
    let n = number.as_i64().or_else(|| whole.filter(|f| (-INT64_BOUND..INT64_BOUND).contains(f)).map(|f| f as i64));
    match n {
        Some(n) if n == current => Ok(()),
        Some(n) => Err(ToolError::stale_state(n, current)),
        None if number.is_u64() || whole.is_some() => Err(ToolError::from(ActionError::fields(vec![FieldError::new(
            EXPECTED_VERSION,
            "Must be a window version: an integer from -2^63 to 2^63 - 1",
        )]))),
        None => Ok(()),
    }
}

/// 2^63 as an `f64`: whole numbers in `-INT64_BOUND..INT64_BOUND` are int64 values.
const INT64_BOUND: f64 = 9_223_372_036_854_775_808.0;

/// Runs an app action, catching a panic inside it instead of killing the UI owner thread:
/// `Err(())` when it panicked. The state it changed before panicking stays; the caller marks
/// its window failed, and the commit that follows re-renders it, so versions and
/// notifications stay truthful. `None` when it panicked.
fn guarded(
    action: &str,
    f: impl FnOnce() -> Result<Option<Value>, ActionError>,
) -> Option<Result<Option<Value>, ActionError>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .inspect_err(|_| tracing::error!(action, "action panicked; its window is marked failed"))
        .ok()
}

/// `validation_failed` with a problem per bad field (GB-7.3-1), at most `max_problems` listed
/// and the rest counted in the message.
fn check_args(spec: &ActionSpec, args: &mut Map<String, Value>, max_problems: usize) -> Result<(), ToolError> {
    let problems = spec.validate(args, max_problems);
    if problems.is_empty() {
        return Ok(());
    }
    let mut err = ToolError::from(ActionError::fields(problems.fields));
    if problems.omitted > 0 {
        err.message = format!(
            "{}; {} more problems left out (at most {} are listed)",
            err.message,
            problems.omitted,
            max_problems.max(1)
        );
    }
    Err(err)
}

/// `validation_failed` for arguments over a cap (GB-7.3-1): the parameters at fault, and a
/// message stating the caps and how many problems were left out.
pub(crate) fn capped_error(limits: &ArgumentLimits, capped: Capped) -> ToolError {
    let message = limits.capped_message(&capped);
    ToolError::validation_failed(message, capped.problems.fields)
}
