//! The body of a Markdown or HTML export as it is rendered: its head (the
//! title, the models) is only known once the whole branch is walked, so
//! the body goes a piece at a time into an unnamed scratch file, and is
//! copied out after the head. A session of a million entries is never
//! rendered into memory whole.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};

/// Rendered text held before it goes to the scratch file.
const HOLD: usize = 1 << 20;

/// Where the body went so far; the text still held is the sink's own.
#[derive(Default)]
pub(super) struct Spill {
    file: Option<BufWriter<File>>,
}

impl Spill {
    /// Moves `out` into the scratch file once it holds more than [`HOLD`]
    /// bytes, keeping its last two characters or more (the sinks look at
    /// how their text ends: a blank line, a newline).
    pub(super) fn take(&mut self, out: &mut String) -> std::io::Result<()> {
        if out.len() <= HOLD {
            return Ok(());
        }
        let mut cut = out.len() - 2;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(BufWriter::with_capacity(
                256 << 10,
                crate::fileops::scratch_file()?,
            )),
        };
        file.write_all(&out.as_bytes()[..cut])?;
        out.drain(..cut);
        Ok(())
    }

    /// [`Spill::take`] in the middle of rendering one block, where a
    /// failed write cannot be returned yet: the first error is kept in
    /// `failed` (and reported by the sink's next `pour`).
    pub(super) fn take_or_keep(&mut self, out: &mut String, failed: &mut Option<std::io::Error>) {
        if let Err(e) = self.take(out) {
            failed.get_or_insert(e);
        }
    }

    /// Writes the body: what went to the scratch file, then `rest`.
    pub(super) fn finish(self, rest: &str, w: &mut dyn Write) -> std::io::Result<()> {
        if let Some(f) = self.file {
            let mut f = f.into_inner().map_err(|e| e.into_error())?;
            f.seek(SeekFrom::Start(0))?;
            std::io::copy(&mut f, w)?;
        }
        w.write_all(rest.as_bytes())
    }
}

/// `s` in pieces of about [`HOLD`] bytes (cut at character boundaries):
/// a block of hundreds of megabytes is rendered a piece at a time, each
/// spilled before the next.
pub(super) fn pieces(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = rest.len().min(HOLD);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_comes_back_whole_and_in_order_with_its_end_held() {
        let mut spill = Spill::default();
        let mut out = String::new();
        let mut whole = String::new();
        for n in 0..3000 {
            let piece = format!("entry {n}: {}é\n\n", "x".repeat(n % 997));
            out.push_str(&piece);
            whole.push_str(&piece);
            spill.take(&mut out).unwrap();
            assert!(out.len() <= HOLD + 2000, "{}", out.len());
            assert!(out.ends_with("\n\n"));
        }
        let mut written = Vec::new();
        spill.finish(&out, &mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), whole);
    }
}
