//! The `function-hcl-ls` binary: the language server the function-hcl editor extensions
//! start (`function-hcl-ls serve`); see [`fn_hcl::lsp`].

/// The same allocator as `fn-hcl` (mimalloc under the counting wrapper).
#[global_allocator]
static ALLOC: fn_hcl::cli::bench::CountingAlloc = fn_hcl::cli::bench::CountingAlloc;

fn main() -> std::process::ExitCode {
    fn_hcl::lsp::ls_main()
}
