//! The `baker` command line: a thin shell over the `kiln_baker` library.

mod cli;
mod print;
mod view_cmd;
mod watch;

fn main() -> std::process::ExitCode {
    cli::main()
}
