//! The `arbor` binary: parses the command line, runs it, prints an error
//! as one sanitized line.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use clap::Parser;

// Listing 10,000 sessions from the index allocates and frees many small
// rows across threads; mimalloc measured faster than the system allocator
// for exactly that (see README, "Benchmarks").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = arbor::cli::Cli::parse();
    if let Err(e) = arbor::cli::run(cli) {
        // A closed pipe (`arbor list | head`) is not an error worth a message.
        let broken_pipe = e
            .chain()
            .filter_map(|c| c.downcast_ref::<std::io::Error>())
            .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
        if broken_pipe {
            std::process::exit(0);
        }
        // `arbor search` found nothing: status 1 and no message, like grep.
        if e.downcast_ref::<arbor::cli::NoMatch>().is_some() {
            std::process::exit(1);
        }
        // Messages quote paths, ids and file names: never raw on a terminal.
        eprintln!(
            "arbor: {}",
            arbor::util::term::sanitize_block(&format!("{e:#}"))
        );
        std::process::exit(1);
    }
}
