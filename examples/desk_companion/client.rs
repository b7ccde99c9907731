// The README's Rust program (section "From a Rust program"): a client of the desk companion
// that shows a notice and waits for it. bridge-runtime/tests/it/companion_client.rs keeps the
// two equal and runs this code against a real companion server.

use bridge_runtime::companion::protocol::{method, params::CreateParams};
use bridge_runtime::companion::{Client, CredentialProfile};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The socket, client id and key `companion pair --profile build-bot` saved.
    let profile = CredentialProfile::load("build-bot")?;
    // Checks the socket and who listens on it, agrees on the protocol version, authenticates.
    let mut client = Client::connect_with(&profile).await?;

    let mut notice = CreateParams::new("notice.show", 10_000);
    notice.params.insert("text".into(), "The build is green".into());
    let request = client.call::<method::RequestsCreate>(notice).await?;

    // Accepted is not done: wait until the request ends (at most 30 s).
    let done = client.wait(&request.request_id, Duration::from_secs(30)).await?;
    println!("{} ended {}", done.request_id, done.state.as_str());
    Ok(())
}
