//! The `fn-hcl` command line.

use clap::{Parser, Subcommand};

/// fn-hcl: a Crossplane composition function that runs the function-hcl DSL.
#[derive(Parser, Debug)]
#[command(name = "fn-hcl", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the Crossplane function over gRPC.
    Serve(crate::server::ServeArgs),
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => match crate::server::serve(args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("fn-hcl serve: {e}");
                1
            }
        },
    }
}
