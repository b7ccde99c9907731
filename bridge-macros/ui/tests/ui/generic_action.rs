use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Set any value.
    #[bridge_action]
    fn set<T: serde::de::DeserializeOwned>(&mut self, value: T) {
        let _ = value;
    }
}

fn main() {}
