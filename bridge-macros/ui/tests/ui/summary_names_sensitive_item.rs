use bridge_runtime::prelude::*;

#[derive(BridgeFields)]
struct Credentials {
    user: String,
    #[bridge(sensitive)]
    password: String,
}

#[bridge_window(title = "Sign in", summary = "Signing in as {login.user} with {login.password}")]
struct SignIn {
    #[bridge(fields)]
    login: Credentials,
}

fn main() {}
