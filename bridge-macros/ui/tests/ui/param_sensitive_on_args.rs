use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct Login {
    user: String,
    password: Secret<String>,
}

#[bridge_window(title = "Sign in")]
struct SignIn {
    #[bridge(text)]
    user: String,
}

#[bridge_actions]
impl SignIn {
    /// Sign in.
    #[bridge_action]
    fn login(&mut self, #[bridge(args, sensitive)] login: Login) {
        self.user = login.user;
    }
}

fn main() {}
