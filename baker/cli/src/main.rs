//! The `baker` command line: a thin shell over the `kiln_baker` library.

mod cli;
mod print;
mod view_cmd;
mod watch;

fn main() -> std::process::ExitCode {
    cli::main()
}

/// A command line that cannot be carried out as given (exit status 2).
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}
