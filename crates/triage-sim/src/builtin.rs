//! Scenarios compiled into the binary, so `triage run cats-fifo` works anywhere.

/// (name, TOML text) of every built-in scenario.
pub const SCENARIOS: &[(&str, &str)] = &[
    ("cats-fifo", include_str!("../../../scenarios/cats-fifo.toml")),
    ("cats", include_str!("../../../scenarios/cats.toml")),
    ("bulk-bbr", include_str!("../../../scenarios/bulk-bbr.toml")),
    ("bench-dumbbell", include_str!("../../../scenarios/bench-dumbbell.toml")),
    ("eecn-dumbbell", include_str!("../../../scenarios/eecn-dumbbell.toml")),
    ("highrate-newreno", include_str!("../../../scenarios/highrate-newreno.toml")),
    ("cats-page-slow4g-quic", include_str!("../../../scenarios/cats-page-slow4g-quic.toml")),
    ("pcap-newreno-lossy", include_str!("../../../scenarios/pcap-newreno-lossy.toml")),
];

/// A built-in scenario by name (with or without `.toml`).
pub fn find(name: &str) -> Option<(&'static str, &'static str)> {
    let name = name.strip_suffix(".toml").unwrap_or(name);
    SCENARIOS.iter().copied().find(|(n, _)| *n == name)
}
