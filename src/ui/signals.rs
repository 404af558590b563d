//! SIGTERM, SIGINT and SIGHUP while the screen is set up: the terminal is
//! restored first (by `runtime::restore_terminal`, the one place that undoes
//! the setup), then the process dies of the signal as it would have, so a
//! shell sees the usual status (128 + the signal). Outside the screen (e.g.
//! while a resumed agent runs) the signals keep their default effect.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::app::AppEvent;

/// Whether the terminal is in raw mode and the alternate screen.
static SCREEN_ON: AtomicBool = AtomicBool::new(false);
/// The signal received while the screen was on (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Wakes the event loop, which then leaves, restores and dies.
static WAKE: Mutex<Option<Sender<AppEvent>>> = Mutex::new(None);

/// How long the event loop has to restore the terminal before the signal
/// thread does it (the loop could be stuck writing to a terminal gone away).
const GRACE: Duration = Duration::from_secs(1);

/// Starts catching the signals (once per process).
pub fn install() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
                Ok(mut signals) => {
                    std::thread::spawn(move || {
                        for sig in signals.forever() {
                            on_signal(sig);
                        }
                    });
                }
                Err(e) => arbor_util::log::line(format!(
                    "signals: cannot catch SIGTERM, SIGINT and SIGHUP ({e})"
                )),
            }
        });
    }
}

/// The screen is up (raw mode) or restored: a signal then restores it
/// first, and the log keeps off stderr meanwhile.
pub fn set_screen(on: bool) {
    SCREEN_ON.store(on, Ordering::SeqCst);
    arbor_util::log::on_screen(on);
}

/// Whether the screen is up (see [`set_screen`]).
pub fn screen_on() -> bool {
    SCREEN_ON.load(Ordering::SeqCst)
}

pub fn set_wake(tx: Option<Sender<AppEvent>>) {
    if let Ok(mut w) = WAKE.lock() {
        *w = tx;
    }
}

/// Whether a signal asked the event loop to stop.
pub fn received() -> bool {
    RECEIVED.load(Ordering::SeqCst) != 0
}

/// Called once the terminal is restored: dies of the signal received
/// while it was not.
pub fn die_if_received() {
    let sig = RECEIVED.load(Ordering::SeqCst);
    if sig != 0 {
        die(sig);
    }
}

#[cfg(unix)]
fn on_signal(sig: i32) {
    if !SCREEN_ON.load(Ordering::SeqCst) {
        die(sig);
    }
    RECEIVED.store(sig, Ordering::SeqCst);
    let woke = WAKE
        .lock()
        .ok()
        .and_then(|w| {
            w.as_ref()
                .map(|tx| tx.send(AppEvent::Tick(super::runtime::now_ms())).is_ok())
        })
        .unwrap_or(false);
    if woke {
        std::thread::sleep(GRACE);
    }
    // Still here: the loop did not get to it. Restore from this thread,
    // without waiting for ever on a terminal that may not answer.
    let restorer = std::thread::spawn(super::runtime::restore_terminal);
    let deadline = Instant::now() + GRACE;
    while !restorer.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    die(sig);
}

fn die(sig: i32) -> ! {
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::emulate_default_handler(sig);
    }
    std::process::exit(128 + sig)
}
