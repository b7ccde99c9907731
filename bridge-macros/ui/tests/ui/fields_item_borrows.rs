use bridge_runtime::prelude::*;

#[derive(BridgeFields)]
struct Login<'a> {
    user: &'a str,
    remember: bool,
}

fn main() {}
