//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// The median of a non-empty list, as the crate computes it (`triage_sim::sweep::quantile`:
/// the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    triage_sim::sweep::quantile(&v, 0.5)
}

/// A dumbbell scenario of `pairs` long bulk flows (1 GB each, never done in the run):
/// `stop`, the bottleneck's `rate` over 5 ms, 1 Gbps access links; `flow_extra` is written in
/// every `[[flows]]` table (e.g. `start_jitter = "50ms"`).
pub fn long_flows_text(name: &str, stop: &str, pairs: usize, rate: &str, flow_extra: &str) -> String {
    let mut text = format!(
        "name = \"{name}\"\nstop = \"{stop}\"\n[topology]\nkind = \"dumbbell\"\npairs = {pairs}\n\
         bottleneck = {{ rate = \"{rate}\", delay = \"5ms\" }}\naccess = {{ rate = \"1Gbps\", delay = \"0ms\" }}\n"
    );
    for i in 0..pairs {
        text += &format!(
            "[[flows]]\nname = \"f{i}\"\nclient = \"s{i}\"\nserver = \"c{i}\"\n{flow_extra}\
             client_app = {{ kind = \"bulk\", size = \"1GB\" }}\n"
        );
    }
    text
}
