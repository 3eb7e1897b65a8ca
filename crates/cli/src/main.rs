//! The `bloomlab` command; see the `bloomlab_cli` crate for what it does.
#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match bloomlab_cli::run(std::env::args_os(), &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            let code = e.exit_code();
            if matches!(e, bloomlab_cli::CliError::OutputClosed) {
                return ExitCode::SUCCESS;
            }
            if code == 0 {
                let _ = write!(out, "{e}");
            } else {
                eprintln!("bloomlab: {e}");
            }
            let _ = out.flush();
            ExitCode::from(code as u8)
        }
    }
}
