use bridge_runtime::prelude::*;

struct App<'a> {
    name: &'a str,
}

#[bridge_actions]
impl<'a> App<'a> {
    /// The app's name.
    #[bridge_action(read_only)]
    fn name(&self) -> String {
        self.name.to_owned()
    }
}

fn main() {}
