//! Drawing the Order Editor's windows with egui, from a [`Model`].
//!
//! With bridge, each frame locks the [`GuiOwner`] once: queued agent operations run first,
//! then the windows are drawn from `Ui::windows_of`/`Ui::snapshot`. What the user does becomes
//! an [`Intent`] (a tool call as the user), applied after drawing through
//! `Ui::call_tool(.., by_user = true)`: the same checks, versions and notifications as an
//! agent's call. Without bridge ([`PlainModel`], the benchmarks' baseline) the same drawing
//! code runs over plain fields.

use crate::app::{OrderEditor, ReportDetails};
use crate::model::{Model, PlainModel, action_of};
use bridge_runtime::gui::{Actor, AgentActor, GuiOwner, JournalEntry, Operation, Outcome, UndoError, UndoPoint};
use eframe::egui::{self, Color32, RichText, Stroke};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// The form's fields: key (as `edit_field` takes it), label, whether it is a password (set with
/// `set_payment_password` instead).
const FIELDS: [(&str, &str, bool); 3] =
    [("recipient", "Recipient", false), ("amount", "Amount", false), ("payment_password", "Payment password", true)];

/// How long the window the agent acted on stays highlighted.
const HIGHLIGHT: Duration = Duration::from_secs(3);

/// Rows per page in a report window.
const PAGE: usize = 25;

/// Something the user did, applied after drawing, as the user.
#[derive(Debug, PartialEq)]
enum Intent {
    /// Tool `tool` with `args`.
    Call {
        tool: String,
        args: Map<String, Value>,
        /// The form field this commits, so a refusal is shown next to it.
        field: Option<(String, &'static str)>,
    },
    /// A report page to move to (local view state, no tool).
    Page(String, usize),
    /// "Undo agent's change" of this window (`Ui::undo`).
    Undo(String),
    /// "Only I confirm orders" switched on or off (`app::set_user_confirms`).
    UserConfirms(bool),
}

impl Intent {
    fn call(tool: String, args: Value) -> Self {
        Intent::Call { tool, args: args.as_object().cloned().unwrap_or_default(), field: None }
    }

    fn page(id: &str, page: usize) -> Self {
        Intent::Page(id.to_owned(), page)
    }

    /// This call commits form field `key`.
    fn for_field(self, key: (String, &'static str)) -> Self {
        match self {
            Intent::Call { tool, args, .. } => Intent::Call { tool, args, field: Some(key) },
            other => other,
        }
    }
}

/// Most journal entries the panel keeps (the newest).
const JOURNAL_ROWS: usize = 200;

/// Journal rows in view at once (the panel scrolls for more). Each costs a frame its text's
/// layout and tessellation (BENCHMARKS.md).
const VISIBLE_ROWS: f32 = 6.0;

/// Journal rows the layout report carries (the newest first).
const REPORTED_ROWS: usize = 20;

/// One journal entry as the panel shows it, formatted once when it arrives.
#[derive(Debug, Clone, PartialEq)]
struct JournalRow {
    seq: u64,
    /// Local time, `HH:MM:SS`.
    time: String,
    /// Who: "You", "App", or the agent ("Agent <clientInfo name> · token <label>").
    who: String,
    agent: bool,
    /// The tool's action, or `edit`/`undo <action>`/`open`/`close`/`refresh`.
    what: String,
    window: String,
    /// `ok`, or the error code.
    outcome: String,
    ok: bool,
    /// The arguments as the journal keeps them (sensitive ones masked), clipped.
    args: String,
    /// `v3→4`.
    versions: String,
    /// Identical rejections in a row.
    count: u64,
}

impl JournalRow {
    fn new(entry: &JournalEntry) -> Self {
        let (who, agent) = match &entry.actor {
            Actor::User => ("You".to_owned(), false),
            Actor::App => ("App".to_owned(), false),
            Actor::Agent(a) => (agent_label(a), true),
            _ => ("?".to_owned(), false),
        };
        let what = match &entry.operation {
            Operation::Tool { name } => action_of(name).to_owned(),
            Operation::Undo { tool } => format!("undo {}", action_of(tool)),
            Operation::Edit => "edit".into(),
            Operation::Open => "open".into(),
            Operation::Close => "close".into(),
            Operation::Refresh => "refresh".into(),
            Operation::ClearFailure => "clear failure".into(),
            _ => "?".into(),
        };
        let (outcome, ok) = match entry.outcome {
            Outcome::Ok => ("ok".to_owned(), true),
            Outcome::Error { code } => (code.as_str().to_owned(), false),
            _ => ("panicked".to_owned(), false),
        };
        let args = match &entry.arguments {
            Value::Null => String::new(),
            Value::Object(map) if map.is_empty() => String::new(),
            // Cut short by the journal: its first bytes, as JSON text.
            Value::String(cut) => format!("{}…", clip(cut, 80)),
            other => clip(&other.to_string(), 80),
        };
        let versions = match (entry.version_before, entry.version_after) {
            (Some(b), Some(a)) if a != b => format!("v{b}→{a}"),
            (Some(b), Some(_)) => format!("v{b}"),
            (None, Some(a)) => format!("→v{a}"),
            (Some(b), None) => format!("v{b}→closed"),
            (None, None) => String::new(),
        };
        JournalRow {
            seq: entry.seq,
            time: hhmmss(entry.at),
            who,
            agent,
            what,
            window: entry.window_id.clone().unwrap_or_else(|| "app".into()),
            outcome,
            ok,
            args,
            versions,
            count: entry.count,
        }
    }

    /// The row as one line of text, as drawn (`HH:MM:SS  who  what  window  outcome  versions
    /// arguments`), for the layout report.
    fn text(&self) -> String {
        let mut line = format!("{}  {}  {}  {}  {}", self.time, self.who, self.what, self.window, self.outcome);
        if self.count > 1 {
            line.push_str(&format!(" ×{}", self.count));
        }
        for part in [&self.versions, &self.args] {
            if !part.is_empty() {
                line.push_str("  ");
                line.push_str(part);
            }
        }
        line
    }

    /// The row drawn: who in the actor's colour, the outcome red when refused.
    fn job(&self, ui: &egui::Ui) -> egui::text::LayoutJob {
        let font = egui::TextStyle::Monospace.resolve(ui.style());
        let plain = ui.visuals().text_color();
        let weak = ui.visuals().weak_text_color();
        let mut job = egui::text::LayoutJob::default();
        let mut put = |text: &str, color: Color32| {
            job.append(text, 0.0, egui::TextFormat::simple(font.clone(), color));
        };
        put(&format!("{}  ", self.time), weak);
        let who = if self.agent { journal_agent_color() } else { Color32::from_rgb(30, 140, 60) };
        put(&clip(&self.who, 40), who);
        put(&format!("  {}  {}  ", self.what, self.window), plain);
        let outcome = if self.count > 1 { format!("{} ×{}", self.outcome, self.count) } else { self.outcome.clone() };
        put(&outcome, if self.ok { Color32::from_rgb(30, 140, 60) } else { Color32::from_rgb(200, 40, 40) });
        for part in [&self.versions, &self.args] {
            if !part.is_empty() {
                put("  ", plain);
                put(part, weak);
            }
        }
        job
    }
}

/// An agent as the journal panel names it: what it calls itself (`clientInfo`, self-reported)
/// and what the transport proved (the token's label, else the connection or session); just
/// "Agent" for an in-process caller.
fn agent_label(agent: &AgentActor) -> String {
    let mut label = "Agent".to_owned();
    if let Some(info) = &agent.client_info {
        label.push(' ');
        label.push_str(&clip(&info.name, 24));
    }
    if let Some(token) = &agent.token {
        label.push_str(&format!(" · token {}", clip(token, 16)));
    } else if let Some(connection) = &agent.connection {
        label.push_str(&format!(" · {}", clip(connection, 8)));
    }
    label
}

/// `text`'s first `n` characters, with `…` when cut.
fn clip(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `at` in local time, `HH:MM:SS`.
fn hhmmss(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(at).format("%H:%M:%S").to_string()
}

/// A refused field commit: the message, and the model's value it was refused against (the
/// user's text stays until the model moves on or they commit again).
struct Rejected {
    error: String,
    model_value: String,
}

/// Where the app's state lives.
pub enum Source {
    /// In the bridge (the real app): drawn under the owner's lock.
    Bridge(GuiOwner),
    /// In plain fields, without bridge (the baseline of the benchmarks).
    Plain(Box<PlainModel>),
}

/// The egui app.
pub struct OrderEditorApp {
    source: Option<Source>,
    /// The text in each form field while the user edits it: `(window id, field key)`.
    drafts: HashMap<(String, &'static str), String>,
    rejected: HashMap<(String, &'static str), Rejected>,
    pages: HashMap<String, usize>,
    /// The agent's last call already shown (`AgentCall::seq`).
    shown_call: u64,
    /// The window the agent acted on last, what it did, and when.
    highlight: Option<(Option<String>, String, Instant)>,
    /// The outcome of the user's last action.
    status: Option<(bool, String)>,
    /// The journal's entries shown, newest last (at most [`JOURNAL_ROWS`]).
    journal: VecDeque<JournalRow>,
    /// The `seq` of the newest entry shown.
    journal_seq: u64,
    /// Entries the journal's own bounds dropped (`Journal::dropped`).
    journal_dropped: u64,
    /// The note beside each editor's "Undo agent's change", and what it was made from.
    undo_notes: HashMap<String, (Result<UndoPoint, UndoError>, String)>,
    layout_report: Option<PathBuf>,
    last_layout: String,
    /// Whether reports get their own OS windows (off in the headless benchmark, which has none).
    viewports: bool,
}

/// Where widgets are drawn this frame, in points relative to their window, and what some of
/// them show (for tests).
#[derive(Default)]
struct Layout {
    widgets: BTreeMap<String, [f32; 4]>,
    /// Whether anyone reads it (`--layout-report`): else what widgets show is not collected.
    reporting: bool,
    shown: Map<String, Value>,
}

impl Layout {
    fn put(&mut self, name: impl Into<String>, rect: egui::Rect) {
        self.widgets.insert(name.into(), [rect.min.x, rect.min.y, rect.max.x, rect.max.y]);
    }

    /// Records what widget `name` shows: `value()`, when the layout is reported.
    fn show(&mut self, name: &str, value: impl FnOnce() -> Value) {
        if self.reporting {
            self.shown.insert(name.to_owned(), value());
        }
    }
}

impl OrderEditorApp {
    /// The app over `source`; with `layout_report`, writes widget positions after each frame.
    pub fn new(source: Source, layout_report: Option<PathBuf>) -> Self {
        Self {
            source: Some(source),
            drafts: HashMap::new(),
            rejected: HashMap::new(),
            pages: HashMap::new(),
            shown_call: 0,
            highlight: None,
            status: None,
            journal: VecDeque::new(),
            journal_seq: 0,
            journal_dropped: 0,
            undo_notes: HashMap::new(),
            layout_report,
            last_layout: String::new(),
            viewports: true,
        }
    }

    /// Without OS windows for the reports (a headless context has none to give).
    pub fn without_viewports(mut self) -> Self {
        self.viewports = false;
        self
    }

    /// Runs `f` on the model: under the owner's lock (queued agent operations run first), or on
    /// the plain model.
    fn with_model<R>(&mut self, f: impl FnOnce(&mut Self, &mut dyn Model) -> R) -> Option<R> {
        match self.source.take()? {
            Source::Bridge(owner) => {
                let out = {
                    let mut guard = owner.frame();
                    f(self, guard.ui())
                };
                self.source = Some(Source::Bridge(owner));
                Some(out)
            }
            Source::Plain(mut plain) => {
                let out = f(self, plain.as_mut());
                self.source = Some(Source::Plain(plain));
                Some(out)
            }
        }
    }

    /// One frame's drawing of every window into `ui` (the root viewport), and the user's
    /// actions applied. Used by eframe and by the headless frame benchmark.
    pub fn draw(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let drawn = self.with_model(|app, model| {
            app.notice_agent(&ctx, model);
            // Ask for the frame that ends the highlight. (Asked once, while a pass started by an
            // agent's repaint runs, egui would drop it: that pass already repaints "now".)
            if let Some((_, _, at)) = &app.highlight {
                let left = HIGHLIGHT.saturating_sub(at.elapsed());
                if !left.is_zero() {
                    ctx.request_repaint_after(left);
                }
            }
            app.poll_journal(model);
            let mut intents = Vec::new();
            let mut layout = Layout { reporting: app.layout_report.is_some(), ..Layout::default() };
            {
                let model: &dyn Model = model;
                egui::Panel::top("top").show(ui, |ui| app.top_bar(ui, model, &mut intents, &mut layout));
                egui::Panel::bottom("status").show(ui, |ui| match &app.status {
                    Some((true, text)) => {
                        ui.colored_label(Color32::from_rgb(30, 140, 60), text);
                    }
                    Some((false, text)) => {
                        ui.colored_label(Color32::from_rgb(200, 40, 40), text);
                    }
                    None => {
                        ui.weak("Edit the form, or let an agent do it over MCP.");
                    }
                });
                if model.journal().is_some() {
                    egui::Panel::bottom("journal").resizable(false).show(ui, |ui| app.journal_panel(ui, &mut layout));
                }
                egui::CentralPanel::default_margins().show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| app.editors(ui, model, &mut intents, &mut layout));
                });
                app.dialogs(&ctx, model, &mut intents, &mut layout);
                if app.viewports {
                    app.reports(&ctx, model, &mut intents);
                }
            }
            app.apply(model, intents);
            (layout, model.revision())
        });
        if let Some((layout, revision)) = drawn {
            self.write_layout(&ctx, layout, revision);
        }
    }

    /// Applies a change to the plain model directly (the benchmark's stand-in for the agent's
    /// edit when there is no bridge); nothing with bridge.
    pub fn apply_to_plain(&mut self, tool: &str, args: Map<String, Value>) {
        if let Some(Source::Plain(plain)) = &mut self.source {
            let _ = plain.apply(tool, args);
        }
    }

    /// The first editor's recipient as the model holds it (the benchmark checks its edits land).
    pub fn recipient(&mut self) -> Option<String> {
        self.with_model(|_, model| model.editors().first().map(|(_, e)| e.form.recipient.clone())).flatten()
    }

    /// Notices a new agent call: highlight its window; an agent's `focus` brings the window to
    /// the front (GB §5.3: the app defines what focusing means).
    fn notice_agent(&mut self, ctx: &egui::Context, model: &dyn Model) {
        let Some(call) = model.last_agent_call() else { return };
        if call.seq == self.shown_call {
            return;
        }
        self.shown_call = call.seq;
        let what = format!("Agent: {} {}", call.action, if call.ok { "done" } else { "refused" });
        self.highlight = Some((call.window_id.clone(), what, Instant::now()));
        if call.action == "focus" && call.ok {
            let viewport = match &call.window_id {
                Some(id) if model.reports().iter().any(|(r, _)| r == id) => report_viewport(id),
                _ => egui::ViewportId::ROOT,
            };
            ctx.send_viewport_cmd_to(viewport, egui::ViewportCommand::Minimized(false));
            ctx.send_viewport_cmd_to(viewport, egui::ViewportCommand::Focus);
        }
    }

    fn highlighted(&self, id: &str) -> bool {
        matches!(&self.highlight, Some((Some(w), _, at)) if w == id && at.elapsed() < HIGHLIGHT)
    }

    /// Takes the journal's new entries (and the newest one again: identical rejections in a
    /// row raise its count instead of adding an entry), keeping the newest [`JOURNAL_ROWS`].
    fn poll_journal(&mut self, model: &dyn Model) {
        let Some(journal) = model.journal() else { return };
        for entry in journal.since(self.journal_seq.saturating_sub(1)) {
            if entry.seq <= self.journal_seq {
                if let Some(row) = self.journal.back_mut().filter(|r| r.seq == entry.seq) {
                    row.count = entry.count;
                }
                continue;
            }
            self.journal_seq = entry.seq;
            self.journal.push_back(JournalRow::new(&entry));
            if self.journal.len() > JOURNAL_ROWS {
                self.journal.pop_front();
            }
        }
        self.journal_dropped = journal.dropped();
    }

    /// The journal panel: the newest entries first, one line each; only the rows in view are
    /// laid out.
    fn journal_panel(&mut self, ui: &mut egui::Ui, layout: &mut Layout) {
        let header = egui::CollapsingHeader::new(format!("Journal ({} entries)", self.journal_seq))
            .id_salt("journal")
            .default_open(true)
            .show(ui, |ui| {
                if self.journal_dropped > 0 {
                    ui.weak(format!("{} older entries were dropped by the journal's bounds", self.journal_dropped));
                }
                let height = ui.text_style_height(&egui::TextStyle::Monospace);
                let visible = (height + ui.spacing().item_spacing.y) * VISIBLE_ROWS;
                let rows = self.journal.len();
                egui::ScrollArea::vertical()
                    .max_height(visible)
                    .min_scrolled_height(visible)
                    .auto_shrink([false, false])
                    .show_rows(ui, height, rows, |ui, range| {
                        for i in range {
                            let Some(row) = self.journal.get(rows - 1 - i) else { continue };
                            let label = ui.add(egui::Label::new(row.job(ui)).truncate());
                            layout.put(format!("journal_row:{i}"), label.rect);
                        }
                    });
            });
        layout.put("journal", header.header_response.rect.union(ui.min_rect()));
        layout.show("journal", || {
            Value::Array(self.journal.iter().rev().take(REPORTED_ROWS).map(|r| Value::String(r.text())).collect())
        });
    }

    fn apply(&mut self, model: &mut dyn Model, intents: Vec<Intent>) {
        for intent in intents {
            let (outcome, field) = match intent {
                Intent::Page(id, page) => {
                    self.pages.insert(id, page);
                    continue;
                }
                Intent::Undo(id) => (model.undo(&id), None),
                Intent::UserConfirms(on) => (Ok(model.set_user_confirms(on)), None),
                Intent::Call { tool, args, field } => (model.apply(&tool, args), field),
            };
            match (&outcome, field) {
                (Err(e), Some(key)) => {
                    let error = e.field_error.clone().unwrap_or_else(|| e.message.clone());
                    let model_value = field_value(model, &key.0, key.1).unwrap_or_default();
                    self.rejected.insert(key, Rejected { error, model_value });
                }
                (Ok(_), Some(key)) => {
                    self.rejected.remove(&key);
                }
                _ => {}
            }
            self.status = Some(match outcome {
                Ok(text) => (true, text),
                Err(e) => (false, e.message),
            });
        }
    }

    /// One single-line field: a draft while the user edits it, committed on Enter or when it
    /// loses focus; otherwise it follows the model (an agent's edit shows at once).
    fn text_field(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        key: &'static str,
        value: &str,
        password: bool,
        intents: &mut Vec<Intent>,
    ) -> egui::Response {
        let k = (id.to_owned(), key);
        if self.rejected.get(&k).is_some_and(|r| r.model_value != value) {
            self.rejected.remove(&k); // the model moved on: show it
        }
        let rejected = self.rejected.contains_key(&k);
        let draft = self.drafts.entry(k.clone()).or_insert_with(|| value.to_owned());
        let response = ui
            .add_sized([300.0, 22.0], egui::TextEdit::singleline(draft).password(password).id_salt(("field", id, key)));
        if let Some(commit) = field_step(draft, value, response.has_focus(), response.lost_focus(), rejected) {
            // The password goes through its own action, whose parameter is sensitive: the
            // journal masks it (`edit_field` refuses it).
            let intent = if password {
                Intent::call(format!("{id}__set_payment_password"), json!({ "password": commit }))
            } else {
                Intent::call(format!("{id}__edit_field"), json!({ "field": key, "value": commit }))
            };
            intents.push(intent.for_field(k));
        }
        response
    }

    fn top_bar(&mut self, ui: &mut egui::Ui, model: &dyn Model, intents: &mut Vec<Intent>, layout: &mut Layout) {
        ui.horizontal(|ui| {
            ui.strong("Order Editor");
            ui.separator();
            ui.add_enabled_ui(model.locks().is_empty(), |ui| {
                let report = ui.button("New report");
                layout.put("new_report", report.rect);
                if report.clicked() {
                    intents.push(Intent::call("app__new_report".into(), json!({})));
                }
                let lock = ui.button("Lock session");
                layout.put("lock", lock.rect);
                if lock.clicked() {
                    intents.push(Intent::call("app__lock".into(), json!({})));
                }
            });
            ui.separator();
            let on = model.user_confirms();
            let mut checked = on;
            let check = ui
                .checkbox(&mut checked, "Only I confirm orders")
                .on_hover_text("Agents may fill in and submit orders; only you can confirm them");
            layout.put("user_confirms", check.rect);
            layout.show("userConfirms", || Value::Bool(on));
            if checked != on {
                intents.push(Intent::UserConfirms(checked));
            }
            let highlight = matches!(&self.highlight, Some((_, _, at)) if at.elapsed() < HIGHLIGHT);
            layout.show("agentHighlight", || Value::Bool(highlight));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| match &self.highlight {
                Some((_, what, at)) if at.elapsed() < HIGHLIGHT => {
                    ui.colored_label(agent_color(), RichText::new(what).strong());
                }
                _ => {
                    ui.weak("Agent idle");
                }
            });
        });
    }

    fn editors(&mut self, ui: &mut egui::Ui, model: &dyn Model, intents: &mut Vec<Intent>, layout: &mut Layout) {
        let editors = model.editors();
        if editors.is_empty() {
            ui.label("No order is open.");
        }
        for (id, editor) in editors {
            self.editor(ui, model, id, editor, intents, layout);
        }
    }

    fn editor(
        &mut self,
        ui: &mut egui::Ui,
        model: &dyn Model,
        id: &str,
        editor: &OrderEditor,
        intents: &mut Vec<Intent>,
        layout: &mut Layout,
    ) {
        let operable = model.is_operable(id);
        let highlighted = self.highlighted(id);
        let stroke =
            if highlighted { Stroke::new(3.0, agent_color()) } else { ui.visuals().widgets.noninteractive.bg_stroke };
        let framed = egui::Frame::group(ui.style()).stroke(stroke).inner_margin(12.0).show(ui, |ui| {
            ui.set_width(ui.available_width());
            let heading = ui.heading(model.summary(id));
            layout.put("summary", heading.rect);
            // One row for the window's state, so nothing below moves when it changes.
            ui.horizontal(|ui| {
                ui.weak(match model.version(id) {
                    Some(v) => format!("window {id} · version {v}"),
                    None => format!("window {id}"),
                });
                if highlighted {
                    ui.colored_label(agent_color(), "• The agent is working in this window");
                } else if !operable {
                    ui.colored_label(Color32::from_rgb(40, 110, 200), "Waiting for the dialog to be answered");
                }
            });
            ui.add_space(6.0);
            // A control is live when its action is: the window operable and the action available.
            let editable = model.is_available(id, "edit_field");
            ui.add_enabled_ui(editable, |ui| {
                egui::Grid::new(("form", id)).num_columns(3).spacing([12.0, 8.0]).show(ui, |ui| {
                    for (key, label, password) in FIELDS {
                        ui.label(label);
                        let field = self.text_field(ui, id, key, &form_value(editor, key), password, intents);
                        layout.put(key, field.rect);
                        match self.rejected.get(&(id.to_owned(), key)) {
                            Some(r) => ui.colored_label(Color32::from_rgb(200, 40, 40), &r.error),
                            None => ui.label(""),
                        };
                        ui.end_row();
                    }
                });
                ui.add_space(8.0);
                ui.strong("Products");
                let table = egui::Grid::new(("products", id)).striped(true).num_columns(3).spacing([24.0, 4.0]).show(
                    ui,
                    |ui| {
                        for h in ["Product", "Quantity", "Unit price"] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        for p in &editor.products {
                            ui.label(&p.name);
                            ui.label(p.quantity.to_string());
                            ui.label(&p.unit_price);
                            ui.end_row();
                        }
                    },
                );
                layout.put("products", table.response.rect);
                for notice in &editor.status {
                    let color = match notice.severity {
                        bridge_runtime::Severity::Error => Color32::from_rgb(200, 40, 40),
                        _ => Color32::from_rgb(30, 140, 60),
                    };
                    ui.colored_label(color, &notice.text);
                }
                ui.add_space(6.0);
                let submit = ui.add_enabled(model.is_available(id, "submit"), egui::Button::new("Submit order"));
                layout.put("submit", submit.rect);
                if submit.clicked() {
                    intents.push(Intent::call(format!("{id}__submit"), json!({})));
                }
            });
            if let Some(can) = model.can_undo(id) {
                self.undo_button(ui, id, can, intents, layout);
            }
        });
        layout.put(format!("editor:{id}"), framed.response.rect);
    }

    /// "Undo agent's change": live when `Ui::can_undo` says there is one to take back (which
    /// one, beside it), otherwise disabled with the reason beside it.
    fn undo_button(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        can: Result<UndoPoint, UndoError>,
        intents: &mut Vec<Intent>,
        layout: &mut Layout,
    ) {
        ui.horizontal(|ui| {
            let button = ui.add_enabled(can.is_ok(), egui::Button::new("Undo agent's change"));
            layout.put("undo", button.rect);
            let what = self.undo_note(id, &can);
            layout.show("undo", || json!({ "enabled": can.is_ok(), "text": what }));
            let button = button.on_hover_text(&what).on_disabled_hover_text(&what);
            let note = ui.weak(what);
            layout.put("undo_note", note.rect);
            if button.clicked() {
                intents.push(Intent::Undo(id.to_owned()));
            }
        });
    }

    /// What "Undo agent's change" of window `id` would take back, or why it cannot: formatted
    /// once per change of `can` (a frame draws it again from the cache).
    fn undo_note(&mut self, id: &str, can: &Result<UndoPoint, UndoError>) -> String {
        if let Some((cached, note)) = self.undo_notes.get(id)
            && cached == can
        {
            return note.clone();
        }
        let note = match can {
            Ok(point) => {
                let (tool, at) = (action_of(&point.tool), hhmmss(point.at));
                format!("The agent's {tool} at {at} (before it: version {})", point.version_before)
            }
            Err(e) => e.to_string(),
        };
        self.undo_notes.insert(id.to_owned(), (can.clone(), note.clone()));
        note
    }

    /// The "Confirm order" dialog (a window-level modal, GB §2) and the app-level "Session
    /// locked" modal, as egui modals over the main window.
    fn dialogs(&mut self, ctx: &egui::Context, model: &dyn Model, intents: &mut Vec<Intent>, layout: &mut Layout) {
        for (id, dialog) in model.dialogs() {
            let modal = egui::Modal::new(egui::Id::unique(("dialog", id))).show(ctx, |ui| {
                ui.set_width(360.0);
                ui.heading("Confirm order");
                ui.label(model.summary(id));
                egui::Grid::new(("dialog-grid", id)).num_columns(2).show(ui, |ui| {
                    ui.label("Recipient");
                    ui.strong(&dialog.recipient);
                    ui.end_row();
                    ui.label("Amount");
                    ui.strong(&dialog.amount);
                    ui.end_row();
                });
                if self.highlighted(id) {
                    ui.colored_label(agent_color(), "• The agent is working in this dialog");
                }
                if dialog.by_user {
                    let note = ui.colored_label(
                        Color32::from_rgb(40, 110, 200),
                        "Only you can confirm this order: the agent cannot.",
                    );
                    layout.put("dialog_user_note", note.rect);
                }
                ui.horizontal(|ui| {
                    let confirm = ui.button("Confirm");
                    let cancel = ui.button("Cancel");
                    layout.put("confirm", confirm.rect);
                    layout.put("cancel", cancel.rect);
                    if confirm.clicked() {
                        intents.push(Intent::call(format!("{id}__confirm"), json!({})));
                    }
                    if cancel.clicked() {
                        intents.push(Intent::call(format!("{id}__cancel"), json!({})));
                    }
                });
            });
            layout.put("dialog", modal.response.rect);
        }
        for (id, locked) in model.locks() {
            let modal = egui::Modal::new(egui::Id::unique(("locked", id))).show(ctx, |ui| {
                ui.heading("Session locked");
                ui.label(&locked.message);
                let unlock = ui.button("Unlock");
                layout.put("unlock", unlock.rect);
                if unlock.clicked() {
                    intents.push(Intent::call(format!("{id}__unlock"), json!({})));
                }
            });
            layout.put("locked", modal.response.rect);
        }
    }

    /// Each report is a second top-level window (an egui viewport), paged locally: its state
    /// holds every row, the bridge's snapshot only the first ones (GB-9).
    fn reports(&mut self, ctx: &egui::Context, model: &dyn Model, intents: &mut Vec<Intent>) {
        for (n, (id, report)) in model.reports().into_iter().enumerate() {
            let report: &ReportDetails = report;
            let page = self.pages.get(id).copied().unwrap_or(0);
            let pages = report.rows.len().div_ceil(PAGE).max(1);
            let summary = model.summary(id);
            let highlighted = self.highlighted(id);
            let operable = model.is_operable(id);
            let builder = egui::ViewportBuilder::default()
                .with_title(format!("Report Details ({id})"))
                .with_inner_size([500.0, 560.0])
                // Beside the main window, cascading (no window manager places them under Xvfb).
                .with_position([770.0 + 24.0 * n as f32, 24.0 * n as f32]);
            ctx.show_viewport_immediate(report_viewport(id), builder, |ui, _class| {
                if ui.ctx().input(|i| i.viewport().close_requested()) {
                    intents.push(Intent::call(format!("{id}__close"), json!({})));
                }
                egui::CentralPanel::default_margins().show(ui, |ui| {
                    ui.heading(&summary);
                    if highlighted {
                        ui.colored_label(agent_color(), "• The agent is working in this window");
                    }
                    ui.add_enabled_ui(operable, |ui| {
                        ui.horizontal(|ui| {
                            if ui.add_enabled(page > 0, egui::Button::new("< Previous")).clicked() {
                                intents.push(Intent::page(id, page - 1));
                            }
                            let first = page * PAGE;
                            let last = (first + PAGE).min(report.rows.len());
                            ui.label(format!("Rows {}–{} of {}", first + 1, last, report.rows.len()));
                            if ui.add_enabled(page + 1 < pages, egui::Button::new("Next >")).clicked() {
                                intents.push(Intent::page(id, page + 1));
                            }
                        });
                        egui::ScrollArea::vertical().show(ui, |ui| {
                            egui::Grid::new(("report", id)).striped(true).num_columns(3).show(ui, |ui| {
                                for h in ["Order", "Customer", "Total ($)"] {
                                    ui.strong(h);
                                }
                                ui.end_row();
                                for row in report.rows.iter().skip(page * PAGE).take(PAGE) {
                                    ui.label(row.order.to_string());
                                    ui.label(&row.customer);
                                    ui.label(format!("{:.2}", row.total));
                                    ui.end_row();
                                }
                            });
                        });
                    });
                });
            });
        }
    }

    /// With `--layout-report`: the widgets' screen-pixel rectangles, the model's `revision`
    /// and when this frame drew it (`drawnAtMs`, Unix ms; the latency benchmark reads it),
    /// written atomically whenever they change.
    fn write_layout(&mut self, ctx: &egui::Context, layout: Layout, revision: u64) {
        let Some(path) = &self.layout_report else { return };
        let (origin, ppp) = ctx.input(|i| (i.viewport().inner_rect.map(|r| r.min), i.pixels_per_point));
        let origin = origin.unwrap_or(egui::Pos2::ZERO);
        let widgets: serde_json::Map<String, Value> = layout
            .widgets
            .into_iter()
            .map(|(name, [x0, y0, x1, y1])| {
                let px = |x: f32, o: f32| ((o + x) * ppp).round();
                (name, json!([px(x0, origin.x), px(y0, origin.y), px(x1, origin.x), px(y1, origin.y)]))
            })
            .collect();
        let text = json!({ "pixelsPerPoint": ppp, "revision": revision, "widgets": widgets, "shown": layout.shown })
            .to_string();
        if text == self.last_layout {
            return;
        }
        let drawn_at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or_default();
        let mut report: Value = serde_json::from_str(&text).unwrap_or_default();
        report["drawnAtMs"] = json!(drawn_at_ms);
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, report.to_string()).and_then(|()| std::fs::rename(&tmp, path)).is_ok() {
            self.last_layout = text;
        }
    }
}

impl eframe::App for OrderEditorApp {
    /// Runs every frame, and also while the window is hidden whenever an agent's operation asked
    /// for a repaint: the queued operations run here even when nothing is drawn.
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.with_model(|app, model| app.notice_agent(ctx, model));
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.draw(ui);
    }
}

/// One frame of a form field, as a real form commits: while the field has focus the draft is
/// the user's and nothing is sent; when it loses focus (Enter, Tab, a click elsewhere) a
/// changed draft is committed (the value returned); otherwise the draft follows the model, so
/// an agent's edit shows at once, unless the user's last commit was refused (their text stays
/// beside the error).
fn field_step(draft: &mut String, model: &str, focused: bool, lost_focus: bool, rejected: bool) -> Option<String> {
    if lost_focus {
        return (draft.as_str() != model).then(|| draft.clone());
    }
    if !focused && !rejected {
        model.clone_into(draft);
    }
    None
}

fn agent_color() -> Color32 {
    Color32::from_rgb(230, 130, 0)
}

/// Agents in the journal panel: not [`agent_color`], which marks only what an agent just did
/// (and ends by itself).
fn journal_agent_color() -> Color32 {
    Color32::from_rgb(150, 70, 190)
}

fn report_viewport(id: &str) -> egui::ViewportId {
    egui::ViewportId::from_hash_of(("report", id))
}

fn form_value(editor: &OrderEditor, key: &str) -> String {
    match key {
        "recipient" => editor.form.recipient.clone(),
        "amount" => editor.form.amount.clone(),
        _ => editor.form.payment_password.expose().clone(),
    }
}

fn field_value(model: &dyn Model, id: &str, key: &str) -> Option<String> {
    model.editors().into_iter().find(|(w, _)| *w == id).map(|(_, e)| form_value(e, key))
}

#[cfg(test)]
mod tests {
    use super::{Intent, JournalRow, OrderEditorApp, Source, field_step};
    use crate::app;
    use crate::model::{Model, PlainModel};
    use bridge_runtime::ErrorCode;
    use bridge_runtime::gui::{Actor, AgentActor, ClientInfo, Operation, Outcome, Transport, UndoError};
    use bridge_runtime::testing::{Notification, TestApp};
    use serde_json::json;

    /// The GUI's own state (drafts, status, journal rows); the model it acts on is passed in.
    fn gui() -> OrderEditorApp {
        OrderEditorApp::new(Source::Plain(Box::new(PlainModel::new(1))), None)
    }

    fn recipient(app: &mut TestApp) -> String {
        app.ui().window::<app::OrderEditor>("w-A").map(|e| e.form.recipient.clone()).unwrap_or_default()
    }

    fn rows(gui: &OrderEditorApp) -> Vec<String> {
        gui.journal.iter().rev().map(JournalRow::text).collect()
    }

    // Issue 20 item 5: "Undo agent's change" is an intent applied after drawing; it takes the
    // agent's last change back as the user (Ui::undo): the old value, a higher version, the
    // journal says "You undo edit_field", and the agent's old expectedVersion is stale
    // (GB-7.1-2). When the user changed the window since, the click changes nothing and the
    // status bar says why.
    #[test]
    fn the_undo_intent_takes_back_the_agents_change_as_the_user() {
        let mut app = order_editor();
        let mut gui = gui();
        app.call("w-A__edit_field", json!({"field": "recipient", "value": "Alice"})).expect_ok();
        let before = app.version("w-A");
        app.call("w-A__edit_field", json!({"field": "recipient", "value": "Mallory", "expectedVersion": before}))
            .expect_ok();
        let agents = app.version("w-A");
        let offered = Model::can_undo(&*app.ui(), "w-A").expect("the bridge keeps agent changes").expect("undoable");
        assert_eq!(
            (offered.tool.as_str(), offered.version_before, offered.version_after),
            ("w-A__edit_field", before, agents)
        );
        app.take_notifications();

        gui.apply(app.ui(), vec![Intent::Undo("w-A".into())]);
        app.check();
        assert_eq!(recipient(&mut app), "Alice");
        assert!(app.version("w-A") > agents);
        assert_eq!(app.take_notifications(), [Notification::ResourceUpdated]);
        assert_eq!(gui.status, Some((true, "Undid the agent's edit_field".into())));
        let last = app.journal().last().expect("an entry");
        assert_eq!(last.actor, Actor::User);
        assert_eq!(last.operation, Operation::Undo { tool: "w-A__edit_field".into() });
        assert_eq!(last.outcome, Outcome::Ok);
        app.call("w-A__edit_field", json!({"field": "recipient", "value": "Mallory", "expectedVersion": agents}))
            .expect_err(ErrorCode::StaleState);

        // The user's own edit since: the older agent change is no longer undone.
        app.user_call("w-A__edit_field", json!({"field": "amount", "value": "$5.00"})).expect_ok();
        let now = app.version("w-A");
        assert!(matches!(Model::can_undo(&*app.ui(), "w-A"), Some(Err(UndoError::ChangedSince { .. }))));
        gui.apply(app.ui(), vec![Intent::Undo("w-A".into())]);
        assert_eq!((recipient(&mut app), app.version("w-A")), ("Alice".to_owned(), now));
        assert!(
            matches!(&gui.status, Some((false, m)) if m.contains("changed after the agent's change")),
            "{:?}",
            gui.status
        );
        // Without bridge there is nothing to undo: no button.
        assert!(PlainModel::new(1).can_undo("w-A").is_none());
    }

    // Issue 20 item 5: the journal panel's rows: who (the agent by its clientInfo name and
    // token label, "You", "App"), what, window, outcome or error code, versions; arguments as
    // the journal keeps them, so a secret shows as the mask only (GB-4.5-2); repeated identical
    // rejections are one row with a count.
    #[test]
    fn journal_rows_name_the_actor_and_mask_secrets() {
        let mut app = order_editor();
        let mut gui = gui();
        let v = app.version("w-A");
        app.user_call("w-A__set_payment_password", json!({"password": "correct horse"})).expect_ok();
        let agent =
            AgentActor::new(Transport::Http).with_token("ci-bot").with_client_info(ClientInfo::new("claude", "1"));
        for _ in 0..2 {
            app.call_as(agent.clone().into(), "w-A__set_payment_password", json!({"password": "agent horse"}))
                .expect_err(ErrorCode::ActionNotAvailable);
        }
        gui.poll_journal(app.ui());
        let shown = rows(&gui);
        let masked = r#"{"password":"••••••"}"#;
        assert_eq!(shown.len(), 4, "{shown:#?}");
        assert!(
            shown[0].ends_with(&format!(
                "  Agent claude · token ci-bot  set_payment_password  w-A  action_not_available ×2  v{}  {masked}",
                v + 1
            )),
            "{shown:#?}"
        );
        assert!(
            shown[1].ends_with(&format!("  You  set_payment_password  w-A  ok  v{v}→{}  {masked}", v + 1)),
            "{shown:#?}"
        );
        assert!(
            shown[2].ends_with("  App  open  w-C  ok  →v1") && shown[3].ends_with("  App  open  w-A  ok  →v1"),
            "{shown:#?}"
        );
        assert!(!shown.iter().any(|r| r.contains("horse")), "{shown:#?}");

        // A third identical refusal raises the count of the row shown; a new entry adds a row.
        app.call_as(agent.into(), "w-A__set_payment_password", json!({"password": "agent horse"}))
            .expect_err(ErrorCode::ActionNotAvailable);
        app.call("w-A__edit_field", json!({"field": "recipient", "value": "Bo"})).expect_ok();
        gui.poll_journal(app.ui());
        let shown = rows(&gui);
        assert_eq!(shown.len(), 5, "{shown:#?}");
        assert!(
            shown[0].contains("  Agent  edit_field  w-A  ok  ")
                && shown[0].ends_with(r#"{"field":"recipient","value":"Bo"}"#)
        );
        assert!(shown[1].contains("action_not_available ×3"), "{shown:#?}");
    }

    // Issue 20 items 4 and 5: "Only I confirm orders" is the user's switch (journaled as theirs);
    // with it on, the agent's submit still opens "Confirm order", the agent cannot confirm
    // (never listed, refused by name: GB-7.4-8), and the user's click on Confirm places the order.
    #[test]
    fn only_the_user_confirms_when_the_switch_is_on() {
        let mut app = order_editor();
        let mut gui = gui();
        assert!(!Model::user_confirms(&*app.ui()));
        gui.apply(app.ui(), vec![Intent::UserConfirms(true)]);
        app.check();
        assert!(Model::user_confirms(&*app.ui()));
        let switched = app.journal().last().expect("an entry");
        assert_eq!((switched.actor, switched.operation), (Actor::User, Operation::Edit));

        app.call("w-A__edit_field", json!({"field": "recipient", "value": "Chen Li"})).expect_ok();
        let dialog = app.call("w-A__submit", json!({})).opened().to_vec();
        let [dialog] = dialog.as_slice() else { panic!("one dialog: {dialog:?}") };
        assert!(!app.tool_names().contains(&format!("{dialog}__confirm")));
        app.call(&format!("{dialog}__confirm"), json!({})).expect_err(ErrorCode::ActionNotAvailable);
        assert!(app.window(dialog).summary.unwrap_or_default().starts_with("Waiting for the user to confirm"));

        gui.apply(app.ui(), vec![Intent::call(format!("{dialog}__confirm"), json!({}))]);
        app.check();
        assert_eq!(gui.status, Some((true, "Order placed".into())));
        assert_eq!(app.window("w-A").summary.as_deref(), Some("Order #12345 for Chen Li was placed"));

        // Off again: agents may confirm the next dialog (the plain model follows the same switch).
        gui.apply(app.ui(), vec![Intent::UserConfirms(false)]);
        assert!(!Model::user_confirms(&*app.ui()));
        let mut plain = PlainModel::new(1);
        plain.set_user_confirms(true);
        assert!(plain.user_confirms());
    }

    fn order_editor() -> TestApp {
        TestApp::new(app::build(40), |ui| app::open_initial(ui, 40))
    }

    // Issue #9: typing is not committing. While the user types, the agent's expectedVersion
    // stays good; the user's Enter commits through the host API (a user call), which bumps the
    // version, notifies, and makes the agent's old version stale (GB-7.1) — nothing is lost.
    #[test]
    fn a_field_commits_on_enter_not_per_keystroke() {
        let mut app = order_editor();
        let seen = app.version("w-A");
        let mut draft = String::new();
        for typed in ["G", "Gr", "Grace"] {
            draft = typed.to_owned(); // the keystroke lands in the draft
            assert_eq!(field_step(&mut draft, "", true, false, false), None, "no commit while typing");
        }
        assert_eq!(app.version("w-A"), seen);
        app.call("w-A__edit_field", json!({"field": "amount", "value": "$120.00", "expectedVersion": seen}))
            .expect_ok();
        let seen = app.version("w-A");
        // Enter: the field loses focus with a changed draft: one commit, as the user.
        let commit = field_step(&mut draft, "", false, true, false).expect("a commit");
        app.user_call("w-A__edit_field", json!({"field": "recipient", "value": commit})).expect_ok();
        assert_eq!(app.version("w-A"), seen + 1);
        assert_eq!(app.take_notifications(), [Notification::ResourceUpdated, Notification::ResourceUpdated]);
        let stale = app.call("w-A__edit_field", json!({"field": "amount", "value": "$1", "expectedVersion": seen}));
        stale.expect_err(ErrorCode::StaleState);
        let summary = app.window("w-A").summary.unwrap_or_default();
        assert!(summary.contains("Grace") && summary.contains("$120.00"), "both edits stand: {summary}");
    }

    // An unfocused field follows the model (the agent's edit shows); a rejected commit keeps
    // the user's text; losing focus unchanged commits nothing.
    #[test]
    fn a_field_follows_the_model_unless_the_user_owns_it() {
        let mut draft = "old".to_owned();
        assert_eq!(field_step(&mut draft, "agent's", false, false, false), None);
        assert_eq!(draft, "agent's");
        let mut typed = "not money".to_owned();
        assert_eq!(field_step(&mut typed, "$100.00", false, false, true), None);
        assert_eq!(typed, "not money", "a rejected draft stays beside its error");
        let mut same = "$100.00".to_owned();
        assert_eq!(field_step(&mut same, "$100.00", false, true, false), None);
    }

    // The secret the user types reaches the app state; agents see only the mask (GB-4.5-2).
    #[test]
    fn the_password_the_user_types_stays_in_the_app() {
        let mut app = order_editor();
        app.user_call("w-A__set_payment_password", json!({"password": "correct horse"})).expect_ok();
        let read = app.read_windows().to_string();
        assert!(!read.contains("correct horse") && read.contains("••••••"), "{read}");
        let typed = app.ui().window::<app::OrderEditor>("w-A").map(|e| e.form.payment_password.expose().clone());
        assert_eq!(typed.as_deref(), Some("correct horse"));
        let journal = serde_json::to_string(&app.journal().entries()).unwrap();
        assert!(!journal.contains("correct horse"), "the journal masks it: {journal}");
    }
}
