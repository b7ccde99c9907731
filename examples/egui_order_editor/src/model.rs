//! What the GUI draws from and hands the user's actions to: the bridge's `Ui` (the real app),
//! or [`PlainModel`], the same app written without bridge, the baseline the benchmarks compare
//! against (BENCHMARKS.md, issue #9 item 5).

use crate::app::{ConfirmOrder, OrderEditor, ReportDetails, SessionLocked};
use bridge_runtime::BridgeWindow;
use bridge_runtime::gui::{Actor, AgentCall, Journal, Ui, UndoError, UndoPoint};
use bridge_runtime::render::FieldSet;
use serde_json::{Map, Value};

/// A user action the model refused: the message and, for a form field, its own problem.
pub struct Refused {
    pub message: String,
    pub field_error: Option<String>,
}

/// The app's state as the GUI sees it.
pub trait Model {
    /// Windows of a type, in opening order, by id.
    fn editors(&self) -> Vec<(&str, &OrderEditor)>;
    fn dialogs(&self) -> Vec<(&str, &ConfirmOrder)>;
    fn locks(&self) -> Vec<(&str, &SessionLocked)>;
    fn reports(&self) -> Vec<(&str, &ReportDetails)>;
    /// The window's one-line summary (its title when it has none).
    fn summary(&self, id: &str) -> String;
    /// The window's `version`, where there is one.
    fn version(&self, id: &str) -> Option<i64>;
    /// Whether the user may operate window `id` (no modal blocks it).
    fn is_operable(&self, id: &str) -> bool;
    /// Whether `action` of window `id` can run now (operable, and the action available).
    fn is_available(&self, id: &str, action: &str) -> bool;
    /// The agent's last call, where there is an agent.
    fn last_agent_call(&self) -> Option<&AgentCall>;
    /// Counts changes to what is drawn (for the layout report and the latency benchmark).
    fn revision(&self) -> u64;
    /// Runs tool `tool` (`{winId}__{action}` / `app__{action}`) with `args` as the user; the
    /// success message, or why not.
    fn apply(&mut self, tool: &str, args: Map<String, Value>) -> Result<String, Refused>;
    /// The journal of every operation, where there is one (none without bridge).
    fn journal(&self) -> Option<&Journal>;
    /// The agent change of window `id` that "Undo agent's change" would take back, or why it
    /// cannot; `None` where nothing keeps agent changes (without bridge).
    fn can_undo(&self, id: &str) -> Option<Result<UndoPoint, UndoError>>;
    /// Takes back the agent's last change of window `id` as the user; the message, or why not.
    fn undo(&mut self, id: &str) -> Result<String, Refused>;
    /// Whether "Confirm order" is the user's alone ("Only I confirm orders").
    fn user_confirms(&self) -> bool;
    /// Switches "Only I confirm orders", as the user.
    fn set_user_confirms(&mut self, on: bool) -> String;
}

/// What the status bar says after the user's switch of "Only I confirm orders".
fn user_confirms_message(on: bool) -> String {
    if on { "Only you confirm orders now: agents cannot" } else { "Agents may confirm orders again" }.into()
}

impl Model for Ui {
    fn editors(&self) -> Vec<(&str, &OrderEditor)> {
        self.windows_of::<OrderEditor>().collect()
    }
    fn dialogs(&self) -> Vec<(&str, &ConfirmOrder)> {
        self.windows_of::<ConfirmOrder>().collect()
    }
    fn locks(&self) -> Vec<(&str, &SessionLocked)> {
        self.windows_of::<SessionLocked>().collect()
    }
    fn reports(&self) -> Vec<(&str, &ReportDetails)> {
        self.windows_of::<ReportDetails>().collect()
    }
    fn summary(&self, id: &str) -> String {
        let w = self.snapshot().windows.iter().find(|w| w.id == id);
        w.map(|w| w.summary.clone().unwrap_or_else(|| w.title.clone())).unwrap_or_default()
    }
    fn version(&self, id: &str) -> Option<i64> {
        self.snapshot().windows.iter().find(|w| w.id == id).map(|w| w.version)
    }
    fn is_operable(&self, id: &str) -> bool {
        Ui::is_operable(self, id)
    }
    fn is_available(&self, id: &str, action: &str) -> bool {
        // Exactly what agents see: the tool is listed (GB-5.1-4).
        self.published().tools.iter().any(|t| t.window_id.as_deref() == Some(id) && t.action.name == action)
    }
    fn last_agent_call(&self) -> Option<&AgentCall> {
        Ui::last_agent_call(self)
    }
    fn revision(&self) -> u64 {
        self.published().windows_rev
    }
    fn apply(&mut self, tool: &str, args: Map<String, Value>) -> Result<String, Refused> {
        self.call_tool(tool, args, true).map(|r| r.text_mirror()).map_err(|e| Refused {
            field_error: e.fields.as_ref().and_then(|f| f.first()).map(|f| f.error.clone()),
            message: e.message,
        })
    }
    fn journal(&self) -> Option<&Journal> {
        Some(Ui::journal(self))
    }
    fn can_undo(&self, id: &str) -> Option<Result<UndoPoint, UndoError>> {
        Some(Ui::can_undo(self, id))
    }
    fn undo(&mut self, id: &str) -> Result<String, Refused> {
        match Ui::undo(self, id) {
            Ok(done) => Ok(format!("Undid the agent's {}", action_of(&done.tool))),
            Err(e) => Err(Refused { message: e.to_string(), field_error: None }),
        }
    }
    fn user_confirms(&self) -> bool {
        self.windows_of::<OrderEditor>().next().is_some_and(|(_, e)| e.user_confirms)
    }
    fn set_user_confirms(&mut self, on: bool) -> String {
        crate::app::set_user_confirms(self, Actor::User, on);
        user_confirms_message(on)
    }
}

/// The action of tool name `tool` (`w-A__edit_field` → `edit_field`).
pub fn action_of(tool: &str) -> &str {
    tool.split_once("__").map_or(tool, |(_, action)| action)
}

/// The Order Editor without bridge: the same window types held in plain fields and changed by
/// hand-written code, the way the app would be written with no agent in mind.
pub struct PlainModel {
    editors: Vec<(String, OrderEditor)>,
    dialogs: Vec<(String, ConfirmOrder)>,
    locks: Vec<(String, SessionLocked)>,
    reports: Vec<(String, ReportDetails)>,
    rows: usize,
    next: u32,
    revision: u64,
}

impl PlainModel {
    /// The start-up windows of `app::open_initial`: the editor `w-A` and a report `w-C`.
    pub fn new(rows: usize) -> Self {
        Self {
            editors: vec![("w-A".into(), OrderEditor::new(12345))],
            dialogs: Vec::new(),
            locks: Vec::new(),
            reports: vec![("w-C".into(), ReportDetails::new(rows))],
            rows,
            next: 1,
            revision: 1,
        }
    }

    fn fresh_id(&mut self) -> String {
        self.next += 1;
        format!("w-{}", self.next)
    }

    fn refuse(message: &str) -> Refused {
        Refused { message: message.into(), field_error: None }
    }
}

/// `id` and `w` as pairs of references.
fn refs<T>(v: &[(String, T)]) -> Vec<(&str, &T)> {
    v.iter().map(|(id, w)| (id.as_str(), w)).collect()
}

impl Model for PlainModel {
    fn editors(&self) -> Vec<(&str, &OrderEditor)> {
        refs(&self.editors)
    }
    fn dialogs(&self) -> Vec<(&str, &ConfirmOrder)> {
        refs(&self.dialogs)
    }
    fn locks(&self) -> Vec<(&str, &SessionLocked)> {
        refs(&self.locks)
    }
    fn reports(&self) -> Vec<(&str, &ReportDetails)> {
        refs(&self.reports)
    }
    fn summary(&self, id: &str) -> String {
        fn find<'a, T>(v: &'a [(String, T)], id: &str) -> Option<&'a T> {
            v.iter().find(|w| w.0 == id).map(|w| &w.1)
        }
        if let Some(editor) = find(&self.editors, id) {
            return editor.summary();
        }
        let rendered = find(&self.dialogs, id)
            .map(BridgeWindow::render)
            .or_else(|| find(&self.locks, id).map(BridgeWindow::render))
            .or_else(|| find(&self.reports, id).map(BridgeWindow::render));
        rendered.map(|r| r.summary.unwrap_or(r.title)).unwrap_or_default()
    }
    fn version(&self, _id: &str) -> Option<i64> {
        None
    }
    fn is_operable(&self, id: &str) -> bool {
        self.locks.is_empty() && !self.dialogs.iter().any(|(_, d)| d.owner == id)
    }
    fn is_available(&self, id: &str, action: &str) -> bool {
        let placed = self.editors.iter().any(|(e, w)| e == id && w.placed);
        self.is_operable(id) && !(placed && matches!(action, "edit_field" | "set_payment_password" | "submit"))
    }
    fn last_agent_call(&self) -> Option<&AgentCall> {
        None
    }
    fn journal(&self) -> Option<&Journal> {
        None
    }
    fn can_undo(&self, _id: &str) -> Option<Result<UndoPoint, UndoError>> {
        None
    }
    fn undo(&mut self, _id: &str) -> Result<String, Refused> {
        Err(Self::refuse("nothing keeps the agent's changes without bridge"))
    }
    fn user_confirms(&self) -> bool {
        self.editors.first().is_some_and(|(_, e)| e.user_confirms)
    }
    fn set_user_confirms(&mut self, on: bool) -> String {
        for (_, editor) in &mut self.editors {
            editor.user_confirms = on;
        }
        for (_, dialog) in &mut self.dialogs {
            dialog.by_user = on;
        }
        self.revision += 1;
        user_confirms_message(on)
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn apply(&mut self, tool: &str, args: Map<String, Value>) -> Result<String, Refused> {
        let (id, action) = tool.split_once("__").ok_or_else(|| Self::refuse("no such action"))?;
        let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let message = match action {
            "edit_field" => {
                let editor = self.editors.iter_mut().find(|e| e.0 == id).ok_or_else(|| Self::refuse("no editor"))?;
                editor
                    .1
                    .form
                    .set_field(&text("field"), Value::String(text("value")))
                    .map_err(|e| Refused { message: e.clone(), field_error: Some(e) })?;
                editor.1.revalidate();
                format!("Set {}", text("field"))
            }
            "set_payment_password" => {
                let editor = self.editors.iter_mut().find(|e| e.0 == id).ok_or_else(|| Self::refuse("no editor"))?;
                editor.1.form.payment_password = bridge_runtime::Secret::new(text("password"));
                editor.1.password_changes = editor.1.password_changes.saturating_add(1);
                editor.1.revalidate();
                "Payment password set".into()
            }
            "submit" => {
                let editor = self.editors.iter().find(|e| e.0 == id).ok_or_else(|| Self::refuse("no editor"))?;
                if let Some(p) = editor.1.problems().first() {
                    return Err(Self::refuse(&p.error));
                }
                let dialog = ConfirmOrder {
                    owner: id.to_owned(),
                    recipient: editor.1.form.recipient.clone(),
                    amount: editor.1.form.amount.clone(),
                    by_user: editor.1.user_confirms,
                };
                let dialog_id = self.fresh_id();
                self.dialogs.push((dialog_id, dialog));
                "Submitted; a confirmation dialog popped up".into()
            }
            "confirm" | "cancel" => {
                let at = self.dialogs.iter().position(|d| d.0 == id).ok_or_else(|| Self::refuse("no dialog"))?;
                let (_, dialog) = self.dialogs.remove(at);
                if action == "confirm"
                    && let Some(editor) = self.editors.iter_mut().find(|e| e.0 == dialog.owner)
                {
                    editor.1.placed = true;
                    editor.1.revalidate();
                }
                if action == "confirm" { "Order placed" } else { "Cancelled" }.into()
            }
            "new_report" => {
                let report_id = self.fresh_id();
                self.reports.push((report_id, ReportDetails::new(self.rows)));
                "Opened a new report window".into()
            }
            "lock" => {
                let lock_id = self.fresh_id();
                self.locks.push((lock_id, SessionLocked { message: "Locked by request".into() }));
                "Session locked".into()
            }
            "unlock" => {
                self.locks.retain(|l| l.0 != id);
                "Session unlocked".into()
            }
            "close" => {
                self.reports.retain(|r| r.0 != id);
                "Closed".into()
            }
            _ => return Err(Self::refuse("no such action")),
        };
        self.revision += 1;
        Ok(message)
    }
}
