//! The Order Editor app of GB Appendix A, written as an app author would: plain Rust types
//! annotated with bridge's macros. Nothing here knows about MCP.

use bridge_runtime::prelude::*;

/// The order form: one `fields` block. The payment password is redacted before it leaves the
/// process (GB-4.5-2): it is a `Secret` and its item is `sensitive`; it is changed only through
/// `set_payment_password`, whose parameter is sensitive too, so the journal masks it.
#[derive(BridgeFields, Default, Clone)]
pub struct OrderForm {
    /// Who receives the order.
    pub recipient: String,
    /// Order amount, in dollars.
    pub amount: String,
    #[bridge(label = "Payment password", sensitive)]
    pub payment_password: Secret<String>,
}

/// One product line of the order.
#[derive(BridgeRow, Clone)]
pub struct Product {
    #[bridge(label = "Product")]
    pub name: String,
    pub quantity: u32,
    #[bridge(label = "Unit price")]
    pub unit_price: String,
}

/// Window "Order Editor" (GB Appendix A, window A). Its value is copied before each agent
/// change, so the user can take the agent's last change back (`Ui::undo`).
#[derive(Clone)]
#[bridge_window(title = "Order Editor", summary = summary, undo)]
pub struct OrderEditor {
    #[bridge(fields, id = "order", label = "Order")]
    pub form: OrderForm,
    #[bridge(table, id = "products")]
    pub products: Vec<Product>,
    #[bridge(notice, id = "status")]
    pub status: Vec<Notice>,
    #[bridge(skip)]
    pub order_no: u32,
    #[bridge(skip)]
    pub placed: bool,
    /// How many times the payment password was changed: shown as a notice, so each change is a
    /// change of the window's state (its `version` moves, other agents get `stale_state`)
    /// without showing anything of the password.
    #[bridge(skip)]
    pub password_changes: u32,
    /// Only the user confirms orders: "Confirm order" opens with `confirm` as the user's alone
    /// ([`set_user_confirms`]).
    #[bridge(skip)]
    pub user_confirms: bool,
}

impl OrderEditor {
    /// The editor as it opens: recipient empty, amount $100.00, a password set by the user.
    pub fn new(order_no: u32) -> Self {
        let mut editor = Self {
            form: OrderForm {
                recipient: String::new(),
                amount: "$100.00".into(),
                payment_password: Secret::new("hunter2-s3cret".into()),
            },
            products: vec![
                Product { name: "Desk lamp".into(), quantity: 2, unit_price: "$30.00".into() },
                Product { name: "Notebook".into(), quantity: 4, unit_price: "$10.00".into() },
            ],
            status: Vec::new(),
            order_no,
            placed: false,
            password_changes: 0,
            user_confirms: false,
        };
        editor.revalidate();
        editor
    }

    /// The one-line summary the window shows agents (and the GUI, as its heading).
    pub fn summary(&self) -> String {
        if self.placed {
            return format!("Order #{} for {} was placed", self.order_no, self.form.recipient);
        }
        match self.form.recipient.as_str() {
            "" => format!("Editing order #{}, recipient not yet filled in", self.order_no),
            r => format!("Editing order #{} for {r}, amount {}", self.order_no, self.form.amount),
        }
    }

    /// The form's problems as `(parameter, message)`, also shown as error notices (GB-4.3-4).
    pub fn problems(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        if self.form.recipient.trim().is_empty() {
            out.push(FieldError::new("recipient", "Recipient cannot be empty"));
        }
        match parse_dollars(&self.form.amount) {
            Some(a) if a > 0.0 => {}
            Some(_) => out.push(FieldError::new("amount", "Amount must be greater than 0")),
            None => out.push(FieldError::new("amount", "Amount must be a number such as $100.00")),
        }
        out
    }

    /// Recomputes the status notices from the form (after every change to it).
    pub fn revalidate(&mut self) {
        self.status = if self.placed {
            vec![Notice::success(format!("Order #{} placed", self.order_no))]
        } else {
            let mut notices: Vec<Notice> = self.problems().into_iter().map(|p| Notice::error(p.error)).collect();
            if self.password_changes > 0 {
                notices.push(Notice::info(format!("Payment password changed (change {})", self.password_changes)));
            }
            notices
        };
    }

    fn editable(&self) -> bool {
        !self.placed
    }
}

/// Longest value `edit_field` accepts: a form field, not a document.
pub const MAX_FIELD_CHARS: usize = 200;

/// Parses `$1,234.50` or `1234.5` into dollars.
pub fn parse_dollars(s: &str) -> Option<f64> {
    s.trim().trim_start_matches('$').replace(',', "").parse::<f64>().ok().filter(|v| v.is_finite())
}

#[bridge_actions]
impl OrderEditor {
    /// Edit one field of the order form. `field` is a field's label ("Recipient") or key
    /// ("recipient"); `value` is the new text.
    #[bridge_action(title = "Edit field", idempotent, available = editable)]
    pub fn edit_field(
        &mut self,
        #[bridge(description = "The field's label or key, e.g. \"Recipient\" or \"amount\"")] field: String,
        #[bridge(description = "The new value, as the user would type it")] value: String,
        cx: &mut ActionContext,
    ) -> Result<(), ActionError> {
        // A secret never travels in `value`, which the journal records as sent.
        if OrderForm::field_specs()
            .iter()
            .any(|f| f.sensitive && (f.key.eq_ignore_ascii_case(&field) || f.label.eq_ignore_ascii_case(&field)))
        {
            return Err(ActionError::field("field", "The payment password is the user's to enter, in the app"));
        }
        if value.chars().count() > MAX_FIELD_CHARS {
            return Err(ActionError::field("value", format!("At most {MAX_FIELD_CHARS} characters")));
        }
        self.form.set_field(&field, serde_json::Value::String(value)).map_err(|e| ActionError::field("field", e))?;
        self.revalidate();
        cx.set_message(format!("Set {field}"));
        Ok(())
    }

    /// Set the payment password (kept secret). The user's alone: never a tool, so an agent can
    /// neither see nor set it; the app's password field calls it as the user.
    #[bridge_action(title = "Set password", available = editable, user_only)]
    pub fn set_payment_password(
        &mut self,
        #[bridge(sensitive)] password: String,
        cx: &mut ActionContext,
    ) -> Result<(), ActionError> {
        if password.is_empty() || password.chars().count() > MAX_FIELD_CHARS {
            return Err(ActionError::field("password", format!("1 to {MAX_FIELD_CHARS} characters")));
        }
        self.form.payment_password = Secret::new(password);
        // Every change counts, the same password again too: whether the version moves must not
        // tell anyone what the password was.
        self.password_changes = self.password_changes.saturating_add(1);
        self.revalidate();
        cx.set_message("Payment password set");
        Ok(())
    }

    /// Submit the order. Invalid fields are rejected one by one; a valid order opens the
    /// "Confirm order" dialog, which then blocks this window until it is answered.
    #[bridge_action(destructive, available = editable)]
    pub fn submit(&mut self, cx: &mut ActionContext) -> Result<(), ActionError> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Err(ActionError::fields(problems));
        }
        let owner = cx.window_id().unwrap_or_default().to_owned();
        let dialog = ConfirmOrder {
            owner: owner.clone(),
            recipient: self.form.recipient.clone(),
            amount: self.form.amount.clone(),
            by_user: self.user_confirms,
        };
        let mut options = OpenOptions::modal_of(owner);
        if self.user_confirms {
            options = options.user_only_action("confirm");
        }
        cx.open_with(dialog, options);
        cx.set_message(if self.user_confirms {
            "Submitted; the user confirms the order in the app"
        } else {
            "Submitted; a confirmation dialog popped up"
        });
        Ok(())
    }

    /// Close the Order Editor window.
    #[bridge_action(destructive)]
    pub fn close(&mut self, cx: &mut ActionContext) {
        cx.close();
    }

    /// Bring the Order Editor to the front so the user sees what the agent works on.
    #[bridge_action(idempotent)]
    pub fn focus(&mut self, cx: &mut ActionContext) {
        cx.set_message("Order Editor is in front");
    }
}

/// Window-level modal "Confirm order", owned by the editor that opened it.
#[bridge_window(title = "Confirm order", summary = summary)]
pub struct ConfirmOrder {
    #[bridge(skip)]
    pub owner: String,
    /// Only the user confirms (its `confirm` is the user's alone): the summary says so.
    #[bridge(skip)]
    pub by_user: bool,
    #[bridge(text, id = "recipient", label = "Recipient")]
    pub recipient: String,
    #[bridge(text, id = "amount", label = "Amount")]
    pub amount: String,
}

impl ConfirmOrder {
    /// What the dialog asks, and who answers it.
    pub fn summary(&self) -> String {
        if self.by_user {
            format!("Waiting for the user to confirm the order for {}, amount {}", self.recipient, self.amount)
        } else {
            format!("Confirm the order for {}, amount {}?", self.recipient, self.amount)
        }
    }
}

/// Makes "Confirm order" the user's alone (`on`) or anyone's again, in every Order Editor and in
/// every open "Confirm order" dialog: a run-time switch (the egui app's "Only I confirm orders",
/// `order_editor --user-confirms`). The user then confirms in the app; an agent calling
/// `{winId}__confirm` gets `action_not_available`. `actor` is who switched it (the user in the
/// egui app, the app's own code at start-up), as the journal records it.
pub fn set_user_confirms(ui: &mut Ui, actor: bridge_runtime::gui::Actor, on: bool) {
    let editors: Vec<String> = ui.windows_of::<OrderEditor>().map(|(id, _)| id.to_owned()).collect();
    for id in editors {
        ui.edit_as::<OrderEditor, _>(actor.clone(), &id, |e, _| e.user_confirms = on);
    }
    let dialogs: Vec<String> = ui.windows_of::<ConfirmOrder>().map(|(id, _)| id.to_owned()).collect();
    for id in dialogs {
        ui.set_user_only(&id, Some("confirm"), on);
        ui.edit_as::<ConfirmOrder, _>(actor.clone(), &id, |d, _| d.by_user = on);
    }
}

#[bridge_actions]
impl ConfirmOrder {
    /// Place the order and close this dialog.
    #[bridge_action(destructive)]
    pub fn confirm(&mut self, cx: &mut ActionContext) {
        cx.update::<OrderEditor>(self.owner.clone(), |editor| {
            editor.placed = true;
            editor.revalidate();
        });
        cx.set_message("Order placed");
        cx.close();
    }

    /// Close this dialog without placing the order.
    #[bridge_action(idempotent)]
    pub fn cancel(&mut self, cx: &mut ActionContext) {
        cx.set_message("Cancelled; the order was not placed");
        cx.close();
    }
}

/// One row of the report.
#[derive(BridgeRow, Clone, Serialize, JsonSchema)]
pub struct ReportRow {
    #[bridge(label = "Order")]
    pub order: u32,
    pub customer: String,
    #[bridge(label = "Total ($)")]
    pub total: f64,
}

/// A page of report rows, the result of `load_rows`.
#[derive(Serialize, JsonSchema)]
pub struct RowsPage {
    /// Index of the first row returned.
    pub offset: u64,
    /// Number of rows in the whole report.
    pub total: u64,
    /// The rows, in order.
    pub rows: Vec<ReportRow>,
}

/// Window "Report Details" (GB Appendix A, window C): a large table whose state keeps only the
/// first rows and the total (GB-9-2); the rest comes through `load_rows` (GB-9-3).
#[bridge_window(title = "Report Details", summary = "Sales report with {row_count} orders")]
pub struct ReportDetails {
    #[bridge(table, id = "rows", label = "Orders", max_rows = 20)]
    pub rows: Vec<ReportRow>,
    #[bridge(skip)]
    pub row_count: usize,
}

impl ReportDetails {
    /// A report of `n` generated rows.
    pub fn new(n: usize) -> Self {
        let names = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Fatima", "Goro"];
        let rows: Vec<ReportRow> = (0..n)
            .map(|i| ReportRow {
                order: 10_000 + i as u32,
                customer: names[i % names.len()].to_owned(),
                total: ((i * 37) % 500) as f64 + 0.99,
            })
            .collect();
        Self { row_count: rows.len(), rows }
    }
}

#[bridge_actions]
impl ReportDetails {
    /// Load a page of report rows. Returns `{offset, total, rows}` in `result`.
    #[bridge_action(title = "Load rows", read_only, idempotent)]
    pub fn load_rows(
        &mut self,
        #[bridge(description = "Index of the first row (0-based)")] offset: u64,
        #[bridge(description = "How many rows, 1 to 1000")] limit: u32,
    ) -> Result<RowsPage, ActionError> {
        if !(1..=1000).contains(&limit) {
            return Err(ActionError::field("limit", "Must be between 1 and 1000"));
        }
        if offset > self.rows.len() as u64 {
            return Err(ActionError::field("offset", format!("The report has {} rows", self.rows.len())));
        }
        let start = offset as usize;
        let end = (start + limit as usize).min(self.rows.len());
        Ok(RowsPage { offset, total: self.rows.len() as u64, rows: self.rows[start..end].to_vec() })
    }

    /// Close this report window.
    #[bridge_action(destructive)]
    pub fn close(&mut self, cx: &mut ActionContext) {
        cx.close();
    }

    /// Bring this report to the front.
    #[bridge_action(idempotent)]
    pub fn focus(&mut self, cx: &mut ActionContext) {
        cx.set_message("Report Details is in front");
    }
}

/// App-level modal "Session locked" (`modal: true`, `ownerId: null`): while open, nothing else
/// is operable (GB-10.2).
#[bridge_window(title = "Session locked", summary = "The session is locked; unlock it to continue")]
pub struct SessionLocked {
    #[bridge(notice, id = "locked", severity = "warn")]
    pub message: String,
}

#[bridge_actions]
impl SessionLocked {
    /// Unlock the session and close this dialog.
    #[bridge_action]
    pub fn unlock(&mut self, cx: &mut ActionContext) {
        cx.set_message("Session unlocked");
        cx.close();
    }
}

/// The app itself: app-level actions `app__new_report` and `app__lock`.
#[derive(Default)]
pub struct OrderApp {
    /// How many reports `new_report` has opened.
    pub reports_opened: u32,
    /// Rows in each new report.
    pub report_rows: usize,
}

#[bridge_actions]
impl OrderApp {
    /// Open a new "Report Details" window; its id comes back in `openedWindowIds`.
    #[bridge_action(title = "New report")]
    pub fn new_report(&mut self, cx: &mut ActionContext) {
        self.reports_opened += 1;
        // The app's own id is not name-safe; the protocol sees a stable handle instead (GB-12.4-3).
        let id = format!("报表 {}", self.reports_opened + 1);
        cx.open_with(ReportDetails::new(self.report_rows), OpenOptions::window().with_id(id));
        cx.set_message("Opened a new report window");
    }

    /// Lock the session: opens the app-level modal "Session locked".
    #[bridge_action(title = "Lock session", idempotent)]
    pub fn lock(&mut self, cx: &mut ActionContext) {
        cx.open_app_modal(SessionLocked { message: "Locked by request; call unlock to continue".into() });
        cx.set_message("Session locked");
    }
}

/// Builds the app's bridge: registry, app-level actions, and the windows open at start
/// ("Order Editor" as `w-A`, "Report Details" as `w-C`, 10,000 rows).
pub fn build(report_rows: usize) -> bridge_runtime::BridgeBuilder {
    bridge_runtime::Bridge::builder("order-editor", env!("CARGO_PKG_VERSION"))
        .app(OrderApp { reports_opened: 0, report_rows })
        .window::<OrderEditor>()
        .window::<ConfirmOrder>()
        .window::<ReportDetails>()
        .window::<SessionLocked>()
        .instructions(format!(
            "This is the Order Editor example. Report windows hold {report_rows} rows; fetch them with load_rows."
        ))
}

/// Opens the start-up windows.
pub fn open_initial(ui: &mut Ui, report_rows: usize) {
    ui.open(OrderEditor::new(12345), OpenOptions::window().with_id("w-A"));
    ui.open(ReportDetails::new(report_rows), OpenOptions::window().with_id("w-C"));
}
