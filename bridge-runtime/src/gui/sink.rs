//! Where journal entries go besides memory: [`JournalSink`], and [`JsonLinesSink`], a file.

use crate::gui::journal::JournalEntry;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Keeps journal entries beyond the in-memory [`Journal`](crate::gui::Journal): an audit trail
/// ([`BridgeBuilder::journal_sink`](crate::gui::BridgeBuilder::journal_sink)).
///
/// **When.** Each entry is handed over *before* the operation's result returns to its caller,
/// under the UI's turn, in `seq` order: an agent that was told "done" can count on the entry
/// having been taken. A bounded queue drained by another thread would cost less per call but
/// loses its tail when the app crashes, and a crash right after an agent's change is exactly
/// when the record is wanted; so the write is synchronous and a slow sink slows every
/// operation (keep [`JournalSink::write`] to one buffered append; a file's `write` costs a few
/// microseconds, see BENCHMARKS.md).
///
/// **Repeats.** A run of identical rejections is one in-memory entry with a `count`; the sink
/// gets that entry again with the same `seq` and the new `count` on every repeat. A reader keeps
/// the last record of each `seq`.
///
/// **Failures.** When `write` fails, the entry waits in a backlog (at most
/// [`JournalLimits::max_entries`](crate::gui::JournalLimits::max_entries); past that the oldest
/// is dropped and counted in [`Journal::sink_dropped`](crate::gui::Journal::sink_dropped)), the
/// error is logged once and shown by [`Journal::sink_error`](crate::gui::Journal::sink_error),
/// and every **agent** call is refused with `action_not_available` before it runs ("The app
/// cannot record changes now; nothing was done.") until the sink takes the backlog again (each
/// agent call retries it first). The user's and the app's own operations go on and wait in the
/// backlog: the person in front of the app is never locked out by a full disk.
///
/// Implemented for closures `FnMut(&JournalEntry) -> io::Result<()>`.
pub trait JournalSink: Send + 'static {
    /// Keeps `entry`, or says why it could not (the entry is offered again later).
    fn write(&mut self, entry: &JournalEntry) -> io::Result<()>;
}

impl<F> JournalSink for F
where
    F: FnMut(&JournalEntry) -> io::Result<()> + Send + 'static,
{
    fn write(&mut self, entry: &JournalEntry) -> io::Result<()> {
        self(entry)
    }
}

/// A [`JournalSink`] that appends each entry to a file as one line of compact JSON (the
/// [`JournalEntry`] serialization), with one `write` per line on a file opened for appending:
/// lines from one process never interleave, and `logrotate`'s `copytruncate` works.
///
/// The file is created `0600` on Unix (an existing file keeps its mode). Each line reaches the
/// operating system before the operation's result returns, so it survives the app crashing;
/// with [`JsonLinesSink::sync_each`] it is also flushed to the disk (`fdatasync`) and survives
/// a power cut, at the cost of a disk flush per operation. The file grows without bound:
/// rotate it outside the app.
#[derive(Debug)]
pub struct JsonLinesSink {
    file: File,
    path: PathBuf,
    sync_each: bool,
    /// A write failed part-way: the next line starts on a new line.
    torn: bool,
}

impl JsonLinesSink {
    /// Opens `path` for appending, creating it (`0600` on Unix) when missing.
    ///
    /// # Errors
    /// The file cannot be opened or created (missing directory, permissions).
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        Ok(Self { file, path: path.to_owned(), sync_each: false, torn: false })
    }

    /// Whether each line is flushed to the disk before the operation returns (default `false`:
    /// it reaches the operating system, which survives the app crashing but not a power cut).
    pub fn sync_each(mut self, on: bool) -> Self {
        self.sync_each = on;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl JournalSink for JsonLinesSink {
    fn write(&mut self, entry: &JournalEntry) -> io::Result<()> {
        let mut line = Vec::with_capacity(512);
        if self.torn {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, entry).map_err(io::Error::other)?;
        line.push(b'\n');
        if let Err(e) = self.file.write_all(&line) {
            self.torn = true;
            return Err(e);
        }
        self.torn = false;
        if self.sync_each {
            self.file.sync_data()?;
        }
        Ok(())
    }
}
