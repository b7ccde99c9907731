use bridge_runtime::prelude::*;

struct Address {
    street: String,
}

#[bridge_window(title = "Customer")]
struct Customer {
    #[bridge(fields)]
    address: Address,
}

fn main() {}
