//! The committed profile of the release build (`pgo/`): `pgo/build` applies it only when
//! rustc's LLVM is the one it was made for (`pgo/llvm-version`), and otherwise builds
//! without it, 3-18% slower per request. A toolchain upgrade therefore fails here until
//! `pgo/train` has made a profile for it.

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_profile_is_llvms_indexed_format_for_this_toolchains_llvm() {
    let pgo = Path::new(ROOT).join("pgo");
    let want = std::fs::read_to_string(pgo.join("llvm-version")).expect("pgo/llvm-version");
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    let text = String::from_utf8_lossy(&out.stdout);
    let have = text
        .lines()
        .find_map(|l| l.strip_prefix("LLVM version: "))
        .and_then(|v| v.split('.').next())
        .expect("rustc -vV names its LLVM version");
    assert_eq!(
        have,
        want.trim(),
        "rustc's LLVM is {have}, the profile's {}: run pgo/train",
        want.trim()
    );
    let profile = std::fs::read(pgo.join("fn-hcl.profdata")).expect("pgo/fn-hcl.profdata");
    // An indexed profile starts with LLVM's magic number, 0x8169666f72706cff, little-endian.
    assert_eq!(
        profile.get(..8),
        Some(&0x8169_666f_7270_6cffu64.to_le_bytes()[..]),
        "pgo/fn-hcl.profdata is not an indexed LLVM profile"
    );
}
