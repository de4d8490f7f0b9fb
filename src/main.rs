//! The `fn-hcl` binary: see [`fn_hcl::cli`].

fn main() -> std::process::ExitCode {
    fn_hcl::cli::main()
}
