//! Reproductions of the seed papers' experiments, as library functions the command line
//! (`triage reproduce ...`) and the tests share.

pub mod cats;
pub mod eecn;
pub mod emulator_losses;
pub mod partial;
pub mod priority_bucket;
pub mod quic;
pub mod reference_runs;
