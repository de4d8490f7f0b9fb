//! The `fn-hcl` binary: see [`fn_hcl::cli`].

/// Counts allocations only while `fn-hcl bench` measures; otherwise one relaxed load per
/// allocation on top of mimalloc.
#[global_allocator]
static ALLOC: fn_hcl::cli::bench::CountingAlloc = fn_hcl::cli::bench::CountingAlloc;

fn main() -> std::process::ExitCode {
    fn_hcl::cli::main()
}
