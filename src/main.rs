//! The `stridelab` binary: parse arguments, run the subcommand, map errors to exit codes.

#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    // A reader that stops early (`stridelab sim … | head`) ends the process by SIGPIPE, as it
    // ends `cat`: Rust ignores SIGPIPE by default, and every print would then panic.
    sigpipe::reset();
    let cli = match stridelab::cli::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match stridelab::cli::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
