//! Keeping tool arguments out of logs: rmcp's debug and trace events print whole JSON-RPC
//! messages.

/// Whether an event or span may be logged without exposing what peers sent: `false` for
/// rmcp's own events and spans below `INFO`, `true` for everything else.
///
/// At `DEBUG` and `TRACE`, rmcp logs every message it reads and writes as it is (`received
/// request` with the `tools/call` arguments, `new event`, and any line it could not parse),
/// so `RUST_LOG=debug` would print a password passed as a `Secret` parameter (whose schema
/// says `writeOnly`) in plain text on stderr, although bridge never shows it anywhere else
/// (GB-4.5-2). bridge cannot redact them: rmcp formats the message itself. Install this
/// predicate as a filter in front of your subscriber instead; rmcp's `INFO` and louder events
/// (connections, cancellations, rejected requests) and every other crate's events still pass:
///
/// ```no_run
/// use std::io::IsTerminal;
/// use tracing_subscriber::prelude::*;
///
/// tracing_subscriber::registry()
///     // Colour codes only on a terminal: a log file or a host's pipe gets plain text.
///     .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal()))
///     .with(tracing_subscriber::EnvFilter::from_default_env())
///     .with(tracing_subscriber::filter::filter_fn(bridge_runtime::mcp::loggable))
///     .init();
/// ```
///
/// It is a plain function rather than a layer so that it fits any `tracing` stack
/// (`filter_fn`, a per-layer filter, your own `Layer::enabled`) without tying bridge to one
/// `tracing-subscriber` version. Leave it out only where the logs are as private as the
/// arguments.
///
/// It also drops rmcp's `WARN` "response error" event, which rmcp writes for every JSON-RPC
/// error it answers (an unknown method, a resource that does not exist, params rmcp could
/// not read), with the error's data: a peer writing garbage would fill the app's log with
/// warnings about its own mistakes. bridge's stdio transport logs those answers at `DEBUG`
/// instead (without their data), so bad peer input never logs above `DEBUG`.
pub fn loggable(metadata: &tracing::Metadata<'_>) -> bool {
    let target = metadata.target();
    let from_rmcp = target == "rmcp" || target.starts_with("rmcp::");
    if !from_rmcp {
        return true;
    }
    let fields = metadata.fields();
    let error_answer = *metadata.level() == tracing::Level::WARN
        && metadata.is_event()
        && fields.field("id").is_some()
        && fields.field("error").is_some();
    *metadata.level() <= tracing::Level::INFO && !error_answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::{Level, Metadata, callsite::Identifier, field::FieldSet, metadata::Kind};

    struct Site;
    impl tracing::Callsite for Site {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &Metadata<'_> {
            unreachable!("not registered")
        }
    }
    static SITE: Site = Site;

    fn meta(target: &'static str, level: Level) -> Metadata<'static> {
        Metadata::new("e", target, level, None, None, None, FieldSet::new(&[], Identifier(&SITE)), Kind::EVENT)
    }

    // rmcp's `warn!(%id, ?error, "response error")`, logged for every error answer.
    fn error_answer(level: Level) -> Metadata<'static> {
        const FIELDS: &[&str] = &["message", "id", "error"];
        Metadata::new(
            "e",
            "rmcp::service",
            level,
            None,
            None,
            None,
            FieldSet::new(FIELDS, Identifier(&SITE)),
            Kind::EVENT,
        )
    }

    // A peer's bad requests never log above DEBUG: rmcp's warning for each error it answers is
    // dropped; its other warnings stay.
    #[test]
    fn rmcps_error_answer_warning_is_not_loggable() {
        assert!(!loggable(&error_answer(Level::WARN)));
        assert!(loggable(&meta("rmcp::service", Level::WARN)));
        assert!(loggable(&meta("rmcp::service", Level::ERROR)));
    }

    #[test]
    fn rmcp_below_info_is_not_loggable_everything_else_is() {
        assert!(!loggable(&meta("rmcp::service", Level::DEBUG)));
        assert!(!loggable(&meta("rmcp::transport::async_rw", Level::TRACE)));
        assert!(!loggable(&meta("rmcp", Level::DEBUG)));
        assert!(loggable(&meta("rmcp::service", Level::INFO)));
        assert!(loggable(&meta("rmcp::service", Level::WARN)));
        assert!(loggable(&meta("rmcpx", Level::TRACE)));
        assert!(loggable(&meta("bridge_runtime::gui", Level::TRACE)));
    }
}
