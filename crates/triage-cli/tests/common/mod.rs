//! Helpers shared by the integration tests.

/// The median of a non-empty list, as the crate computes it (`triage_sim::sweep::quantile`:
/// the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    triage_sim::sweep::quantile(&v, 0.5)
}
