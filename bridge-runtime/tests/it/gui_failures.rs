//! Failures that say what happened: a result that cannot be encoded after its action ran is
//! reported as a success that says so, never as a call that did not run (GB-7.4-6, GB-7.4-7,
//! GB-12.3-4).

use bridge_runtime::prelude::*;
use bridge_runtime::testing::TestApp;
use serde_json::json;
use std::collections::HashMap;

/// A balance whose amount is a `u128` the macro cannot see in the return type.
#[derive(Serialize, JsonSchema)]
pub struct Balance {
    amount: u128,
}

/// A map keyed by pairs: serde_json cannot encode non-string keys.
#[derive(Serialize, JsonSchema)]
pub struct Grid {
    cells: HashMap<(u8, u8), String>,
}

#[bridge_window(title = "Ledger", summary = "{count} entries")]
pub struct Ledger {
    #[bridge(skip)]
    count: u32,
}

#[bridge_actions]
impl Ledger {
    /// Add an entry and return the new balance.
    #[bridge_action]
    pub fn add(&mut self) -> Balance {
        self.count += 1;
        Balance { amount: u128::from(u64::MAX) + u128::from(self.count) }
    }

    /// Add an entry and return the grid, saying so in the message too.
    #[bridge_action]
    pub fn add_grid(&mut self, cx: &mut ActionContext) -> Result<Grid, ActionError> {
        self.count += 1;
        cx.set_message("Added");
        Ok(Grid { cells: HashMap::from([((0, 0), "a".to_owned())]) })
    }

    /// The balance as it fits: encoded as usual.
    #[bridge_action(read_only)]
    pub fn small(&self) -> Balance {
        Balance { amount: 7 }
    }
}

/// GB-7.4-7, GB-12.3-4: the action ran, so the call succeeds; `result` is left out (never
/// `null`) and the message says the result could not be encoded and must not be fetched by
/// running the action again. Exactly one entry was added. (Old main: `action_not_available`
/// "could not be encoded", an error an agent retries, adding a second entry.)
#[test]
fn a_result_that_cannot_be_encoded_after_the_action_ran_is_a_success_that_says_so() {
    let mut app = TestApp::new(Bridge::builder("ledger", "1").window::<Ledger>(), |ui| {
        ui.open(Ledger { count: 0 }, OpenOptions::window());
    });
    let out = app.call("w-1__add", json!({})).expect_ok();
    assert_eq!(out.result, None);
    let message = out.message.expect("a message");
    assert!(message.contains("ran and took effect"), "{message}");
    assert!(message.contains("could not be encoded"), "{message}");
    assert!(message.contains("Do not run it again"), "{message}");
    assert_eq!(app.window("w-1").summary.as_deref(), Some("1 entries"));

    let out = app.call("w-1__add_grid", json!({})).expect_ok();
    assert_eq!(out.result, None);
    let message = out.message.expect("a message");
    assert!(message.starts_with("Added. The action ran and took effect"), "{message}");
    assert_eq!(app.window("w-1").summary.as_deref(), Some("2 entries"));

    let out = app.call("w-1__small", json!({})).expect_ok();
    assert_eq!(out.result, Some(json!({"amount": 7})));
    assert_eq!(out.message, None);
}
