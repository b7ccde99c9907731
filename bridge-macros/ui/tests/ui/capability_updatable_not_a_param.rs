use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// Shows a progress bar the caller keeps updating.
    #[bridge_action(id = "progress.show", version = "0.1.0", kind = "progress", updatable = ["label", "percent"])]
    fn progress_show(label: String, value: f64) {}
}

fn main() {}
