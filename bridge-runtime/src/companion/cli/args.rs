//! The command line (clap derive), CP-6-1 and OQ-CP-19.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// `companion`: a client of the desktop companion runtime over its Unix socket (CP-1-4, CP §6).
/// The `--help` text below is the user-facing reference.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "companion",
    version,
    about = "Talk to the desktop companion running on this computer.",
    long_about = "Talk to the desktop companion running on this computer: discover what it can show, \
ask it to show notices, progress, animations or questions, and follow those requests.\n\n\
Credentials come only from a credential profile written by `companion pair` (never from the \
command line or a request file).\n\n\
Environment:\n  COMPANION_SOCKET      the companion's socket, when neither --socket nor the profile names one\n  \
COMPANION_CONFIG_DIR  where profiles live (else $XDG_CONFIG_HOME/companion, else ~/.config/companion)\n\n\
Exit codes:\n  0  success (also: a request that is still running, for get)\n  \
2  invalid parameters or usage\n  3  authentication, permission or credential-profile problem\n  \
4  cannot connect to the companion\n  5  the request failed, or the companion refused it (busy, hidden, not found)\n  \
6  the request was cancelled or expired\n  7  the wait ended while the request is still running",
    max_term_width = 100
)]
pub(super) struct Cli {
    /// Machine mode: stdout carries exactly one JSON value; diagnostics go to stderr.
    #[arg(long, global = true)]
    pub json: bool,
    /// The credential profile to use (a file under the profiles directory). Needed when several
    /// profiles exist; never chosen by privilege.
    #[arg(long, global = true, value_name = "NAME")]
    pub credential_profile: Option<String>,
    /// The runtime's socket (default: the profile's, then $COMPANION_SOCKET, then
    /// $XDG_RUNTIME_DIR/bridge-companion/companion.sock).
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command groups.
#[derive(Debug, Clone, Subcommand)]
pub(super) enum Command {
    /// The runtime itself.
    #[command(subcommand)]
    Runtime(RuntimeCommand),
    /// The characters.
    #[command(subcommand)]
    Characters(ListCommand),
    /// The capabilities.
    #[command(subcommand)]
    Capabilities(CapabilitiesCommand),
    /// The styles.
    #[command(subcommand)]
    Styles(ListCommand),
    /// Requests: create, follow, cancel, update.
    #[command(subcommand)]
    Requests(RequestsCommand),
    /// Pair this machine's user with the runtime: the app asks the user to confirm, then the
    /// credentials are written to a profile file (mode 0600). The key is never printed.
    Pair(PairArgs),
}

/// `runtime …`.
#[derive(Debug, Clone, Subcommand)]
pub(super) enum RuntimeCommand {
    /// Implementation, protocol version, limits, authorisation state (`runtime.describe`). Works
    /// without a profile: unauthenticated unless one is named or only one exists.
    Describe {
        /// A protocol version this client speaks (repeatable); none in common → exit 2.
        #[arg(long = "protocol-version", value_name = "VERSION")]
        protocol_versions: Vec<String>,
    },
}

/// `characters list`, `styles list`.
#[derive(Debug, Clone, Subcommand)]
pub(super) enum ListCommand {
    /// List them.
    List,
}

/// `capabilities …`.
#[derive(Debug, Clone, Subcommand)]
pub(super) enum CapabilitiesCommand {
    /// Every capability this profile may use (all pages).
    List,
    /// One capability's full contract.
    Describe {
        /// The capability id, e.g. `interaction.choose`.
        id: String,
    },
}

/// `requests …`.
#[derive(Debug, Clone, Subcommand)]
pub(super) enum RequestsCommand {
    /// Create a request from a JSON file of `requests.create` params (never credentials).
    /// Success only means accepted.
    Create {
        /// The params file (`-` = stdin).
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// The request's current snapshot.
    Get {
        /// The request id.
        id: String,
    },
    /// Wait until the request ends (or, with --after-revision, until it changes), at most
    /// --wait-ms. Exit 7 if it is still running then.
    Wait {
        /// The request id.
        id: String,
        /// Total time to wait, ms (default 30000; one call may not exceed the runtime's
        /// `maxWaitMs`).
        #[arg(long, value_name = "MS")]
        wait_ms: Option<u64>,
        /// Return at the first change after this revision instead of waiting for the end.
        #[arg(long, value_name = "N")]
        after_revision: Option<u64>,
    },
    /// Cancel the request.
    Cancel {
        /// The request id.
        id: String,
    },
    /// Update the request from a JSON file `{"expectedRevision", "params"?, "complete"?}`.
    Update {
        /// The request id.
        id: String,
        /// The update file (`-` = stdin).
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
}

/// `pair`.
#[derive(Debug, Clone, Args)]
pub(super) struct PairArgs {
    /// The name the app shows the user (1..64 characters).
    #[arg(long)]
    pub name: String,
    /// Comma-separated scopes to ask for: discover, animate, notify, interact.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    pub scopes: Vec<String>,
    /// The profile to write (letters, digits, `.`, `_`, `-`; 1..64).
    #[arg(long, value_name = "NAME")]
    pub profile: String,
    /// Replace an existing profile of that name.
    #[arg(long)]
    pub force: bool,
}
