fn main() {
    std::process::exit(fn_hcl::cli::run());
}
