//! [`BlockingClient`]: the [`Client`] for programs without an async runtime (the `companion`
//! CLI is one).

use super::{Client, ClientError, CredentialProfile};
#[cfg(feature = "cli")]
use super::{Reply, Waited};
use crate::catalog::Scope;
use crate::companion::model::RequestSnapshot;
use crate::companion::protocol::CompanionMethod;
use crate::companion::protocol::results::{Pairing, RuntimeDescription, Session};
use std::path::Path;
use std::time::Duration;

/// A [`Client`] that blocks the calling thread: the same checks, calls and errors, on a
/// single-threaded tokio runtime of its own. Not for use inside an async runtime (its
/// constructors return [`ClientError::Usage`] there): use [`Client`].
#[derive(Debug)]
pub struct BlockingClient {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

/// A runtime of the client's own, unless the caller already runs one.
fn runtime() -> Result<tokio::runtime::Runtime, ClientError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(ClientError::Usage("BlockingClient cannot block inside an async runtime; use Client".into()));
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClientError::Connection(format!("cannot start the client's runtime: {e}")))
}

impl BlockingClient {
    /// [`Client::connect`], blocking.
    pub fn connect(path: impl AsRef<Path>) -> Result<Self, ClientError> {
        let runtime = runtime()?;
        let client = runtime.block_on(Client::connect(path))?;
        Ok(Self { runtime, client })
    }

    /// [`Client::connect_default`], blocking.
    pub fn connect_default() -> Result<Self, ClientError> {
        let runtime = runtime()?;
        let client = runtime.block_on(Client::connect_default())?;
        Ok(Self { runtime, client })
    }

    /// [`Client::connect_with`], blocking.
    pub fn connect_with(profile: &CredentialProfile) -> Result<Self, ClientError> {
        let runtime = runtime()?;
        let client = runtime.block_on(Client::connect_with(profile))?;
        Ok(Self { runtime, client })
    }

    /// The async client inside.
    pub fn get_ref(&self) -> &Client {
        &self.client
    }

    /// [`Client::runtime`].
    pub fn runtime(&self) -> Option<&RuntimeDescription> {
        self.client.runtime()
    }

    /// [`Client::set_timeout`].
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.client.set_timeout(timeout);
    }

    /// [`Client::pair`], blocking.
    pub fn pair(&mut self, name: &str, scopes: &[Scope]) -> Result<Pairing, ClientError> {
        self.runtime.block_on(self.client.pair(name, scopes))
    }

    /// [`Client::authenticate`], blocking.
    pub fn authenticate(&mut self, profile: &CredentialProfile) -> Result<Session, ClientError> {
        self.runtime.block_on(self.client.authenticate(profile)).cloned()
    }

    /// [`Client::call`], blocking.
    pub fn call<M: CompanionMethod>(&mut self, params: M::Params) -> Result<M::Result, ClientError> {
        self.runtime.block_on(self.client.call::<M>(params))
    }

    /// [`Client::wait`], blocking.
    pub fn wait(&mut self, request_id: &str, within: Duration) -> Result<RequestSnapshot, ClientError> {
        self.runtime.block_on(self.client.wait(request_id, within))
    }
}

/// What the `companion` CLI needs besides: the answers as received, as it prints them.
#[cfg(feature = "cli")]
impl BlockingClient {
    /// [`Client::open`]: checked and connected, nothing sent yet (the CLI sends only what its
    /// command asks for).
    pub(crate) fn open(path: &Path, default_dir: bool) -> Result<Self, ClientError> {
        let runtime = runtime()?;
        let client = runtime.block_on(Client::open(path, default_dir))?;
        Ok(Self { runtime, client })
    }

    /// [`Client::request`], blocking.
    pub(crate) fn request<M: CompanionMethod>(
        &mut self,
        params: serde_json::Value,
        timeout: Duration,
    ) -> Result<Reply<M::Result>, ClientError> {
        self.runtime.block_on(self.client.request::<M>(params, timeout))
    }

    /// [`Client::wait_raw`], blocking.
    pub(crate) fn wait_raw(
        &mut self,
        id: &str,
        budget_ms: u64,
        after_revision: Option<u64>,
        cap_ms: Option<u64>,
    ) -> Result<Waited, ClientError> {
        self.runtime.block_on(self.client.wait_raw(id, budget_ms, after_revision, cap_ms))
    }
}
