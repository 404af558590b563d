//! The terminal: set up for the screen (raw mode, the alternate screen,
//! mouse and bracketed paste), restored on leaving, a panic or a signal;
//! and its writer, which sends a frame in one write.

use std::io::Write;

use anyhow::{Context as _, Result};
use crossterm::clipboard::CopyToClipboard;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::ExecutableCommand;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

/// The terminal: stdout, or `/dev/tty` when stdout is captured (`--print`),
/// so that stdout carries only the chosen path.
pub(super) type Term = Terminal<CrosstermBackend<Box<dyn Write + Send>>>;

pub(super) fn tty_writer() -> Result<Box<dyn Write + Send>> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        Ok(Box::new(std::io::stdout()))
    } else {
        let tty = crate::term::open_tty(false).context(
            "no terminal to draw on (stdout is not a terminal and /dev/tty cannot be opened)",
        )?;
        Ok(Box::new(tty))
    }
}

/// `mouse`: capture the mouse (off, the terminal's own selection works
/// and arbor never asks for mouse reports).
pub(super) fn setup_terminal(mouse: bool) -> Result<Term> {
    let mut w = tty_writer()?;
    crate::ui::signals::install();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_screen = crate::ui::signals::screen_on();
        restore_terminal();
        hook(info);
        // A thread of the screen's that panics (a loader that cannot start
        // its threads under a memory limit) left the loop waiting for it,
        // on a terminal restored under it: arbor ends instead.
        if on_screen {
            std::process::exit(101);
        }
    }));
    // An abort (an allocation failed) restores the terminal too.
    if let Some(fd) = tty_fd() {
        crate::abort::screen_entering(fd);
    }
    enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    // From here on a terminating signal restores the terminal first.
    crate::ui::signals::set_screen(true);
    // Bracketed paste: pasted text arrives as one event, not as keys (a
    // newline in it would be Enter, and resume a session).
    let modes = w
        .execute(EnterAlternateScreen)
        .and_then(|w| {
            if mouse {
                w.execute(EnableMouseCapture)
            } else {
                Ok(w)
            }
        })
        .and_then(|w| w.execute(EnableBracketedPaste));
    if let Err(e) = modes {
        restore_terminal();
        return Err(e).context("cannot set up the terminal");
    }
    crate::abort::fail_if_a_test_asks();
    let w: Box<dyn Write + Send> = Box::new(FrameWriter::new(w));
    Terminal::new(CrosstermBackend::new(w)).map_err(|e| {
        restore_terminal();
        anyhow::Error::from(e).context("cannot set up the terminal")
    })
}

/// The terminal's writer: a frame goes out in one write. Through stdout's
/// line buffer it was a write per kilobyte, after one of its own for the
/// synchronized update's start, each a wakeup of the terminal (and of a
/// pseudo-terminal's reader) before the frame was whole. What a panic
/// leaves buffered is dropped, not written once the terminal is restored.
struct FrameWriter(Option<std::io::BufWriter<Box<dyn Write + Send>>>);

impl FrameWriter {
    fn new(w: Box<dyn Write + Send>) -> FrameWriter {
        FrameWriter(Some(std::io::BufWriter::with_capacity(1 << 16, w)))
    }
}

impl Write for FrameWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.as_mut() {
            Some(w) => w.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for FrameWriter {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(w) = self.0.take() {
                // The bytes are let go unwritten.
                drop(w.into_parts());
            }
        }
    }
}

/// Leaves raw mode, the alternate screen and the modes arbor turned on;
/// safe to call twice. The one place that undoes `setup_terminal`: on
/// leaving, on a panic and on a terminating signal (see `signals`).
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    if let Ok(mut w) = tty_writer() {
        let _ = w.execute(DisableBracketedPaste);
        let _ = w.execute(DisableMouseCapture);
        let _ = w.execute(LeaveAlternateScreen);
        let _ = w.execute(crossterm::cursor::Show);
    }
    crate::ui::signals::set_screen(false);
    crate::abort::screen_left();
}

/// A descriptor of the terminal the screen is drawn on, open for the
/// process's life (the abort handler restores its settings through it).
#[cfg(unix)]
fn tty_fd() -> Option<i32> {
    use std::os::fd::AsRawFd;
    static TTY: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let tty = TTY.get_or_init(|| crate::term::open_tty(false).ok());
    match tty {
        Some(f) => Some(f.as_raw_fd()),
        None => {
            use std::io::IsTerminal;
            std::io::stdout().is_terminal().then_some(1)
        }
    }
}

#[cfg(not(unix))]
fn tty_fd() -> Option<i32> {
    None
}

/// Asks the terminal to put `text` on the clipboard (OSC 52).
pub(super) fn copy_osc52(text: &str) {
    if let Ok(mut w) = tty_writer() {
        let _ = w.execute(CopyToClipboard::to_clipboard_from(text));
    }
}

#[cfg(test)]
mod tests {
    /// The copy (`y` on a resent message) is crossterm's OSC 52 command:
    /// the clipboard selection, the text's UTF-8 bytes in standard base64.
    #[test]
    fn copy_is_osc52_to_the_clipboard() {
        use crossterm::Command as _;
        let mut s = String::new();
        super::CopyToClipboard::to_clipboard_from("Man ✓")
            .write_ansi(&mut s)
            .unwrap();
        assert_eq!(s, "\x1b]52;c;TWFuIOKckw==\x1b\\");
    }

    /// A frame is written at once when flushed; what a panic leaves
    /// buffered never reaches the terminal (restored by then).
    #[test]
    fn a_frame_goes_out_whole_and_a_panic_leaves_nothing_behind() {
        use std::io::Write;
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<usize>>>);
        impl Write for Sink {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().push(buf.len());
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let mut w = super::FrameWriter::new(Box::new(sink.clone()));
        for _ in 0..100 {
            w.write_all(&[b'x'; 60]).unwrap();
        }
        assert!(sink.0.lock().unwrap().is_empty());
        w.flush().unwrap();
        assert_eq!(*sink.0.lock().unwrap(), [6000], "one write");
        drop(w);

        let sink = Sink::default();
        let inner = sink.clone();
        let panicked = std::panic::catch_unwind(move || {
            let mut w = super::FrameWriter::new(Box::new(inner));
            w.write_all(b"half a frame").unwrap();
            panic!("while drawing");
        });
        assert!(panicked.is_err());
        assert!(sink.0.lock().unwrap().is_empty());
    }
}
