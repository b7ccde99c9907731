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
/// use tracing_subscriber::prelude::*;
///
/// tracing_subscriber::registry()
///     .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
///     .with(tracing_subscriber::EnvFilter::from_default_env())
///     .with(tracing_subscriber::filter::filter_fn(bridge_runtime::mcp::loggable))
///     .init();
/// ```
///
/// It is a plain function rather than a layer so that it fits any `tracing` stack
/// (`filter_fn`, a per-layer filter, your own `Layer::enabled`) without tying bridge to one
/// `tracing-subscriber` version. Leave it out only where the logs are as private as the
/// arguments.
pub fn loggable(metadata: &tracing::Metadata<'_>) -> bool {
    let target = metadata.target();
    let from_rmcp = target == "rmcp" || target.starts_with("rmcp::");
    !from_rmcp || *metadata.level() <= tracing::Level::INFO
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
