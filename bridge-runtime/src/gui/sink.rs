//! A journal sink that writes a file: [`JsonLinesSink`].

use crate::gui::journal::{JournalEntry, JournalSink};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
mod owner_only;

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
    /// A write failed part-way and the part could not be cut off: the next line starts on a
    /// new line.
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
        owner_only::owner_only(&mut options);
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

impl JsonLinesSink {
    /// After a failed write of which `written` bytes reached the file: cuts them off again
    /// (the file's end is this line's end: appends are atomic per `write`); returns `error`.
    fn undo_partial(&mut self, written: usize, error: io::Error) -> io::Error {
        if written > 0 {
            let cut = self.file.metadata().map(|m| m.len().saturating_sub(written as u64));
            if cut.and_then(|len| self.file.set_len(len)).is_err() {
                self.torn = true;
            }
        }
        error
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
        // One `write` per line; a line cut short (disk full) is cut off the file again, so the
        // file never holds half a line (and when even that fails, the next line starts anew).
        let mut written = 0;
        while written < line.len() {
            match self.file.write(&line[written..]) {
                Ok(0) => return Err(self.undo_partial(written, io::ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.undo_partial(written, e)),
            }
        }
        self.torn = false;
        if self.sync_each {
            self.file.sync_data()?;
        }
        Ok(())
    }
}
