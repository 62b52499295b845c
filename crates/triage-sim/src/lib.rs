//! triage-sim: a deterministic packet-level discrete-event simulator.
//!
//! Time is integer nanoseconds; events are ordered by (time, sequence). Every element keeps
//! at most a couple of pending events (links: one serialization end, one arrival; connections:
//! one timer). Each random component has its own ChaCha stream seeded from the scenario seed
//! and the component's name, so the same scenario and seed give the same run, byte for byte.
#![warn(missing_docs)]

pub mod app;
pub mod builtin;
pub mod document;
pub mod event;
pub mod experiments;
pub mod link;
pub mod loss;
pub mod pcap;
pub mod qlog;
pub mod queue;
pub mod recorder;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod scenario_browser;
pub mod scenario_ecn;
pub mod scenario_fields;
pub mod scenario_override;
pub mod scenario_paths;
pub mod scenario_resolved;
pub mod sim;
pub mod sweep;
pub mod topology;
pub mod trace;
pub mod units;

pub use sim::{FlowSpec, Network, NodeKind, Simulator};
