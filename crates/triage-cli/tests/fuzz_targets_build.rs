//! The cargo-fuzz targets are a separate crate (`fuzz/`) that `cargo test --workspace` does not
//! build: when a wire type gains a field, they stop compiling and nobody notices until the
//! next fuzzing run. This test type-checks them (stable toolchain, no sanitizer needed).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn fuzz_targets_compile() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["check", "--quiet", "--bins", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        // Its own target directory: no wait on the lock of the one running this test.
        .env("CARGO_TARGET_DIR", root.join("fuzz/target"))
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "the fuzz targets do not compile:\n{}", String::from_utf8_lossy(&out.stderr));
}
