use bridge_runtime::prelude::*;

#[derive(BridgeFields)]
struct Credentials {
    user: String,
    password: String,
}

#[bridge_window(title = "Sign in", summary = "Signing in as {login.user}")]
struct SignIn {
    #[bridge(fields, sensitive)]
    login: Credentials,
}

fn main() {}
