//! Fuzz target `tools`: MCP `tools/call` through the registry with arbitrary arguments (issue
//! #10), shared by `fuzz_targets/tools.rs` and the corpus replay test
//! (`bridge-runtime/tests/it/fuzz_corpus.rs`, which includes this file by `#[path]`; it uses
//! only `bridge_runtime`, `serde` and `serde_json`).
//!
//! The app is built from real `#[bridge_window]`/`#[bridge_actions]` types: the Order Editor of
//! GB Appendix A (form with a secret, window-level modal, report, app-level modal) and a window
//! whose actions take the shapes of parameters app authors write (bounded integers, unit and
//! data enums in serde's three representations, optional and nested structs, a recursive tree,
//! maps, tuples, arbitrary JSON). Every action checks before it changes anything, so a rejected
//! call must leave the state exactly as it was.
//!
//! Input: a JSON array of calls `[tool, arguments]`, run in order on a fresh app through
//! `TestApp::call` (`Ui::call_tool`, the dispatcher an agent's call goes through); `tool` is a
//! name (any string: unknown and stale names included) or an index into the current
//! `tools/list`; `arguments` that are not an object (or `null`) are skipped, as the MCP
//! transport never delivers them. Anything else is ignored.
//!
//! Properties, after every call (on top of the GUI Bridge invariants `TestApp` checks on every
//! step):
//! - no panic;
//! - a rejected call leaves `app://windows`, the tool list and the notifications unchanged
//!   (GB-7.4), is `isError: true` on MCP with its coded error as `structuredContent`, and has a
//!   message; `validation_failed` names fields, each a parameter of the tool, a key sent or
//!   (for `submit`) a field of the form (GB-7.3-1); that its messages never quote a value is
//!   the `schema` target's to check;
//! - the payment password never appears in a snapshot or a result (GB-4.5-2).

#![allow(dead_code)]

use bridge_runtime::model::ErrorCode;
use bridge_runtime::prelude::*;
use bridge_runtime::testing::TestApp;
use serde_json::Value;
use std::collections::BTreeMap;

/// The payment password of every Order Editor; must never leave the process.
pub const SECRET: &str = "hunter2-s3cret";

/// The Order Editor's form fields, which its `submit` (no parameters) reports one by one, as GB
/// Appendix A does; every other `validation_failed` field is a parameter or a key sent.
pub const FORM_FIELDS: &[&str] = &["recipient", "amount"];

/// Most calls run per input.
pub const MAX_CALLS: usize = 16;

/// What one input did, for the replay test to see that the corpus reaches every path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsReport {
    /// Calls that succeeded, by tool name.
    pub ok: BTreeMap<String, usize>,
    /// Calls that failed, by GB code.
    pub rejected: BTreeMap<&'static str, usize>,
}

/// Runs `data` (see the module docs) and panics, naming the property, when one breaks.
pub fn run(data: &[u8]) -> ToolsReport {
    let mut report = ToolsReport::default();
    let Ok(Value::Array(calls)) = serde_json::from_slice::<Value>(data) else { return report };
    let mut app = app();
    app.take_notifications();
    for call in calls.into_iter().take(MAX_CALLS) {
        let Value::Array(mut pair) = call else { continue };
        if pair.len() != 2 {
            continue;
        }
        let arguments = pair.pop().unwrap_or_default();
        let names = app.tool_names();
        let name = match pair.pop().unwrap_or_default() {
            Value::String(s) => s,
            Value::Number(n) if !names.is_empty() => {
                let i = n.as_u64().unwrap_or(0) as usize % names.len();
                names[i].clone()
            }
            _ => continue,
        };
        if !(arguments.is_object() || arguments.is_null()) {
            continue;
        }
        one_call(&mut app, &name, arguments, &mut report);
    }
    report
}

fn one_call(app: &mut TestApp, name: &str, arguments: Value, report: &mut ToolsReport) {
    let before = app.read_windows();
    let tools_before = app.tools();
    let schema = tools_before.iter().find(|t| t.name == name).map(|t| Value::Object((*t.input_schema).clone()));
    let out = app.call(name, arguments.clone());
    let after = app.read_windows();
    let notes = app.take_notifications();
    let mcp = serde_json::to_value(out.mcp()).expect("CallToolResult serializes");
    assert!(!after.to_string().contains(SECRET), "the secret is in app://windows after {name}");
    assert!(!mcp.to_string().contains(SECRET), "the secret is in the result of {name}");
    let Some(err) = out.error() else {
        assert_eq!(out.mcp().is_error, Some(false), "{name}: success marked as an error");
        *report.ok.entry(name.to_owned()).or_default() += 1;
        return;
    };
    *report.rejected.entry(err.code.as_str()).or_default() += 1;
    assert_eq!(after, before, "{name} {arguments} was rejected ({}) but app://windows changed", err.code);
    let tools_after: Vec<String> = app.tools().into_iter().map(|t| t.name.into_owned()).collect();
    let names_before: Vec<String> = tools_before.into_iter().map(|t| t.name.into_owned()).collect();
    assert_eq!(tools_after, names_before, "{name} was rejected but the tool list changed");
    assert!(notes.is_empty(), "{name} was rejected but clients were notified: {notes:?}");
    assert_eq!(out.mcp().is_error, Some(true), "{name}: an error not marked isError");
    assert_eq!(out.structured()["code"], err.code.as_str(), "{name}: structuredContent is not the error: {mcp}");
    assert!(!err.message.trim().is_empty(), "{name}: an error without a message");
    assert_eq!(err.current_version.is_some(), err.code == ErrorCode::StaleState, "{name}: currentVersion {err:?}");
    if err.code != ErrorCode::ValidationFailed {
        return;
    }
    let fields = err.fields.as_deref().unwrap_or_default();
    assert!(!fields.is_empty(), "{name}: validation_failed without fields");
    let declared: Vec<String> = schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let sent: Vec<String> = arguments.as_object().map(|a| a.keys().cloned().collect()).unwrap_or_default();
    for f in fields {
        assert!(
            f.field.is_empty()
                || declared.contains(&f.field)
                || sent.contains(&f.field)
                || FORM_FIELDS.contains(&f.field.as_str()),
            "{name}: field {:?} is neither a parameter, a key sent nor a form field",
            f.field
        );
    }
}

/// The app: Order Editor `w-A`, report `w-C`, the zoo `zoo`; app actions `new_report`, `lock`.
pub fn app() -> TestApp {
    let builder = Bridge::builder("fuzz-app", "1.0")
        .app(OrderApp::default())
        .window::<OrderEditor>()
        .window::<ConfirmOrder>()
        .window::<ReportDetails>()
        .window::<SessionLocked>()
        .window::<Zoo>();
    TestApp::new(builder, |ui| {
        ui.open(OrderEditor::new(), OpenOptions::window().with_id("w-A"));
        ui.open(ReportDetails::new(30), OpenOptions::window().with_id("w-C"));
        ui.open(Zoo::default(), OpenOptions::window().with_id("zoo"));
    })
}

// ---------------------------------------------------------------------------------------------
// The Order Editor (GB Appendix A), as examples/order_editor/app.rs writes it.

/// The order form.
#[derive(BridgeFields, Default)]
pub struct OrderForm {
    /// Who receives the order.
    pub recipient: String,
    /// Order amount, in dollars.
    pub amount: String,
    #[bridge(label = "Payment password", sensitive)]
    pub payment_password: Secret<String>,
}

/// Window "Order Editor".
#[bridge_window(title = "Order Editor", summary = summary)]
pub struct OrderEditor {
    #[bridge(fields, id = "order", label = "Order")]
    pub form: OrderForm,
    #[bridge(notice, id = "status")]
    pub status: Vec<Notice>,
    #[bridge(skip)]
    pub placed: bool,
}

impl OrderEditor {
    fn new() -> Self {
        let form = OrderForm {
            recipient: String::new(),
            amount: "$100.00".into(),
            payment_password: Secret::new(SECRET.into()),
        };
        let mut e = Self { form, status: Vec::new(), placed: false };
        e.revalidate();
        e
    }

    fn summary(&self) -> String {
        match (self.placed, self.form.recipient.as_str()) {
            (true, r) => format!("Order for {r} was placed"),
            (false, "") => "Editing an order, recipient not yet filled in".to_owned(),
            (false, r) => format!("Editing an order for {r}, amount {}", self.form.amount),
        }
    }

    fn problems(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        if self.form.recipient.trim().is_empty() {
            out.push(FieldError::new("recipient", "Recipient cannot be empty"));
        }
        let amount = self.form.amount.trim().trim_start_matches('$').replace(',', "").parse::<f64>().ok();
        if !amount.is_some_and(|a| a.is_finite() && a > 0.0) {
            out.push(FieldError::new("amount", "Amount must be a number above 0, such as $100.00"));
        }
        out
    }

    fn revalidate(&mut self) {
        self.status = if self.placed {
            vec![Notice::success("Order placed")]
        } else {
            self.problems().into_iter().map(|p| Notice::error(p.error)).collect()
        };
    }

    fn editable(&self) -> bool {
        !self.placed
    }
}

#[bridge_actions]
impl OrderEditor {
    /// Edit one field of the order form by label or key.
    #[bridge_action(title = "Edit field", idempotent, available = editable)]
    pub fn edit_field(
        &mut self,
        #[bridge(description = "The field's label or key")] field: String,
        #[bridge(description = "The new value")] value: String,
        cx: &mut ActionContext,
    ) -> Result<(), ActionError> {
        if value.chars().count() > 200 {
            return Err(ActionError::field("value", "At most 200 characters"));
        }
        self.form.set_field(&field, Value::String(value)).map_err(|e| ActionError::field("field", e))?;
        self.revalidate();
        cx.set_message("Field set");
        Ok(())
    }

    /// Submit the order: opens the "Confirm order" dialog.
    #[bridge_action(destructive, available = editable)]
    pub fn submit(&mut self, cx: &mut ActionContext) -> Result<(), ActionError> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Err(ActionError::fields(problems));
        }
        let owner = cx.window_id().unwrap_or_default().to_owned();
        cx.open_modal(ConfirmOrder { owner, recipient: self.form.recipient.clone() });
        Ok(())
    }

    /// Close the window.
    #[bridge_action(destructive)]
    pub fn close(&mut self, cx: &mut ActionContext) {
        cx.close();
    }
}

/// Window-level modal "Confirm order".
#[bridge_window(title = "Confirm order", summary = "Confirm the order for {recipient}?")]
pub struct ConfirmOrder {
    #[bridge(skip)]
    pub owner: String,
    #[bridge(text, id = "recipient", label = "Recipient")]
    pub recipient: String,
}

#[bridge_actions]
impl ConfirmOrder {
    /// Place the order.
    #[bridge_action(destructive)]
    pub fn confirm(&mut self, cx: &mut ActionContext) {
        cx.update::<OrderEditor>(self.owner.clone(), |e| {
            e.placed = true;
            e.revalidate();
        });
        cx.close();
    }

    /// Close without placing the order.
    #[bridge_action(idempotent)]
    pub fn cancel(&mut self, cx: &mut ActionContext) {
        cx.close();
    }
}

/// One report row.
#[derive(BridgeRow, Clone, Serialize, JsonSchema)]
pub struct ReportRow {
    /// Order number.
    pub order: u32,
    /// Customer.
    pub customer: String,
}

/// A page of rows.
#[derive(Serialize, JsonSchema)]
pub struct RowsPage {
    /// First row's index.
    pub offset: u64,
    /// The rows.
    pub rows: Vec<ReportRow>,
}

/// Window "Report Details": a table paged by `load_rows` (GB-9).
#[bridge_window(title = "Report Details", summary = "Report with {row_count} rows")]
pub struct ReportDetails {
    #[bridge(table, id = "rows", label = "Orders", max_rows = 5)]
    pub rows: Vec<ReportRow>,
    #[bridge(skip)]
    pub row_count: usize,
}

impl ReportDetails {
    fn new(n: usize) -> Self {
        let rows: Vec<ReportRow> =
            (0..n).map(|i| ReportRow { order: 100 + i as u32, customer: format!("c{i}") }).collect();
        Self { row_count: rows.len(), rows }
    }
}

#[bridge_actions]
impl ReportDetails {
    /// Load a page of rows.
    #[bridge_action(title = "Load rows", read_only, idempotent)]
    pub fn load_rows(
        &mut self,
        #[bridge(description = "First row, 0-based")] offset: u64,
        #[bridge(description = "How many rows, 1 to 100")] limit: u32,
    ) -> Result<RowsPage, ActionError> {
        if !(1..=100).contains(&limit) {
            return Err(ActionError::field("limit", "Must be between 1 and 100"));
        }
        if offset > self.rows.len() as u64 {
            return Err(ActionError::field("offset", "Past the last row"));
        }
        let start = offset as usize;
        let end = (start + limit as usize).min(self.rows.len());
        Ok(RowsPage { offset, rows: self.rows[start..end].to_vec() })
    }

    /// Close the report.
    #[bridge_action(destructive)]
    pub fn close(&mut self, cx: &mut ActionContext) {
        cx.close();
    }
}

/// App-level modal "Session locked".
#[bridge_window(title = "Session locked", summary = "The session is locked")]
pub struct SessionLocked {
    #[bridge(notice, id = "locked", severity = "warn")]
    pub message: String,
}

#[bridge_actions]
impl SessionLocked {
    /// Unlock the session.
    #[bridge_action]
    pub fn unlock(&mut self, cx: &mut ActionContext) {
        cx.close();
    }
}

/// The app itself: app-level actions.
#[derive(Default)]
pub struct OrderApp {
    /// Reports opened so far.
    pub reports: u32,
}

#[bridge_actions]
impl OrderApp {
    /// Open a new report window (at most 3).
    #[bridge_action(title = "New report")]
    pub fn new_report(&mut self, cx: &mut ActionContext) -> Result<(), ActionError> {
        if self.reports >= 3 {
            return Err(ActionError::not_available("At most 3 reports"));
        }
        self.reports += 1;
        cx.open_with(ReportDetails::new(3), OpenOptions::window().with_id(format!("报表 {}", self.reports)));
        Ok(())
    }

    /// Lock the session.
    #[bridge_action(title = "Lock session", idempotent)]
    pub fn lock(&mut self, cx: &mut ActionContext) {
        cx.open_app_modal(SessionLocked { message: "Locked; call unlock".into() });
    }
}

// ---------------------------------------------------------------------------------------------
// The parameter shapes app authors write (after examples/schema_zoo).

/// A user profile.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// Name shown.
    pub display_name: String,
    /// How to reach the user, flattened.
    #[serde(flatten)]
    pub contact: Contact,
    /// Preferred language; `null` when unset.
    pub language: Option<String>,
    /// Labels; omitted when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Age in years.
    #[schemars(range(min = 0, max = 150))]
    #[serde(default)]
    pub age: Option<u8>,
}

/// How to reach a user.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// E-mail address.
    #[schemars(length(min = 3, max = 64))]
    pub email: String,
    /// Phone; omitted when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

/// How urgent.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever.
    Low,
    /// This week.
    Normal,
    /// Now.
    Urgent,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Color {
    Red,
    Green,
    Blue,
}

/// A shape, externally tagged.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius, > 0.
        radius: f64,
    },
    /// A rectangle.
    Rectangle {
        /// Width.
        width: f64,
        /// Height.
        height: f64,
    },
    /// A point.
    Point,
}

/// A payment, internally tagged.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Payment {
    /// A card.
    Card {
        /// Last four digits.
        last4: String,
        /// Holder.
        holder: Option<String>,
    },
    /// Cash.
    Cash,
}

/// An amount, untagged.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(untagged)]
pub enum Amount {
    /// Cents.
    Cents(i64),
    /// Text such as "12.50".
    Text(String),
    /// Units and cents.
    Parts {
        /// Units.
        units: i64,
        /// Cents, 0 to 99.
        cents: u8,
    },
}

/// A node of an outline (recursive).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
pub struct TreeNode {
    /// The label.
    pub label: String,
    /// Children.
    #[serde(default)]
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    fn depth(&self) -> usize {
        1 + self.children.iter().map(TreeNode::depth).max().unwrap_or(0)
    }

    fn mirrored(&self) -> TreeNode {
        TreeNode { label: self.label.clone(), children: self.children.iter().rev().map(TreeNode::mirrored).collect() }
    }
}

/// An RGB colour `[r, g, b]`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// Window "Schema zoo".
#[bridge_window(title = "Schema zoo", summary = summary)]
#[derive(Default)]
pub struct Zoo {
    /// The last thing an action did.
    #[bridge(text, id = "last", label = "Last call")]
    pub last: String,
    #[bridge(skip)]
    pub profile: Option<Profile>,
    #[bridge(skip)]
    pub values: BTreeMap<String, Value>,
}

impl Zoo {
    fn summary(&self) -> String {
        let who = self.profile.as_ref().map_or("nobody", |p| p.display_name.as_str());
        format!("Schema zoo: profile of {who}, {} values", self.values.len())
    }
}

#[bridge_actions]
impl Zoo {
    /// Save a profile.
    #[bridge_action(idempotent)]
    pub fn save_profile(
        &mut self,
        /// The profile.
        profile: Profile,
    ) -> Result<Profile, ActionError> {
        if profile.display_name.trim().is_empty() {
            return Err(ActionError::field("profile", "displayName cannot be empty"));
        }
        if !profile.contact.email.contains('@') {
            return Err(ActionError::field("profile", "email needs an @"));
        }
        self.last = "Saved a profile".into();
        self.profile = Some(profile.clone());
        Ok(profile)
    }

    /// Keep any JSON value under a key.
    #[bridge_action(idempotent)]
    pub fn store_value(
        &mut self,
        /// Where.
        key: String,
        value: Value,
    ) -> Result<(), ActionError> {
        if key.trim().is_empty() || key.len() > 32 {
            return Err(ActionError::field("key", "1 to 32 characters"));
        }
        if self.values.len() >= 8 && !self.values.contains_key(&key) {
            return Err(ActionError::not_available("At most 8 values"));
        }
        self.values.insert(key, value);
        self.last = "Stored a value".into();
        Ok(())
    }

    /// Combine a priority and a colour.
    #[bridge_action(read_only, idempotent)]
    pub fn tag(
        &self,
        /// Priority.
        priority: Priority,
        /// Colour, if any.
        color: Option<Color>,
        /// Extra weight, 1 to 10.
        weight: Option<u8>,
    ) -> Result<String, ActionError> {
        if weight.is_some_and(|w| !(1..=10).contains(&w)) {
            return Err(ActionError::field("weight", "1 to 10"));
        }
        Ok(format!("{priority:?}/{color:?}"))
    }

    /// Area of a shape.
    #[bridge_action(read_only, idempotent)]
    pub fn describe_shape(
        &self,
        /// The shape.
        shape: Shape,
    ) -> Result<f64, ActionError> {
        let ok =
            |v: f64| if v > 0.0 && v.is_finite() { Ok(v) } else { Err(ActionError::field("shape", "Must be > 0")) };
        Ok(match shape {
            Shape::Circle { radius } => std::f64::consts::PI * ok(radius)?.powi(2),
            Shape::Rectangle { width, height } => ok(width)? * ok(height)?,
            Shape::Point => 0.0,
        })
    }

    /// Take a payment.
    #[bridge_action(read_only)]
    pub fn pay(
        &self,
        /// How.
        payment: Payment,
    ) -> Result<String, ActionError> {
        match payment {
            Payment::Card { last4, .. } if last4.len() != 4 || !last4.bytes().all(|b| b.is_ascii_digit()) => {
                Err(ActionError::field("payment", "last4 must be four digits"))
            }
            Payment::Card { .. } => Ok("card".into()),
            Payment::Cash => Ok("cash".into()),
        }
    }

    /// An amount in cents.
    #[bridge_action(read_only, idempotent)]
    pub fn parse_amount(
        &self,
        /// Cents, text or parts.
        amount: Amount,
    ) -> Result<i64, ActionError> {
        match amount {
            Amount::Cents(c) => Ok(c),
            Amount::Text(t) => {
                t.trim().parse::<i64>().map_err(|_| ActionError::field("amount", "Not a whole number of cents"))
            }
            Amount::Parts { units, cents } if cents < 100 => units
                .checked_mul(100)
                .and_then(|u| u.checked_add(cents.into()))
                .ok_or_else(|| ActionError::field("amount", "Too large")),
            Amount::Parts { .. } => Err(ActionError::field("amount", "cents must be below 100")),
        }
    }

    /// Mirror an outline.
    #[bridge_action(read_only, idempotent)]
    pub fn mirror_tree(
        &self,
        /// The outline.
        tree: TreeNode,
    ) -> Result<TreeNode, ActionError> {
        if tree.depth() > 32 {
            return Err(ActionError::field("tree", "At most 32 levels"));
        }
        Ok(tree.mirrored())
    }

    /// What to order so every item reaches `minimum`.
    #[bridge_action(read_only, idempotent)]
    pub fn restock(
        &self,
        /// Units per item.
        stock: BTreeMap<String, u32>,
        /// The least every item should have.
        minimum: u32,
        /// Items to leave out.
        except: Option<Vec<String>>,
    ) -> BTreeMap<String, u32> {
        let except = except.unwrap_or_default();
        stock.into_iter().filter(|(k, n)| *n < minimum && !except.contains(k)).map(|(k, n)| (k, minimum - n)).collect()
    }

    /// Mix two colours.
    #[bridge_action(read_only, idempotent)]
    pub fn mix(
        &self,
        /// One colour.
        a: Rgb,
        /// The other.
        b: Rgb,
    ) -> Rgb {
        let half = |x: u8, y: u8| ((u16::from(x) + u16::from(y)) / 2) as u8;
        Rgb(half(a.0, b.0), half(a.1, b.1), half(a.2, b.2))
    }
}
