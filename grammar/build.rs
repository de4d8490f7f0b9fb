//! Generates the LR parser from `hcl.lalrpop` into OUT_DIR, where `lalrpop_mod!` in
//! `src/lib.rs` includes it as `/hcl.rs`.

fn main() {
    println!("cargo:rerun-if-changed=hcl.lalrpop");
    lalrpop::Configuration::new()
        .set_out_dir(std::env::var("OUT_DIR").expect("OUT_DIR"))
        .process_file("hcl.lalrpop")
        .expect("lalrpop grammar");
}
