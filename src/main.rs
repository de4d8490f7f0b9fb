fn main() {
    eprintln!("fn-hcl: not yet wired");
    std::process::exit(2);
}
