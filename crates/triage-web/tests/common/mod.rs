//! Shared by the integration tests that read the real recordings.

use std::path::PathBuf;

/// `../shared/data/pages` beside the project; a test that needs it fails loudly without it.
pub fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pages");
    assert!(
        dir.is_dir(),
        "test data folder {} is missing: these tests need ../shared/data/pages beside the project (see shared/data/README.md)",
        dir.display()
    );
    dir
}
